// The `logs` task: a job's worker logs, every rank's merged in time order and
// prefixed with its host and rank, as they are and, with -f, as they grow:
//   logs [TARGET] [-f] [--rank R] [--attempt N] [--json]
// TARGET as for monitor; none: your running job started from this
// directory, else your latest job from here, else your latest. The lines
// come from <log_dir>/attempt_<n>/<host>.rank<R>.log (docs/agent.md: each
// line "<time> O|E <text>"), read a bounded piece at a time, so a log of any
// size streams in constant memory. -f follows until the job ends (and into
// the next attempt when it restarts), or Ctrl-C.
// Exit codes: 0, 2 bad arguments or several running jobs to choose from,
// 4 no such job, attempt or rank.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <re2/re2.h>

#include "analyze/run_files.h"
#include "io/unique_fd.h"
#include "monitor/job_list.h"
#include "tasks/job_target_args.h"
#include "tasks/task.h"
#include "util/clock.h"
#include "util/files.h"
#include "util/json_fields.h"
#include "util/option_parser.h"
#include "util/strings.h"

namespace primus::tasks {
namespace {

using K = OptionSpec::Kind;
constexpr size_t kMaxLineBytes = 64 * 1024;  // longer lines are cut, with a note

const std::vector<OptionSpec>& LogsOptions() {
  static const std::vector<OptionSpec> table = {
      {{"--follow", "-f"}, K::kFlag, "", "", "keep printing what the workers write until the job ends"},
      {{"--rank"}, K::kValue, "R", "", "only global rank R (repeatable)"},
      {{"--attempt"}, K::kValue, "N", "", "attempt N (attempt_<N>); default: the latest"},
      {{"--json"}, K::kFlag, "", "", "one JSON object per line: time, host, rank, stream, text"},
  };
  return table;
}

struct LogsArgs {
  std::string target;
  bool follow = false, json = false;
  std::vector<int> ranks;
  std::optional<int> attempt;
};

Result<LogsArgs> ParseLogsArgs(const std::vector<std::string>& args) {
  auto job = ParseJobTargetArgs(args, LogsOptions(), "logs", "e.g. primus-cli logs RUN_ID -f");
  if (!job.ok()) return job.error();
  LogsArgs parsed;
  parsed.target = job->target;
  for (const ParsedOption& option : job->options) {
    const std::string& name = option.spec->names.front();
    if (name == "--follow") parsed.follow = true;
    if (name == "--json") parsed.json = true;
    if (name == "--rank" || name == "--attempt") {
      std::optional<int64_t> number = ParseInt(option.value);
      if (!number || *number < 0 || *number > (1 << 24)) {
        return UsageError("logs " + name + " '" + option.value + "' is not a number", "e.g. " + name + " 0");
      }
      if (name == "--rank") parsed.ranks.push_back(static_cast<int>(*number));
      else parsed.attempt = static_cast<int>(*number);
    }
  }
  return parsed;
}

// One rank's log, read a bounded piece at a time; the next complete line.
class RankLog {
 public:
  RankLog(std::string path, std::string host, int rank)
      : path_(std::move(path)), host_(std::move(host)), rank_(rank) {}
  const std::string& host() const { return host_; }
  int rank() const { return rank_; }

  // The next whole line, or nullopt until more is written.
  std::optional<std::string> Next() {
    while (true) {
      size_t newline = pending_.find('\n', scanned_);
      if (newline != std::string::npos) {
        std::string line = pending_.substr(0, newline);
        pending_.erase(0, newline + 1);
        scanned_ = 0;
        return line;
      }
      scanned_ = pending_.size();
      if (pending_.size() > kMaxLineBytes) {  // a line without end: cut it
        std::string line = pending_.substr(0, kMaxLineBytes) + " ...(line cut)";
        pending_.clear();
        scanned_ = 0;
        return line;
      }
      if (!Read()) return std::nullopt;
    }
  }

 private:
  bool Read() {
    if (!fd_.valid()) fd_ = io::UniqueFd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd_.valid()) return false;
    char buffer[65536];
    ssize_t n = ::read(fd_.get(), buffer, sizeof(buffer));
    if (n <= 0) return false;
    pending_.append(buffer, static_cast<size_t>(n));
    return true;
  }

  std::string path_, host_;
  int rank_;
  io::UniqueFd fd_;
  std::string pending_;
  size_t scanned_ = 0;
};

struct Line {
  std::string time, stream, text;
};

Line Split3(const std::string& line) {
  // "<time> O|E <text>"
  Line out;
  size_t first = line.find(' ');
  if (first == std::string::npos || first + 2 >= line.size() || line[first + 2] != ' ') {
    out.text = line;
    return out;
  }
  out.time = line.substr(0, first);
  out.stream = line.substr(first + 1, 1);
  out.text = line.substr(first + 3);
  return out;
}

class LogPrinter {
 public:
  explicit LogPrinter(bool json) : json_(json) {}
  void Print(const RankLog& log, const Line& line) {
    if (json_) {
      nlohmann::json object{{"time", line.time}, {"host", log.host()}, {"rank", log.rank()},
                            {"stream", line.stream == "E" ? "stderr" : "stdout"}, {"text", line.text}};
      std::cout << object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
      std::cout << "[" << log.host() << ":" << log.rank() << "] " << EscapeControlCharacters(line.text) << "\n";
    }
  }

 private:
  bool json_;
};

// Every line each log holds now, merged by time (each log is in time order).
void PrintAvailable(std::vector<std::unique_ptr<RankLog>>& logs, LogPrinter& printer) {
  std::vector<std::optional<Line>> heads(logs.size());
  auto fill = [&](size_t i) {
    std::optional<std::string> line = logs[i]->Next();
    heads[i] = line ? std::optional<Line>(Split3(*line)) : std::nullopt;
  };
  for (size_t i = 0; i < logs.size(); ++i) fill(i);
  while (true) {
    std::optional<size_t> first;
    for (size_t i = 0; i < heads.size(); ++i) {
      if (heads[i] && (!first || heads[i]->time < heads[*first]->time)) first = i;
    }
    if (!first) break;
    printer.Print(*logs[*first], *heads[*first]);
    fill(*first);
  }
  std::cout << std::flush;
}

// The attempt's rank logs, filtered by rank.
std::vector<std::unique_ptr<RankLog>> OpenRankLogs(const std::filesystem::path& attempt_dir,
                                                   const std::vector<int>& ranks) {
  static const RE2 name(R"((.+)\.rank(\d+)\.log)");
  std::vector<std::unique_ptr<RankLog>> logs;
  for (const std::filesystem::path& file : analyze::FilesIn(attempt_dir)) {
    std::string host;
    int rank = 0;
    if (!RE2::FullMatch(file.filename().string(), name, &host, &rank)) continue;
    if (!ranks.empty() && std::find(ranks.begin(), ranks.end(), rank) == ranks.end()) continue;
    logs.push_back(std::make_unique<RankLog>(file.string(), host, rank));
  }
  return logs;
}

// Whether the job still runs, as ListJobs judges it.
bool JobRunning(const monitor::JobSource& source) {
  auto view = monitor::ReadJobView(source, 5);
  if (!view.ok()) return false;
  double modified = static_cast<double>(ModificationTimeNs(source.file)) / 1e9;
  return monitor::IsRunningView(json_fields::Object(*view, "job"), modified, WallSeconds());
}

class LogsTask : public Task {
 public:
  std::string name() const override { return "logs"; }
  std::string summary() const override { return "a job's worker logs, every rank's merged in time order; -f follows"; }
  std::vector<const std::vector<OptionSpec>*> options(const std::string&) const override { return {&LogsOptions()}; }
  std::vector<std::string> positional_words(const std::string&) const override { return JobTargetWords(false); }
  std::string help() const override {
    return "usage: primus-cli logs [TARGET] [-f] [--rank R] [--attempt N] [--json]\n"
           "\n"
           "Prints the job's worker logs of one attempt (the latest by default), every rank's lines merged\n"
           "in time order, each prefixed [host:rank]. -f keeps printing what the workers write until the\n"
           "job ends, into the next attempt when it restarts.\n"
           "\n"
           "TARGET  a run id (primus-cli ps), an experiment or log directory, a job.json. None: your job\n"
           "        running from this directory, else your latest from here, else your latest.\n"
           "\n" +
           FormatOptionHelp(LogsOptions()) +
           "\nExamples:\n"
           "  primus-cli logs -f\n"
           "  primus-cli logs 20261128-122132-de4b79 --rank 3 --attempt 0\n"
           "Exit codes: 0, 2 bad arguments or several running jobs to choose from, 4 no such job, attempt\n"
           "or rank.\n";
  }
  bool in_process() const override { return true; }

  Result<int> Run(const TaskContext& context) override {
    auto args = ParseLogsArgs(context.args);
    if (!args.ok()) return args.error();
    auto source = monitor::ResolveJob(args->target, monitor::SearchPlaces::FromEnvironment(),
                                      monitor::JobChoice::kRunningOrLatest);
    if (!source.ok()) return source.error();
    if (source->http) {
      return UsageError("logs reads the job's files, and " + source->Describe() + " is a port",
                        "name the job by its run id or directory, on a host that has its logs");
    }
    std::string log_dir = DirName(DirName(source->file));  // <log_dir>/telemetry/job.json
    auto attempts = analyze::AttemptDirs(log_dir);
    if (attempts.empty()) return UnavailableError("logs: no attempt directory under " + log_dir);
    int attempt = attempts.back().first;
    if (args->attempt) {
      bool found = std::any_of(attempts.begin(), attempts.end(), [&](const auto& a) { return a.first == *args->attempt; });
      if (!found) {
        return UnavailableError(fmt::format("logs: no attempt {} under {} (attempts 0 to {})", *args->attempt, log_dir,
                                            attempts.back().first));
      }
      attempt = *args->attempt;
    }
    LogPrinter printer(args->json);
    while (true) {
      std::filesystem::path dir = JoinPath(log_dir, "attempt_" + std::to_string(attempt));
      auto logs = OpenRankLogs(dir, args->ranks);
      if (logs.empty() && !args->follow) {
        return UnavailableError("logs: no rank log" + std::string(args->ranks.empty() ? "" : " of those ranks") +
                                " in " + dir.string());
      }
      PrintAvailable(logs, printer);
      if (!args->follow) return 0;
      // Follow: new lines, new ranks' files, the next attempt, until the job ends.
      while (true) {
        bool running = JobRunning(*source);
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
        std::vector<std::unique_ptr<RankLog>> more = OpenRankLogs(dir, args->ranks);
        for (auto& candidate : more) {
          bool known = std::any_of(logs.begin(), logs.end(), [&](const auto& log) {
            return log->rank() == candidate->rank() && log->host() == candidate->host();
          });
          if (!known) logs.push_back(std::move(candidate));
        }
        PrintAvailable(logs, printer);
        auto now = analyze::AttemptDirs(log_dir);
        if (!args->attempt && !now.empty() && now.back().first > attempt) {
          attempt = now.back().first;
          if (!args->json) std::cout << "== attempt " << attempt << " ==\n";
          break;
        }
        if (!running) return 0;  // ended before this last read
      }
    }
  }
};

TaskRegistration<LogsTask> logs_registration;

}  // namespace
}  // namespace primus::tasks
