#include "analyze/hang_report.h"

#include <re2/re2.h>

#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "analyze/run_files.h"
#include "analyze/run_summary.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::analyze {
namespace {

namespace fs = std::filesystem;

// A stack text is a few KiB per thread; more is not a stack.
constexpr size_t kMaxStackFileBytes = 4 << 20;

struct Evidence {
  std::map<int, RankStacks> ranks;
  size_t stack_files = 0, flight_dumps = 0;
  std::vector<std::string> notes;
};

Evidence ReadEvidence(const fs::path& dir) {
  static const RE2 stacks_name(R"((.+)\.rank(\d+)\.(stacks|pystacks)\.txt)");
  static const RE2 dump_name(R"(nccl_trace_rank_(\d+))");
  Evidence evidence;
  std::map<int, bool> from_agent;  // the agent's stacks.txt wins over the dumper's raw file
  for (const fs::path& file : FilesIn(dir)) {
    std::string name = file.filename().string(), host, kind;
    int rank = 0;
    if (RE2::FullMatch(name, stacks_name, &host, &rank, &kind)) {
      bool agent = kind == "stacks";
      if (from_agent.count(rank) && (from_agent[rank] || !agent)) continue;
      auto text = ReadRegularFile(file.string(), kMaxStackFileBytes);
      if (!text.ok()) {
        evidence.notes.push_back(text.error().message);
        continue;
      }
      if (text->empty()) continue;  // the dumper's file, never written to
      RankStacks& stacks = evidence.ranks[rank];
      stacks.rank = rank;
      stacks.host = host;
      // The agent's header: "# rank 2, local rank 2, pid 4242, last step 41, host node1".
      static const RE2 header(R"(# rank \d+, local rank (\d+), pid \d+(?:, last step (\d+))?.*)");
      int local_rank = -1;
      std::string step;
      if (RE2::FullMatch(text->substr(0, text->find('\n')), header, &local_rank, &step)) {
        stacks.local_rank = local_rank;
        if (auto last = ParseInt(step)) stacks.last_step = *last;
      }
      stacks.text = std::move(*text);
      if (!from_agent.count(rank)) ++evidence.stack_files;
      from_agent[rank] = agent;
    } else if (RE2::FullMatch(name, dump_name, &rank)) {
      auto bytes = ReadRegularFile(file.string(), kMaxFlightRecordBytes);
      auto record = bytes.ok() ? ReadFlightRecord(*bytes, file.string()) : Result<FlightRecord>(bytes.error());
      if (!record.ok()) {
        evidence.notes.push_back(record.error().message);
        continue;
      }
      RankStacks& stacks = evidence.ranks[rank];
      stacks.rank = rank;
      stacks.flight = std::move(*record);
      ++evidence.flight_dumps;
    }
  }
  return evidence;
}

}  // namespace

Result<HangReport> LoadHangReport(const std::string& run, std::optional<int> attempt) {
  if (!IsDirectory(run)) {
    return UnavailableError("analyze hang: " + run + " is not a directory",
                            "name an experiment directory, its log directory or one attempt_<n> directory");
  }
  // Where the attempts are: the experiment's log directory, the directory itself, or none (an attempt's own).
  fs::path log_dir = run;
  if (PathExists(JoinPath(run, "metadata.json"))) {
    auto summary = LoadRunSummary(run);
    if (summary.ok()) log_dir = summary->log_dir;
  }
  std::vector<std::pair<int, fs::path>> attempts = AttemptDirs(log_dir);
  if (attempts.empty()) attempts.emplace_back(-1, fs::path(run));
  HangReport report;
  std::vector<std::string> looked;
  for (auto it = attempts.rbegin(); it != attempts.rend(); ++it) {
    if (attempt && it->first != *attempt) continue;
    looked.push_back(it->second.string());
    Evidence evidence = ReadEvidence(it->second);
    report.notes.insert(report.notes.end(), evidence.notes.begin(), evidence.notes.end());
    if (evidence.ranks.empty()) {
      if (attempt) break;
      continue;
    }
    report.attempt = it->first;
    report.attempt_dir = it->second.string();
    report.stack_files = evidence.stack_files;
    report.flight_dumps = evidence.flight_dumps;
    std::vector<RankStacks> ranks;
    for (auto& [rank, stacks] : evidence.ranks) ranks.push_back(std::move(stacks));
    report.verdict = JudgeHang(ranks);
    return report;
  }
  if (attempt && looked.empty()) {
    return UnavailableError("analyze hang: " + run + " has no attempt " + std::to_string(*attempt),
                            "leave out --attempt to take the latest attempt with stacks");
  }
  return UnavailableError("analyze hang: no stacks and no flight recorder dumps in " +
                              (looked.empty() ? run : looked.front()) +
                              (looked.size() > 1 ? " (nor in " + std::to_string(looked.size() - 1) + " earlier attempts)"
                                                 : ""),
                          "the agent takes stacks when its hang watchdog fires (--hang-timeout) and on "
                          "primus-cli stacks; PyTorch dumps its flight recorder on an NCCL timeout");
}

std::string FormatHangReport(const HangReport& report) {
  std::string out = "hang of " + report.attempt_dir + " (" + std::to_string(report.stack_files) + " stack file" +
                    (report.stack_files == 1 ? "" : "s") + ", " + std::to_string(report.flight_dumps) +
                    " flight recorder dump" + (report.flight_dumps == 1 ? "" : "s") + ")\n";
  out += FormatVerdict(report.verdict);
  for (const std::string& note : report.notes) out += "note: " + note + "\n";
  return out;
}

std::string HangReportJson(const HangReport& report) {
  nlohmann::json json{{"attempt_dir", report.attempt_dir},
                      {"attempt", report.attempt},
                      {"summary", report.verdict.summary},
                      {"culprits", report.verdict.culprits},
                      {"details", report.verdict.details},
                      {"evidence", report.verdict.evidence},
                      {"stack_files", report.stack_files},
                      {"flight_dumps", report.flight_dumps},
                      {"notes", report.notes}};
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankPlace& place : report.verdict.places) {
    nlohmann::json item{{"rank", place.rank},       {"host", place.host},   {"collective", place.collective},
                        {"frame", place.frame},     {"has_stack", place.readable},
                        {"has_flight_record", place.has_flight_record}};
    nlohmann::json groups = nlohmann::json::array();
    for (const GroupProgress& group : place.groups) {
      groups.push_back({{"group", group.group}, {"last_enqueued", group.last_enqueued},
                        {"last_completed", group.last_completed}, {"pending_seq", group.pending_seq},
                        {"pending_op", group.pending_op}, {"pending_sizes", group.pending_sizes}});
    }
    item["groups"] = groups;
    ranks.push_back(std::move(item));
  }
  json["ranks"] = ranks;
  return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace primus::analyze
