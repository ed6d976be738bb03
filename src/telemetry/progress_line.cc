#include "telemetry/progress_line.h"

#include <re2/re2.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <utility>

#include "util/strings.h"

namespace primus::telemetry {
namespace {

struct FormatName {
  ProgressFormat format;
  std::string_view name;
};
constexpr FormatName kFormatNames[] = {
    {ProgressFormat::kNone, "none"},         {ProgressFormat::kAuto, "auto"},
    {ProgressFormat::kPrimus, "primus"},     {ProgressFormat::kMegatron, "megatron"},
    {ProgressFormat::kTorchTitan, "torchtitan"}, {ProgressFormat::kHuggingFace, "hf"},
    {ProgressFormat::kNanoGpt, "nanogpt"},   {ProgressFormat::kRegex, "regex"},
};

// A number as the frameworks print it: "7.500000E+00", "1,234", "12.34",
// "nan". Thousands separators are dropped; nullopt for anything else, or
// for a value that is not finite.
std::optional<double> NumberIn(std::string_view text) {
  text = Trim(text);
  if (text.empty() || text.size() > 40) return std::nullopt;
  std::string digits;
  for (char c : text) {
    if (c != ',') digits.push_back(c);
  }
  std::optional<double> value = ParseDouble(digits);
  if (!value || !std::isfinite(*value)) return std::nullopt;
  return value;
}

// The number a value starts with: Primus's rewrite of Megatron's line gives
// "1187.6/1211.1" (instant/average), "128.3 (avg 125.9)", "45.50GB/146.50GB/...".
std::optional<double> LeadingNumber(std::string_view text) {
  text = Trim(text);
  size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.' ||
                               text[end] == ',' || text[end] == 'e' || text[end] == 'E' ||
                               ((text[end] == '+' || text[end] == '-') && (end == 0 || text[end - 1] == 'e' ||
                                                                           text[end - 1] == 'E')))) {
    ++end;
  }
  return NumberIn(text.substr(0, end));
}

// Counts and steps: whole, not negative, at most 2^53, digits only (no
// thousands separator: "500," ends a sentence, it is not a step).
std::optional<int64_t> CountIn(std::string_view text) {
  if (Trim(text).find(',') != std::string_view::npos) return std::nullopt;
  auto value = NumberIn(text);
  if (!value || *value < 0 || *value > 9007199254740992.0 || *value != std::floor(*value)) return std::nullopt;
  return static_cast<int64_t>(*value);
}

// "N/M" (Megatron pads both with spaces): the step and total steps into
// `metrics`, each when it is a count; false when there is no slash.
bool ReadStepOfTotal(std::string_view text, TrainingMetrics* metrics) {
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) return false;
  metrics->step = CountIn(text.substr(0, slash));
  metrics->total_steps = CountIn(text.substr(slash + 1));
  return true;
}

// Bytes from a framework's GiB or GB figure: not negative, at most 2^53.
std::optional<int64_t> GibibytesToBytes(double gib) {
  double bytes = gib * 1073741824.0;
  if (!(bytes >= 0) || bytes > 9007199254740992.0) return std::nullopt;
  return static_cast<int64_t>(bytes);
}

// The text of `line` after `key` up to the next `stop` character (or the end).
std::optional<std::string_view> ValueAfter(std::string_view line, std::string_view key, char stop) {
  size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + key.size());
  size_t end = rest.find(stop);
  return rest.substr(0, end);
}

// The first number after `key` (text in between may be spaces only).
std::optional<std::string_view> NumberTokenAfter(std::string_view line, std::string_view key) {
  size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  size_t i = at + key.size();
  while (i < line.size() && line[i] == ' ') ++i;
  size_t start = i;
  while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '.' || line[i] == ',' ||
                             line[i] == '+' || line[i] == '-')) {
    ++i;
  }
  if (i == start) return std::nullopt;
  std::string_view token = line.substr(start, i - start);
  while (!token.empty() && token.back() == ',') token.remove_suffix(1);  // "loss 4.1, time" in nanoGPT
  return token;
}

// Megatron-LM: " [date] iteration       10/     100 | consumed samples: ... |
// key: value | ...". The loss keys end in " loss" ("lm loss", "mtp_1 loss");
// "lm loss" is the loss, else the first one.
std::optional<TrainingMetrics> ReadMegatron(std::string_view line) {
  size_t at = line.find("iteration ");
  if (at == std::string_view::npos || line.find('|', at) == std::string_view::npos) return std::nullopt;
  std::string_view head = line.substr(at + 10, line.find('|', at) - at - 10);
  TrainingMetrics metrics;
  if (!ReadStepOfTotal(head, &metrics) || !metrics.step) return std::nullopt;
  std::optional<double> first_loss;
  for (std::string_view field : Split(line.substr(line.find('|', at) + 1), '|')) {
    size_t colon = field.rfind(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = Trim(field.substr(0, colon));
    std::optional<double> value = NumberIn(field.substr(colon + 1));
    if (!value) value = LeadingNumber(field.substr(colon + 1));
    if (!value) continue;
    if (key == "elapsed time per iteration (ms)") {
      if (*value >= 0) metrics.step_time_s = *value / 1000;
    } else if (key == "throughput per GPU (TFLOP/s/GPU)" || key == "compute per GPU (TFLOP/s/GPU)") {
      metrics.tflops_per_gpu = *value;
    } else if (key == "tokens/s/GPU inst/harmonic mean") {
      metrics.tokens_per_s = *value;  // Primus: this rank's tokens per second, as ours is
    } else if (key == "hip mem usage/free/total/usage_ratio") {
      metrics.memory_bytes = GibibytesToBytes(*value);
    } else if (key == "learning rate") {
      metrics.learning_rate = *value;
    } else if (key == "global batch size") {
      metrics.global_batch_size = CountIn(field.substr(colon + 1));
    } else if (key == "lm loss") {
      metrics.loss = *value;
    } else if (key.ends_with(" loss") && !first_loss) {
      first_loss = *value;
    } else if (key == "loss scale") {
      metrics.loss_scale = *value;
    } else if (key == "grad norm") {
      metrics.grad_norm = *value;
    } else if (key == "number of skipped iterations") {
      metrics.skipped_iterations = CountIn(field.substr(colon + 1));
    } else if (key == "number of nan iterations") {
      metrics.nan_iterations = CountIn(field.substr(colon + 1));
    }
  }
  if (!metrics.loss) metrics.loss = first_loss;
  if (metrics.global_batch_size && metrics.step_time_s && *metrics.step_time_s > 0) {
    metrics.samples_per_s = static_cast<double>(*metrics.global_batch_size) / *metrics.step_time_s;
  }
  return metrics;
}

// TorchTitan: "step: 10  loss:  7.5000  grad_norm:  1.2345  memory: 10.00GiB(12.34%)
// tps: 1,234  tflops: 12.34  mfu: 5.67%" (colours already removed).
std::optional<TrainingMetrics> ReadTorchTitan(std::string_view line) {
  size_t at = line.find("step: ");
  if (at == std::string_view::npos || line.find("loss: ", at) == std::string_view::npos) return std::nullopt;
  if (line.substr(0, at).ends_with("validate ")) return std::nullopt;  // log_validation's line, not a step
  std::string_view rest = line.substr(at);
  TrainingMetrics metrics;
  if (auto step = NumberTokenAfter(rest, "step:")) metrics.step = CountIn(*step);
  if (!metrics.step) return std::nullopt;
  if (auto loss = NumberTokenAfter(rest, "loss:")) metrics.loss = NumberIn(*loss);
  if (!metrics.loss) return std::nullopt;
  if (auto norm = NumberTokenAfter(rest, "grad_norm:")) metrics.grad_norm = NumberIn(*norm);
  if (auto tps = NumberTokenAfter(rest, "tps:")) metrics.tokens_per_s = NumberIn(*tps);
  if (auto tflops = NumberTokenAfter(rest, "tflops:")) metrics.tflops_per_gpu = NumberIn(*tflops);
  if (auto mfu = NumberTokenAfter(rest, "mfu:")) {
    if (auto percent = NumberIn(*mfu)) metrics.mfu = *percent / 100;
  }
  if (auto memory = ValueAfter(rest, "memory:", '(')) {
    std::string_view text = Trim(*memory);
    if (text.ends_with("GiB")) {
      if (auto gib = NumberIn(text.substr(0, text.size() - 3))) metrics.memory_bytes = GibibytesToBytes(*gib);
    }
  }
  return metrics;
}

// Hugging Face: "{'loss': 2.1, 'grad_norm': 1.3, 'learning_rate': 5e-05, 'epoch': 0.5}".
// The dict has no step: the caller counts the records.
std::optional<TrainingMetrics> ReadHuggingFace(std::string_view line) {
  size_t open = line.find("{'");
  if (open == std::string_view::npos) return std::nullopt;
  size_t close = line.find('}', open);
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view body = line.substr(open + 1, close - open - 1);
  TrainingMetrics metrics;
  for (std::string_view item : Split(body, ',')) {
    size_t colon = item.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = Trim(item.substr(0, colon));
    if (key.size() < 2 || key.front() != '\'' || key.back() != '\'') continue;
    key = key.substr(1, key.size() - 2);
    std::optional<double> value = NumberIn(item.substr(colon + 1));
    if (!value) continue;
    if (key == "loss") metrics.loss = *value;
    else if (key == "grad_norm") metrics.grad_norm = *value;
    else if (key == "learning_rate") metrics.learning_rate = *value;
    else if (key == "epoch") metrics.epoch = *value;
  }
  if (!metrics.loss) return std::nullopt;
  return metrics;
}

// nanoGPT: "iter 100: loss 4.1234, time 123.45ms, mfu 12.34%".
std::optional<TrainingMetrics> ReadNanoGpt(std::string_view line) {
  size_t at = line.find("iter ");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at);
  size_t colon = rest.find(": loss ");
  if (colon == std::string_view::npos) return std::nullopt;
  TrainingMetrics metrics;
  metrics.step = CountIn(rest.substr(5, colon - 5));
  if (auto loss = NumberTokenAfter(rest, ": loss ")) metrics.loss = NumberIn(*loss);
  if (!metrics.step || !metrics.loss) return std::nullopt;
  if (auto time = NumberTokenAfter(rest, "time ")) {
    std::string_view text = *time;
    if (text.ends_with("ms")) {
      if (auto ms = NumberIn(text.substr(0, text.size() - 2)); ms && *ms >= 0) metrics.step_time_s = *ms / 1000;
    }
  }
  if (auto mfu = NumberTokenAfter(rest, "mfu ")) {
    // -100% until nanoGPT has measured five iterations: not a figure.
    if (auto percent = NumberIn(*mfu); percent && *percent >= 0) metrics.mfu = *percent / 100;
  }
  return metrics;
}


// Our example trainer: "step 10/200 loss 4.5191 lr 3.00e-04 tok/s 33367 world 2".
// The total is required: "step 500, val loss 2.31" in someone's log is not a step line.
std::optional<TrainingMetrics> ReadPrimus(std::string_view line) {
  size_t at = line.find("step ");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + 5);
  size_t space = rest.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  TrainingMetrics metrics;
  if (!ReadStepOfTotal(rest.substr(0, space), &metrics) || !metrics.total_steps) return std::nullopt;
  if (auto loss = NumberTokenAfter(rest, " loss ")) metrics.loss = NumberIn(*loss);
  if (!metrics.step || !metrics.loss) return std::nullopt;
  if (auto lr = NumberTokenAfter(rest, " lr ")) metrics.learning_rate = NumberIn(*lr);
  if (auto rate = NumberTokenAfter(rest, " tok/s ")) metrics.tokens_per_s = NumberIn(*rate);
  return metrics;
}

// The user's pattern: each named group that is a field sets it.
std::optional<TrainingMetrics> ReadRegex(const re2::RE2& regex, std::string_view line) {
  int groups = regex.NumberOfCapturingGroups();
  std::vector<re2::StringPiece> pieces(static_cast<size_t>(groups) + 1);
  if (!regex.Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), re2::RE2::UNANCHORED, pieces.data(),
                   groups + 1)) {
    return std::nullopt;
  }
  TrainingMetrics metrics;
  for (const auto& [name, index] : regex.NamedCapturingGroups()) {
    const re2::StringPiece& piece = pieces[static_cast<size_t>(index)];
    if (piece.data() == nullptr) continue;
    std::string_view text(piece.data(), piece.size());
    if (name == "step") metrics.step = CountIn(text);
    else if (name == "total_steps") metrics.total_steps = CountIn(text);
    else if (name == "loss") metrics.loss = NumberIn(text);
    else if (name == "lr") metrics.learning_rate = NumberIn(text);
    else if (name == "tokens_per_s") metrics.tokens_per_s = NumberIn(text);
    else if (name == "step_time_s") metrics.step_time_s = NumberIn(text);
    else if (name == "step_time_ms") {
      if (auto ms = NumberIn(text)) metrics.step_time_s = *ms / 1000;
    } else if (name == "tflops_per_gpu") metrics.tflops_per_gpu = NumberIn(text);
    else if (name == "grad_norm") metrics.grad_norm = NumberIn(text);
  }
  if (!metrics.step && !metrics.loss) return std::nullopt;
  return metrics;
}

const char* const kRegexFields[] = {"step",         "total_steps",  "loss",           "lr",       "tokens_per_s",
                                    "step_time_s", "step_time_ms", "tflops_per_gpu", "grad_norm"};

}  // namespace

std::string_view ProgressFormatName(ProgressFormat format) {
  for (const FormatName& entry : kFormatNames) {
    if (entry.format == format) return entry.name;
  }
  return "none";
}

const std::vector<std::string>& ProgressFormatNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const FormatName& entry : kFormatNames) all.emplace_back(entry.name);
    return all;
  }();
  return names;
}

Result<ProgressFormat> ParseProgressFormat(std::string_view name) {
  std::string lower = ToLower(Trim(name));
  for (const FormatName& entry : kFormatNames) {
    if (lower == entry.name) return entry.format;
  }
  return ConfigError("unknown progress format '" + std::string(name) + "'",
                     "use one of: " + Join(ProgressFormatNames(), ", "));
}

std::string StripTerminalCodes(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\x1b') {
      out.push_back(line[i]);
      continue;
    }
    // ESC [ parameters intermediates final (CSI), or ESC and one more byte.
    if (i + 1 < line.size() && line[i + 1] == '[') {
      size_t j = i + 2;
      while (j < line.size() && static_cast<unsigned char>(line[j]) >= 0x20 &&
             static_cast<unsigned char>(line[j]) <= 0x3f) {
        ++j;
      }
      while (j < line.size() && static_cast<unsigned char>(line[j]) >= 0x20 &&
             static_cast<unsigned char>(line[j]) <= 0x2f) {
        ++j;
      }
      i = j;  // the final byte, skipped by the loop
    } else {
      ++i;
    }
  }
  return out;
}

Result<ProgressLineReader> ProgressLineReader::Create(ProgressFormat format, const std::string& regex) {
  ProgressLineReader reader;
  reader.format_ = format;
  reader.matched_ = format;
  if (format == ProgressFormat::kRegex) {
    re2::RE2::Options options;
    options.set_log_errors(false);
    options.set_max_mem(1 << 20);
    auto compiled = std::make_unique<re2::RE2>(regex, options);
    if (!compiled->ok()) {
      return ConfigError("the progress regex '" + regex + "' does not compile: " + compiled->error(),
                         "write an RE2 pattern with named groups, e.g. 'it (?P<step>\\d+) loss (?P<loss>[0-9.]+)'");
    }
    bool names_a_field = false;
    for (const auto& [name, index] : compiled->NamedCapturingGroups()) {
      for (const char* field : kRegexFields) names_a_field |= name == field;
    }
    if (!names_a_field) {
      return ConfigError("the progress regex '" + regex + "' has no named group for a field",
                         "name groups after the fields: step, total_steps, loss, lr, tokens_per_s, step_time_s, "
                         "step_time_ms, tflops_per_gpu, grad_norm");
    }
    reader.regex_ = std::move(compiled);
  }
  return reader;
}

ProgressLineReader::ProgressLineReader(ProgressLineReader&&) noexcept = default;
ProgressLineReader& ProgressLineReader::operator=(ProgressLineReader&&) noexcept = default;
ProgressLineReader::~ProgressLineReader() = default;

std::optional<TrainingMetrics> ProgressLineReader::ReadAs(ProgressFormat format, std::string_view line) {
  switch (format) {
    case ProgressFormat::kPrimus: return ReadPrimus(line);
    case ProgressFormat::kMegatron: return ReadMegatron(line);
    case ProgressFormat::kTorchTitan: return ReadTorchTitan(line);
    case ProgressFormat::kHuggingFace: {
      auto metrics = ReadHuggingFace(line);
      if (metrics) metrics->step = ++records_;
      return metrics;
    }
    case ProgressFormat::kNanoGpt: return ReadNanoGpt(line);
    case ProgressFormat::kRegex: return regex_ ? ReadRegex(*regex_, line) : std::nullopt;
    case ProgressFormat::kNone:
    case ProgressFormat::kAuto: return std::nullopt;
  }
  return std::nullopt;
}

void ProgressLineReader::EndTimerBlock() {
  std::vector<StepTimePart> parts = timers_.Finish();
  // A block before any iteration line has no step to belong to.
  if (parts.empty() || !last_megatron_) return;
  block_record_ = *last_megatron_;
  block_record_->time_parts = std::move(parts);
}

std::optional<TrainingMetrics> ProgressLineReader::TakeBlockRecord(bool output_paused) {
  if (output_paused && timers_.open()) EndTimerBlock();
  return std::exchange(block_record_, std::nullopt);
}

std::optional<TrainingMetrics> ProgressLineReader::Read(std::string_view line) {
  if (format_ == ProgressFormat::kNone || line.size() > kMaxLineBytes) return std::nullopt;
  if (matched_ == ProgressFormat::kMegatron) {
    if (timers_.open() && timers_.Feed(line)) return std::nullopt;
    if (timers_.open()) EndTimerBlock();  // this line ends it
    if (timers_.Start(line)) return std::nullopt;
  }
  // Every built-in format has "loss" on its line; most lines of a log do not.
  if (format_ != ProgressFormat::kRegex && line.find("loss") == std::string_view::npos) return std::nullopt;
  std::string clean;
  if (line.find('\x1b') != std::string_view::npos) {
    clean = StripTerminalCodes(line);
    line = clean;
  }
  if (matched_ != ProgressFormat::kAuto) {
    std::optional<TrainingMetrics> metrics = ReadAs(matched_, line);
    if (metrics && matched_ == ProgressFormat::kMegatron) last_megatron_ = metrics;
    return metrics;
  }
  for (ProgressFormat candidate : {ProgressFormat::kMegatron, ProgressFormat::kTorchTitan, ProgressFormat::kNanoGpt,
                                   ProgressFormat::kHuggingFace, ProgressFormat::kPrimus}) {
    if (auto metrics = ReadAs(candidate, line)) {
      matched_ = candidate;
      if (candidate == ProgressFormat::kMegatron) last_megatron_ = metrics;
      return metrics;
    }
  }
  return std::nullopt;
}

}  // namespace primus::telemetry
