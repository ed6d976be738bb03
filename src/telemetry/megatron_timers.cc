#include "telemetry/megatron_timers.h"

#include <re2/re2.h>

#include <cmath>
#include <string>

namespace primus::telemetry {
namespace {

// Milliseconds per iteration as Megatron prints them ("{:.2f}"), in seconds.
std::optional<double> SecondsFromMilliseconds(const std::string& text) {
  char* end = nullptr;
  double ms = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(ms) || ms < 0 || ms > 1e9) return std::nullopt;
  return ms / 1000;
}

}  // namespace

bool MegatronTimerBlock::Start(std::string_view line) {
  Shape shape = Shape::kNone;
  if (line.find("(min, max) time across ranks (ms):") != std::string_view::npos) {
    shape = Shape::kMinMax;
  } else if (line.find("max time across ranks (ms):") != std::string_view::npos) {
    shape = Shape::kMax;
  } else if (line.find("times across ranks (ms):") != std::string_view::npos) {
    shape = Shape::kAll;
  }
  if (shape == Shape::kNone) return false;
  shape_ = shape;
  parts_.clear();
  current_ = nullptr;
  return true;
}

StepTimePart* MegatronTimerBlock::PartNamed(std::string_view name) {
  for (StepTimePart& part : parts_) {
    if (part.name == name) return &part;
  }
  if (parts_.size() >= kMaxStepTimeParts) return nullptr;
  parts_.push_back(StepTimePart{std::string(name), 0, std::nullopt, std::nullopt});
  return &parts_.back();
}

bool MegatronTimerBlock::Feed(std::string_view line) {
  // The name is ljust(48, '.') after a space: "name ......: "; a name of 47
  // characters or more has no dots.
  static const RE2 min_max(R"(^\s+([A-Za-z0-9_.-]+) \.*: \(([0-9.]+), ([0-9.]+)\)\s*$)");
  static const RE2 max_only(R"(^\s+([A-Za-z0-9_.-]+) \.*: ([0-9.]+)\s*$)");
  static const RE2 all_name(R"(^  ([A-Za-z0-9_.-]+):\s*$)");
  static const RE2 all_rank(R"(^\s+rank\s+(\d{1,8}): ([0-9.]+)\s*$)");
  if (shape_ == Shape::kNone || line.size() > 512) return false;
  std::string name, first, second;
  if (shape_ == Shape::kMinMax && RE2::FullMatch(line, min_max, &name, &first, &second)) {
    std::optional<double> fastest = SecondsFromMilliseconds(first), slowest = SecondsFromMilliseconds(second);
    StepTimePart* part = PartNamed(name);
    if (part && fastest && slowest) part->seconds = *slowest, part->fastest_seconds = *fastest;
    return true;
  }
  if (shape_ == Shape::kMax && RE2::FullMatch(line, max_only, &name, &first)) {
    std::optional<double> slowest = SecondsFromMilliseconds(first);
    StepTimePart* part = PartNamed(name);
    if (part && slowest) part->seconds = *slowest;
    return true;
  }
  if (shape_ == Shape::kAll) {
    int rank = 0;
    if (RE2::FullMatch(line, all_name, &name)) {
      current_ = PartNamed(name);
      return true;
    }
    if (RE2::FullMatch(line, all_rank, &rank, &first)) {
      std::optional<double> seconds = SecondsFromMilliseconds(first);
      if (current_ && seconds && rank <= (1 << 24)) {
        if (!current_->slowest_rank || *seconds > current_->seconds) {
          current_->seconds = *seconds;
          current_->slowest_rank = rank;
        }
        if (!current_->fastest_seconds || *seconds < *current_->fastest_seconds) current_->fastest_seconds = *seconds;
      }
      return true;
    }
  }
  return false;
}

std::vector<StepTimePart> MegatronTimerBlock::Finish() {
  shape_ = Shape::kNone;
  current_ = nullptr;
  std::vector<StepTimePart> parts = std::move(parts_);
  parts_.clear();
  // A timer named with no figure that could be read says nothing.
  std::erase_if(parts, [](const StepTimePart& part) {
    return part.seconds == 0 && !part.fastest_seconds && !part.slowest_rank;
  });
  return parts;
}

}  // namespace primus::telemetry
