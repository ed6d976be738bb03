// The `ps` and `history` tasks: this user's jobs on this host, as their views
// say (monitor/job_list.h):
//   ps [--all] [--json]     running jobs and those that ended in the last day
//   history [--json]        every job found, ended or not: status, duration,
//                           steps, final loss, restarts
// Exit codes: 0 (an empty list too), 2 bad arguments.
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "monitor/job_list.h"
#include "monitor/terminal_screen.h"
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

// A listing's column: its header, width, alignment, and when it goes on a
// narrow terminal (0: never; higher goes first). The last column is as wide
// as its text, cut from the left to what the terminal leaves it.
struct Column {
  std::string header;
  size_t width;
  bool right = false;
  int drop = 0;
};

// The table, fitted to `columns` (0: not a terminal, every column in full):
// columns go by their drop order until the rest fit, so a line never wraps.
std::string RenderTable(const std::vector<Column>& table, const std::vector<std::vector<std::string>>& rows,
                        size_t columns) {
  std::vector<bool> shown(table.size(), true);
  auto fixed_width = [&] {
    size_t width = 0;
    for (size_t i = 0; i + 1 < table.size(); ++i) width += shown[i] ? table[i].width + 1 : 0;
    return width;
  };
  constexpr size_t kLastColumnMin = 16;
  while (columns > 0 && fixed_width() + kLastColumnMin > columns) {
    int worst = 0;
    size_t at = table.size();
    for (size_t i = 0; i < table.size(); ++i) {
      if (shown[i] && table[i].drop > worst) worst = table[i].drop, at = i;
    }
    if (at == table.size()) break;
    shown[at] = false;
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i + 1 < table.size(); ++i) {
      if (!shown[i]) continue;
      out += table[i].right ? fmt::format("{:>{}} ", Shorten(cells[i], table[i].width), table[i].width)
                            : fmt::format("{:<{}} ", Shorten(cells[i], table[i].width), table[i].width);
    }
    std::string last = cells.back();
    if (columns > out.size() && last.size() > columns - out.size() - 1) {
      size_t room = columns - out.size() - 1;
      last = room > 3 ? "..." + last.substr(last.size() - (room - 3)) : "";
    }
    return out + last + "\n";
  };
  std::vector<std::string> headers;
  for (const Column& column : table) headers.push_back(column.header);
  std::string out = line(headers);
  for (const auto& row : rows) out += line(row);
  return out;
}

// The terminal's width when standard output is one; 0 otherwise.
size_t OutputColumns() { return isatty(STDOUT_FILENO) ? monitor::TerminalSizeOf(STDOUT_FILENO).columns : 0; }

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
    static const std::vector<Column> table = {{"RUN ID", 26},          {"STATE", 10},
                                              {"WHAT", 24, false, 2},  {"NODESxW", 7, true, 3},
                                              {"HOSTS", 16, false, 5}, {"STEP", 16, true, 1},
                                              {"STARTED", 16, false, 4}, {"DIRECTORY", 0}};
    std::vector<std::vector<std::string>> rows;
    for (const monitor::JobEntry* job : shown) {
      std::string step = Steps(*job);
      if (job->running && job->eta_s) step += " " + Duration(*job->eta_s);
      std::string hosts = job->hosts.empty() ? job->agent_host : Join(job->hosts, ",");
      rows.push_back({job->run_id, job->state, job->What(),
                      fmt::format("{}x{}", job->nnodes, job->world_size / std::max(job->nnodes, 1)), hosts, step,
                      LocalTime(job->started), job->log_dir});
    }
    std::cout << RenderTable(table, rows, OutputColumns());
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
    static const std::vector<Column> table = {{"STARTED", 16, false, 3}, {"RUN ID", 26},
                                              {"STATUS", 10},            {"DURATION", 8, true, 2},
                                              {"STEP", 13, true, 1},     {"LOSS", 10, true, 4},
                                              {"RESTARTS", 8, true, 5},  {"WHAT", 0}};
    std::vector<std::vector<std::string>> rows;
    for (const monitor::JobEntry* job : all) {
      rows.push_back({LocalTime(job->started), job->run_id, job->state,
                      job->started > 0 ? Duration(job->updated - job->started) : "-", Steps(*job),
                      job->loss ? fmt::format("{:.4g}", *job->loss) : "-", std::to_string(job->restarts), job->What()});
    }
    std::cout << RenderTable(table, rows, OutputColumns());
    return 0;
  }
};

TaskRegistration<PsTask> ps_registration;
TaskRegistration<HistoryTask> history_registration;

}  // namespace
}  // namespace primus::tasks
