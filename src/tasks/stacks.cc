// The `stacks` task: every rank's Python stacks (and NCCL flight records) of
// a job running on this host, now, without stopping it:
//   stacks [TARGET] [--json]
// TARGET names the job as for `monitor` (an experiment or log directory, a
// job.json, a run id, a Slurm job id; none: your running job, as
// monitor/job_list.h chooses it). The job's agent on this host is asked, by StackSignal(), to
// take its workers' stacks as it does on a hang (py-spy, else the stack
// dumper every Python worker loads); it saves them as
// <host>.rank<R>.stacks.txt in the attempt's directory, which this task
// prints with the judgement of where each rank is. Only a job of this user,
// started by primus-cli, is ever signalled. The other hosts of a multi-node
// job have their own agents: run `primus-cli stacks` there (srun, ssh).
// Exit codes: 0 the stacks were taken, 2 bad arguments, 4 no running job or
// agent here, or no stack came within the agent's stack timeout.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "agent/process_tree.h"
#include "agent/stack_dump.h"
#include "agent/worker_env.h"
#include "analyze/hang_culprit.h"
#include "analyze/run_files.h"
#include "monitor/job_list.h"
#include "tasks/job_target_args.h"
#include "tasks/task.h"
#include "util/clock.h"
#include "util/files.h"
#include "util/json_fields.h"
#include "util/log.h"
#include "util/option_parser.h"
#include "util/strings.h"

namespace primus::tasks {
namespace {

using K = OptionSpec::Kind;
namespace jf = json_fields;

const std::vector<OptionSpec>& StacksOptions() {
  static const std::vector<OptionSpec> table = {
      {{"--json"}, K::kFlag, "", "", "JSON on standard output: each rank's stacks and the judgement"},
  };
  return table;
}

struct StacksArgs {
  std::string target;
  bool json = false;
};

Result<StacksArgs> ParseStacksArgs(const std::vector<std::string>& args) {
  auto job = ParseJobTargetArgs(args, StacksOptions(), "stacks", "e.g. primus-cli stacks output/exp_20261124_091927");
  if (!job.ok()) return job.error();
  StacksArgs parsed;
  parsed.target = job->target;
  for (const ParsedOption& option : job->options) {
    if (option.spec->names.front() == "--json") parsed.json = true;
  }
  return parsed;
}

// The first number of a line of /proc/<pid>/status ("Uid", "PPid"); -1 when unreadable.
long StatusField(pid_t pid, std::string_view name) {
  auto value = ParseInt(Split(agent::ProcessStatusValue(pid, name), '\t').front());
  return value ? static_cast<long>(*value) : -1;
}

class StacksTask : public Task {
 public:
  std::string name() const override { return "stacks"; }
  std::string summary() const override { return "every rank's stacks of a running job, now, without stopping it"; }
  std::vector<const std::vector<OptionSpec>*> options(const std::string&) const override { return {&StacksOptions()}; }
  std::vector<std::string> positional_words(const std::string&) const override { return JobTargetWords(true); }
  std::string help() const override {
    return "usage: primus-cli stacks [TARGET] [--json]\n"
           "\n"
           "Asks the job's agent on this host for every worker's stacks, as it takes them on a hang: Python\n"
           "stacks of every thread (py-spy when installed, else the stack dumper every Python worker loads)\n"
           "and, on NCCL, the flight recorder's dump. The workers go on running. The stacks are saved as\n"
           "<host>.rank<R>.stacks.txt in the attempt's directory and printed, with where each rank is and,\n"
           "when the job is stuck, the rank the others wait for. The same as: kill -s RTMIN+5 <agent pid>.\n"
           "On a multi-node job, run it on each host (each host's agent holds its own workers).\n"
           "\n"
           "TARGET  as for monitor: an experiment directory, a log directory, a job.json, a run id or a Slurm\n"
           "        job id. None: your running job, the one started from this directory when several run.\n"
           "\n" +
           FormatOptionHelp(StacksOptions()) +
           "\nExample: primus-cli stacks output/exp_20261124_091927\n"
           "Exit codes: 0 the stacks were taken, 2 bad arguments, 4 no running job or agent of yours on this\n"
           "host, or no stack within the agent's stack timeout. docs/agent.md has the details.\n";
  }
  bool in_process() const override { return true; }

  Result<int> Run(const TaskContext& context) override {
    auto args = ParseStacksArgs(context.args);
    if (!args.ok()) return args.error();
    monitor::SearchPlaces places = monitor::SearchPlaces::FromEnvironment();
    auto source = monitor::ResolveJob(args->target, places, monitor::JobChoice::kRunning);
    if (!source.ok()) return source.error();
    if (source->http) {
      return UsageError("stacks asks the agent on this host, and " + source->Describe() + " is a metrics port",
                        "name the job's experiment or log directory, or run it on the job's host");
    }
    auto view = monitor::ReadJobView(*source, 5);
    if (!view.ok()) return view.error();

    // This host's workers in the view, and the agent whose children they are.
    std::map<int, pid_t> workers;  // rank -> pid
    for (const auto& node : jf::Array(*view, "nodes")) {
      if (jf::Text(node, "host") != log::HostName()) continue;
      for (const auto& worker : jf::Array(node, "workers")) {
        auto rank = jf::IntegerIn(worker, "rank", 0, 1 << 24);
        auto pid = jf::IntegerIn(worker, "pid", 2, 1 << 30);
        if (rank && pid && PathExists("/proc/" + std::to_string(*pid))) workers[*rank] = *pid;
      }
    }
    pid_t agent = 0;
    for (const auto& [rank, pid] : workers) {
      long parent = StatusField(pid, "PPid");
      if (parent > 1 && agent::IsOurAgent(static_cast<pid_t>(parent))) agent = static_cast<pid_t>(parent);
    }
    if (agent == 0) {
      return UnavailableError("stacks: no running worker of " + source->Describe() + " on this host (" +
                                  log::HostName() + ") has a primus-cli agent of yours as its parent",
                              "run it on a host of the job while it runs (primus-cli monitor shows its hosts)");
    }
    std::string log_dir = DirName(DirName(source->file));  // <log_dir>/telemetry/job.json
    auto attempts = analyze::AttemptDirs(log_dir);
    if (attempts.empty()) return UnavailableError("stacks: no attempt directory under " + log_dir);
    std::string attempt_dir = attempts.back().second.string();
    std::map<int, std::string> files;
    std::map<int, int64_t> before;
    for (const auto& [rank, pid] : workers) {
      files[rank] = JoinPath(attempt_dir, log::HostName() + ".rank" + std::to_string(rank) + ".stacks.txt");
      before[rank] = ModificationTimeNs(files[rank]);
    }
    if (context.dry_run) {
      std::cout << "stacks: would signal agent " << agent << " for the stacks of " << workers.size()
                << " workers (saved in " << attempt_dir << ")\n";
      return 0;
    }
    if (::kill(agent, agent::StackSignal()) != 0) {
      return UnavailableError("stacks: cannot signal agent " + std::to_string(agent) + ": " + std::strerror(errno));
    }
    // The agent's collection ends within its stack timeout (10 s by default).
    auto give_up = std::chrono::steady_clock::now() +
                   std::chrono::duration<double>(agent::kStackCollectionTimeoutS + 5);
    auto all_new = [&] {
      for (const auto& [rank, path] : files) {
        int64_t now = ModificationTimeNs(path);
        if (now < 0 || now == before[rank]) return false;
      }
      return true;
    };
    while (!all_new() && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::vector<analyze::RankStacks> ranks;
    for (const auto& [rank, path] : files) {
      if (ModificationTimeNs(path) == before[rank]) continue;
      auto stacks = ReadRegularFile(path, 4 << 20);
      if (!stacks.ok()) continue;
      analyze::RankStacks entry;
      entry.rank = rank;
      entry.host = log::HostName();
      entry.text = std::move(*stacks);
      ranks.push_back(std::move(entry));
    }
    if (ranks.empty()) {
      return UnavailableError("stacks: agent " + std::to_string(agent) + " saved no stacks in " + attempt_dir +
                                  " within " + std::to_string(static_cast<int>(agent::kStackCollectionTimeoutS + 5)) +
                                  " s",
                              "its log says why (no py-spy and no stack dumper loaded: not Python workers?)");
    }
    analyze::HangVerdict verdict = analyze::JudgeHang(ranks);
    if (args->json) {
      nlohmann::json json{{"agent_pid", agent}, {"attempt_dir", attempt_dir}, {"summary", verdict.summary},
                          {"culprits", verdict.culprits}};
      nlohmann::json list = nlohmann::json::array();
      for (const analyze::RankStacks& rank : ranks) {
        list.push_back({{"rank", rank.rank}, {"host", rank.host}, {"file", files[rank.rank]}, {"stacks", rank.text}});
      }
      json["ranks"] = list;
      std::cout << json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      return 0;
    }
    for (const analyze::RankStacks& rank : ranks) {
      std::cout << "== rank " << rank.rank << " on " << rank.host << " (" << files[rank.rank] << ")\n"
                << rank.text << (rank.text.ends_with('\n') ? "" : "\n");
    }
    std::cout << "\nwhere the ranks are (if the job is stuck):\n" << analyze::FormatVerdict(verdict);
    if (ranks.size() < files.size()) {
      std::cout << "no new stacks from " << files.size() - ranks.size() << " rank(s) within the wait\n";
    }
    return 0;
  }
};

TaskRegistration<StacksTask> stacks_registration;

}  // namespace
}  // namespace primus::tasks
