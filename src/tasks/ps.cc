// The `ps` and `history` tasks: this user's jobs on this host, as their views
// say (monitor/job_list.h):
//   ps [--all] [--json]     running jobs and those that ended in the last day
//   history [--json]        every job found, ended or not: status, duration,
//                           steps, final loss, restarts
// Exit codes: 0 (an empty list too), 2 bad arguments.
#include <time.h>

#include <cmath>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "monitor/job_list.h"
#include "tasks/task.h"
#include "util/clock.h"
#include "util/option_parser.h"

namespace primus::tasks {
namespace {

using K = OptionSpec::Kind;
constexpr double kRecentS = 24 * 3600;
constexpr size_t kMaxRecentShown = 20;  // ended jobs listed without --all

const std::vector<OptionSpec>& PsOptions() {
  static const std::vector<OptionSpec> table = {
      {{"--all", "-a"}, K::kFlag, "", "", "every job found, not only the running ones and those of the last day"},
      {{"--json"}, K::kFlag, "", "", "JSON on standard output: one object per job"},
  };
  return table;
}

const std::vector<OptionSpec>& HistoryOptions() {
  static const std::vector<OptionSpec> table = {
      {{"--json"}, K::kFlag, "", "", "JSON on standard output: one object per job"},
  };
  return table;
}

struct ListArgs {
  bool all = false;
  bool json = false;
};

Result<ListArgs> ParseListArgs(const std::vector<std::string>& args, const std::vector<OptionSpec>& table,
                               const std::string& task) {
  ListArgs parsed;
  auto options = ParseOptions(args, 0, {&table}, UnknownOptionPolicy::kReject, task);
  if (!options.ok()) return options.error();
  if (options->next < args.size()) {
    return UsageError(task + " takes no argument, not '" + args[options->next] + "'",
                      "primus-cli " + task + " [--json]; a job's details: primus-cli monitor RUN_ID");
  }
  for (const ParsedOption& option : options->options) {
    if (option.spec->names.front() == "--all") parsed.all = true;
    if (option.spec->names.front() == "--json") parsed.json = true;
  }
  return parsed;
}

std::string LocalTime(double seconds) {
  if (seconds <= 0) return "-";
  time_t when = static_cast<time_t>(seconds);
  tm local{};
  localtime_r(&when, &local);
  char text[32];
  strftime(text, sizeof(text), "%Y-%m-%d %H:%M", &local);
  return text;
}

std::string Duration(double seconds) {
  if (seconds < 0) return "-";
  int64_t s = static_cast<int64_t>(std::llround(seconds));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

std::string Shorten(const std::string& text, size_t width) {
  return text.size() <= width ? text : text.substr(0, width - 3) + "...";
}

std::string Steps(const monitor::JobEntry& job) {
  if (!job.step) return "-";
  return job.total_steps ? fmt::format("{}/{}", *job.step, *job.total_steps) : std::to_string(*job.step);
}

void PrintJson(const std::vector<const monitor::JobEntry*>& jobs) {
  nlohmann::json list = nlohmann::json::array();
  for (const monitor::JobEntry* job : jobs) list.push_back(job->ToJson());
  std::cout << list.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

class PsTask : public Task {
 public:
  std::string name() const override { return "ps"; }
  std::string summary() const override { return "your running and recent jobs on this host"; }
  std::vector<const std::vector<OptionSpec>*> options(const std::string&) const override { return {&PsOptions()}; }
  std::string help() const override {
    return "usage: primus-cli ps [--all] [--json]\n"
           "\n"
           "Your jobs on this host: those running, and the 20 latest that ended in the last day (--all: every\n"
           "one found). Found by their views (telemetry/job.json) in the agent's log directories\n"
           "(${TMPDIR:-/tmp}/primus-<uid>) and in ./output's experiments; another user's are never listed.\n"
           "A multi-node job is listed on the host of its node 0 (and wherever its log directory is shared).\n"
           "\n" +
           FormatOptionHelp(PsOptions()) +
           "\nExamples:\n"
           "  primus-cli ps\n"
           "  primus-cli ps --all --json\n"
           "Then: primus-cli logs RUN_ID -f, primus-cli stop RUN_ID, primus-cli monitor RUN_ID.\n"
           "Exit codes: 0 (also when nothing is listed), 2 bad arguments.\n";
  }
  bool in_process() const override { return true; }

  Result<int> Run(const TaskContext& context) override {
    auto args = ParseListArgs(context.args, PsOptions(), "ps");
    if (!args.ok()) return args.error();
    double now = WallSeconds();
    std::vector<monitor::JobEntry> jobs = monitor::ListJobs(monitor::SearchPlaces::FromEnvironment(), now);
    std::vector<const monitor::JobEntry*> shown;
    size_t ended_shown = 0, ended_left = 0;
    for (const monitor::JobEntry& job : jobs) {
      if (args->all || job.running) {
        shown.push_back(&job);
      } else if (now - job.updated < kRecentS) {
        if (ended_shown < kMaxRecentShown) shown.push_back(&job), ++ended_shown;
        else ++ended_left;
      }
    }
    if (args->json) {
      PrintJson(shown);
      return 0;
    }
    if (shown.empty()) {
      std::cout << "no job of yours found on this host" << (args->all ? "" : " in the last day (--all: older ones)")
                << "\n";
      return 0;
    }
    std::cout << fmt::format("{:<26} {:<10} {:<24} {:>7} {:>13} {:<16} {}\n", "RUN ID", "STATE", "WHAT",
                             "NODESxW", "STEP", "STARTED", "DIRECTORY");
    for (const monitor::JobEntry* job : shown) {
      std::string step = Steps(*job);
      if (job->running && job->eta_s) step += " " + Duration(*job->eta_s);
      std::cout << fmt::format("{:<26} {:<10} {:<24} {:>7} {:>13} {:<16} {}\n", Shorten(job->run_id, 26),
                               Shorten(job->state, 10), Shorten(job->What(), 24),
                               fmt::format("{}x{}", job->nnodes, job->world_size / std::max(job->nnodes, 1)),
                               step, LocalTime(job->started), job->log_dir);
    }
    if (ended_left > 0) {
      std::cout << "... and " << ended_left << " more that ended in the last day (primus-cli ps --all, or history)\n";
    }
    return 0;
  }
};

class HistoryTask : public Task {
 public:
  std::string name() const override { return "history"; }
  std::string summary() const override { return "your jobs on this host, ended or not: status, steps, loss, restarts"; }
  std::vector<const std::vector<OptionSpec>*> options(const std::string&) const override {
    return {&HistoryOptions()};
  }
  std::string help() const override {
    return "usage: primus-cli history [--json]\n"
           "\n"
           "Every job of yours found on this host (as primus-cli ps --all finds them), newest first: how it\n"
           "ended, how long it ran, its last step, its last loss and its restarts.\n"
           "\n" +
           FormatOptionHelp(HistoryOptions()) +
           "\nExample: primus-cli history\n"
           "Exit codes: 0 (also when nothing is listed), 2 bad arguments.\n";
  }
  bool in_process() const override { return true; }

  Result<int> Run(const TaskContext& context) override {
    auto args = ParseListArgs(context.args, HistoryOptions(), "history");
    if (!args.ok()) return args.error();
    std::vector<monitor::JobEntry> jobs =
        monitor::ListJobs(monitor::SearchPlaces::FromEnvironment(), WallSeconds());
    std::vector<const monitor::JobEntry*> all;
    for (const monitor::JobEntry& job : jobs) all.push_back(&job);
    if (args->json) {
      PrintJson(all);
      return 0;
    }
    if (all.empty()) {
      std::cout << "no job of yours found on this host\n";
      return 0;
    }
    std::cout << fmt::format("{:<16} {:<26} {:<10} {:<24} {:>8} {:>13} {:>10} {:>8}\n", "STARTED", "RUN ID",
                             "STATUS", "WHAT", "DURATION", "STEP", "LOSS", "RESTARTS");
    for (const monitor::JobEntry* job : all) {
      std::string loss = job->loss ? fmt::format("{:.4g}", *job->loss) : "-";
      std::cout << fmt::format("{:<16} {:<26} {:<10} {:<24} {:>8} {:>13} {:>10} {:>8}\n", LocalTime(job->started),
                               Shorten(job->run_id, 26), Shorten(job->state, 10), Shorten(job->What(), 24),
                               job->started > 0 ? Duration(job->updated - job->started) : "-", Steps(*job), loss,
                               job->restarts);
    }
    return 0;
  }
};

TaskRegistration<PsTask> ps_registration;
TaskRegistration<HistoryTask> history_registration;

}  // namespace
}  // namespace primus::tasks
