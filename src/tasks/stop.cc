// The `stop` task: stops one of this user's running jobs the way Ctrl-C
// would, through its agent:
//   stop [TARGET] [--timeout S]
// TARGET as for monitor; none: the running job started from this directory
// (several: they are listed, none is guessed). Node 0's agent gets SIGTERM:
// it takes the workers' Python stacks, passes SIGTERM on (SIGKILL after its
// --term-timeout), tells the other nodes, and records the job as stopped
// (the view's state "stopped", metadata.json "interrupted" for train). Only
// an agent of this user, started by primus-cli, on this host, still the
// process the view names, is ever signalled.
// Exit codes: 0 stopped, 2 bad arguments or several jobs to choose from,
// 4 no such running job here, or it did not end within --timeout.
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "agent/process_tree.h"
#include "io/spawn.h"
#include "monitor/job_list.h"
#include "tasks/job_target_args.h"
#include "tasks/task.h"
#include "telemetry/job_view.h"
#include "util/json_fields.h"
#include "util/log.h"
#include "util/option_parser.h"
#include "util/private_files.h"
#include "util/process_stamp.h"
#include "util/strings.h"

namespace primus::tasks {
namespace {

using K = OptionSpec::Kind;
namespace jf = json_fields;

const std::vector<OptionSpec>& StopOptions() {
  static const std::vector<OptionSpec> table = {
      {{"--timeout"}, K::kValue, "S", "", "how long to wait for the job to end (default 90; 0: do not wait)"},
      {{"--json"}, K::kFlag, "", "", "one JSON object on standard output: the job, its agent and how it ended"},
  };
  return table;
}

struct StopArgs {
  std::string target;
  double timeout_s = 90;
  bool json = false;
};

Result<StopArgs> ParseStopArgs(const std::vector<std::string>& args) {
  auto job = ParseJobTargetArgs(args, StopOptions(), "stop", "stop them one by one: primus-cli stop RUN_ID");
  if (!job.ok()) return job.error();
  StopArgs parsed;
  parsed.target = job->target;
  for (const ParsedOption& option : job->options) {
    if (option.spec->names.front() == "--json") {
      parsed.json = true;
      continue;
    }
    std::optional<double> seconds = ParseDouble(option.value);
    if (!seconds || *seconds < 0 || *seconds > 86400) {
      return UsageError("stop --timeout '" + option.value + "' is not a number of seconds", "e.g. --timeout 60");
    }
    parsed.timeout_s = *seconds;
  }
  return parsed;
}

class StopTask : public Task {
 public:
  std::string name() const override { return "stop"; }
  std::string summary() const override { return "stop one of your running jobs, as Ctrl-C would"; }
  std::vector<const std::vector<OptionSpec>*> options(const std::string&) const override { return {&StopOptions()}; }
  std::vector<std::string> positional_words(const std::string&) const override { return JobTargetWords(true); }
  std::string help() const override {
    return "usage: primus-cli stop [TARGET] [--timeout S] [--json]\n"
           "\n"
           "Stops a running job of yours through its node 0 agent, as Ctrl-C would: the workers' Python\n"
           "stacks are saved, SIGTERM goes to every worker (SIGKILL after --term-timeout), the other nodes\n"
           "stop too, and the job is recorded as stopped. Waits until the agent has ended.\n"
           "\n"
           "TARGET  a run id (primus-cli ps), an experiment or log directory, a job.json. None: your running\n"
           "        job started from this directory; when several run, they are listed and none is stopped.\n"
           "\n" +
           FormatOptionHelp(StopOptions()) +
           "\nExamples:\n"
           "  primus-cli stop\n"
           "  primus-cli stop 20261128-122132-de4b79\n"
           "A Slurm batch job: scancel JOBID does the same on every node.\n"
           "Exit codes: 0 stopped, 2 bad arguments or several jobs to choose from, 4 no such running job\n"
           "of yours on this host, or it did not end within --timeout.\n";
  }
  bool in_process() const override { return true; }

  Result<int> Run(const TaskContext& context) override {
    auto args = ParseStopArgs(context.args);
    if (!args.ok()) return args.error();
    monitor::SearchPlaces places = monitor::SearchPlaces::FromEnvironment();
    auto source = monitor::ResolveJob(args->target, places, monitor::JobChoice::kRunningHere);
    if (!source.ok()) return source.error();
    if (source->http) {
      return UsageError("stop signals the job's agent on this host, and " + source->Describe() + " is a port",
                        "name the job by its run id or directory, on the host of its node 0");
    }
    // The view names the process to signal: it must be ours (a shared
    // directory may hold another user's view naming any pid).
    if (!IsOwnRegularFile(source->file)) {
      return UnavailableError(source->Describe() + " is not a job view of yours: nothing is stopped through it",
                              "primus-cli ps lists your jobs");
    }
    auto view = monitor::ReadJobView(*source, 5);
    if (!view.ok()) return view.error();
    const nlohmann::json& job = jf::Object(*view, "job");
    std::string run_id = jf::Text(job, "run_id");
    std::string state = jf::Text(job, "state");
    if (telemetry::IsEndedJobState(state)) {
      return UnavailableError("job " + run_id + " is not running: " + state, "primus-cli ps lists your running jobs");
    }
    std::optional<ProcessStamp> agent = StampFromJson(jf::Object(job, "agent"));
    if (!agent || agent->pid <= 1 || agent->start == 0) {
      return UnavailableError("the view of job " + run_id + " names no agent (" + source->Describe() + ")");
    }
    if (agent->host != log::HostName()) {
      return UnavailableError("job " + run_id + "'s node 0 agent runs on " + agent->host + ", not on this host (" +
                                  log::HostName() + ")",
                              "run primus-cli stop there (a Slurm job: scancel JOBID)");
    }
    // Held by a pidfd from here on, the pid cannot be reused under us; the
    // checks after opening it are of the process the signal will reach.
    io::UniqueFd pidfd = io::OpenPidfd(agent->pid);
    if (CheckAlive(*agent) != Liveness::kAlive || !agent::IsOurAgent(agent->pid)) {
      return UnavailableError("job " + run_id + "'s agent (pid " + std::to_string(agent->pid) +
                                  ") is not a running primus-cli of yours",
                              "primus-cli ps shows whether the job still runs");
    }
    if (context.dry_run) {
      std::cout << "stop: would send SIGTERM to agent " << agent->pid << " of job " << run_id << "\n";
      return 0;
    }
    bool signalled = pidfd.valid() ? io::SignalThroughPidfd(pidfd.get(), SIGTERM) : ::kill(agent->pid, SIGTERM) == 0;
    if (!signalled) {
      return UnavailableError("cannot signal agent " + std::to_string(agent->pid) + ": " + std::strerror(errno));
    }
    if (!args->json) {
      std::cout << "stopping job " << run_id << " (SIGTERM to its agent, pid " << agent->pid << ")" << std::endl;
    }
    // --json: one object, whether the job ended (its final state) or --timeout 0 did not wait.
    auto print_json = [&](bool ended, const std::string& state) {
      std::cout << nlohmann::ordered_json({{"run_id", run_id},
                                           {"agent_pid", agent->pid},
                                           {"signalled", true},
                                           {"ended", ended},
                                           {"state", state.empty() ? nlohmann::ordered_json(nullptr)
                                                                   : nlohmann::ordered_json(state)}})
                       .dump()
                << "\n";
    };
    auto give_up = std::chrono::steady_clock::now() + std::chrono::duration<double>(args->timeout_s);
    while (CheckAlive(*agent) == Liveness::kAlive) {
      if (std::chrono::steady_clock::now() >= give_up) {
        if (args->timeout_s == 0) {
          if (args->json) print_json(false, "");
          return 0;
        }
        return UnavailableError("job " + run_id + " has not ended within " + fmt::format("{:g}", args->timeout_s) +
                                    " s (its agent, pid " + std::to_string(agent->pid) + ", still runs)",
                                "stop again to kill its workers at once, or wait: its --term-timeout may be longer");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::string ended;
    if (auto after = monitor::ReadJobView(*source, 5); after.ok()) ended = jf::Text(jf::Object(*after, "job"), "state");
    if (args->json) {
      print_json(true, ended);
      return 0;
    }
    std::cout << "job " << run_id << " ended" << (ended.empty() ? "" : ": " + ended) << "\n";
    return 0;
  }
};

TaskRegistration<StopTask> stop_registration;

}  // namespace
}  // namespace primus::tasks
