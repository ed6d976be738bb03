// The `train` task: `train pretrain|posttrain --config exp.yaml [key=value...]`.
//
// One launch, in order (tasks/train_steps.h): load and check the experiment
// (located errors, before anything starts) -> its launch settings join the
// launcher configuration as a layer (train/launch_settings.h) -> settle the
// world size and its variant -> the fast preflight checks -> create the
// experiment directory (config/, env/, metadata.json "running") -> patches
// and hooks -> the backend's worker command -> the node agent (one worker per
// GPU, restarts, per-rank logs in logs/, root cause) -> metadata.json with
// the end, exit status, restarts and root cause. Every failure path after the
// directory exists still writes metadata.json, so nothing is lost.
// --replay DIR re-runs a recorded experiment (train/replay.h).
#include <signal.h>

#include <cstdlib>

#include "io/signal_channel.h"
#include "tasks/task.h"
#include "tasks/train_steps.h"
#include "util/abnormal_end.h"
#include "util/option_parser.h"
#include "util/environment.h"
#include "util/strings.h"

namespace primus::tasks {
namespace {

using K = OptionSpec::Kind;

const std::vector<OptionSpec>& TrainOptions() {
  static const std::vector<OptionSpec> table = {
      {{"--config", "--exp"}, K::kValue, "FILE", "", "the experiment file"},
      {{"--backend"}, K::kValue, "torch|megatron|torchtitan|command", "", "override the experiment's backend"},
      {{"--replay"}, K::kValue, "DIR", "", "re-run a recorded experiment directory"},
      {{"--resume"}, K::kValue, "auto|none|PATH", "", "where to resume from (default: the experiment's checkpoint.resume)"},
      {{"--force"}, K::kFlag, "", "",
       "--replay: run even on incompatible hardware, or with recorded libraries, interpreters or hooks"},
      {{"--no-preflight"}, K::kFlag, "", "", "skip the fast preflight checks before the launch (config: train.preflight)"},
      {{"--preflight"}, K::kValue, "quick|full|off", "",
       "quick (default); full: a gate, node 0 judges all; off"},
  };
  return table;
}

Result<TrainRequest> ParseTrainArgs(const std::vector<std::string>& args) {
  TrainRequest parsed;
  if (args.empty() || args[0].starts_with("-")) {
    return UsageError("train needs a subtask: pretrain or posttrain", "write: train pretrain --config exp.yaml");
  }
  parsed.subtask = args[0];
  if (parsed.subtask != "pretrain" && parsed.subtask != "posttrain") {
    return UsageError("unknown train subtask '" + parsed.subtask + "'" + DidYouMean(parsed.subtask, {"pretrain", "posttrain"}),
                      "train subtasks: pretrain, posttrain");
  }
  auto options = ParseOptions(args, 1, {&TrainOptions()}, UnknownOptionPolicy::kPassThrough, "task 'train'");
  if (!options.ok()) return options.error();
  for (const ParsedOption& option : options->options) {
    const std::string& name = option.spec->names.front();
    if (name == "--config") parsed.config = option.value;
    else if (name == "--backend") parsed.backend = option.value;
    else if (name == "--replay") parsed.replay = option.value;
    else if (name == "--resume") parsed.resume = option.value;
    else if (name == "--force") parsed.force = option.value == "true";
    else if (name == "--no-preflight") parsed.no_preflight = true;
    else if (name == "--preflight") {
      if (option.value != "quick" && option.value != "full" && option.value != "off") {
        return UsageError("--preflight takes quick, full or off, not '" + option.value + "'",
                          "full: every node's host, GPU, network and software checks, judged by node 0, before the "
                          "launch");
      }
      if (option.value == "off") parsed.no_preflight = true;
      parsed.full_preflight = option.value == "full";
    }
  }
  std::vector<std::string> rest = options->passthrough;
  rest.insert(rest.end(), args.begin() + static_cast<long>(options->next), args.end());
  parsed.rest = rest;
  for (const std::string& arg : rest) {
    // key=value (no leading dash, a dotted or plain key) overrides the experiment.
    size_t equals = arg.find('=');
    if (!arg.starts_with("-") && equals != std::string::npos && equals > 0) parsed.overrides.push_back(arg);
    else parsed.extra_args.push_back(arg);
  }
  if (parsed.config.empty() && parsed.replay.empty()) {
    // The public Primus scripts take the experiment from $EXP.
    if (const char* exp = std::getenv("EXP"); exp && *exp) parsed.config = exp;
  }
  if (parsed.config.empty() && parsed.replay.empty()) {
    return UsageError("train " + parsed.subtask + " needs --config FILE (or --replay DIR, or EXP=FILE in the environment)",
                      "write: train " + parsed.subtask + " --config exp.yaml [key=value ...]");
  }
  return parsed;
}

Error StoppedBetweenSteps(int signal) {
  return StoppedBySignal(signal, "train: stopped by " + io::SignalName(signal) + " before the workers started");
}

class TrainTask : public Task {
 public:
  std::string name() const override { return "train"; }
  std::string summary() const override { return "train a model: pretrain | posttrain"; }
  std::vector<std::string> subtasks() const override { return {"pretrain", "posttrain"}; }
  std::vector<const std::vector<OptionSpec>*> options(const std::string&) const override { return {&TrainOptions()}; }
  std::string help() const override {
    return "usage: primus-cli <mode> ... -- train pretrain|posttrain --config FILE [key=value ...] [--backend B]\n"
           "         [--resume auto|none|PATH] [--replay DIR [--force]] [backend arguments ...]\n"
           "\n"
           "Trains through the node agent: one worker per GPU (direct --nproc-per-node, or the\n"
           "experiment's distributed.nproc_per_node), restarts, per-rank logs, and an experiment\n"
           "directory <workspace>/<exp_name>_<time>/ with config/, env/, logs/ and metadata.json.\n"
           "key=value arguments override experiment keys (training.steps=50); other arguments go to\n"
           "the backend. --replay re-runs a recorded experiment with its configuration and\n"
           "environment, after comparing the hardware. Without --config, $EXP names the experiment\n"
           "file, as in the public Primus scripts. Schema: docs/experiment.md.\n"
           "\noptions:\n" +
           FormatOptionHelp(TrainOptions()) +
           "\nExamples:\n"
           "  primus-cli direct -- train pretrain --config exp.yaml training.steps=50\n"
           "  primus-cli slurm sbatch -N 8 -- train pretrain --config exp.yaml --preflight full\n"
           "  primus-cli --dry-run direct -- train pretrain --config exp.yaml     # the plan; starts nothing\n"
           "  primus-cli direct -- train pretrain --replay output/exp_2025_11_10_134522/\n"
           "  primus-cli init llama3-8b --gpus 8                                  # an experiment to start from\n"
           "\nExit codes: 0 the run succeeded; the failing worker's own code (the banner names it); 2 bad\n"
           "arguments; 3 the experiment is wrong; 4 unavailable (a GPU, the framework, a checkout, preflight);\n"
           "5 this node left the job; 6 a worker stuck at exit was stopped; 128+N the launcher got signal N.\n";
  }

  // One launch, step by step (tasks/train_steps.h).
  Result<int> Run(const TaskContext& context) override {
    auto args = ParseTrainArgs(context.args);
    if (!args.ok()) return args.error();
    TrainLaunch launch;
    launch.args = std::move(*args);
    launch.process_env = ProcessEnvironment();
    // Everything is read and checked before anything is created.
    if (Status status = LoadRequestedExperiment(&launch); !status.ok()) return status.error();
    if (Status status = ResolvePrimus(&launch, *context.launcher); !status.ok()) return status.error();
    if (Status status = ApplyExperimentLaunchSettings(&launch, *context.launcher); !status.ok()) return status.error();
    if (Status status = BuildLaunchSpec(&launch); !status.ok()) return status.error();
    if (Status status = FindScripts(&launch); !status.ok()) return status.error();
    if (context.dry_run) return PrintDryRun(launch);
    if (Status status = CheckReplayTrust(launch); !status.ok()) return status.error();
    if (Status status = RunPreflight(launch); !status.ok()) return status.error();
    // From before metadata.json says "running", Ctrl-C and SIGTERM are read
    // between the steps (the hooks and the agent read their own), never fatal.
    auto signals = io::SignalChannel::Open();
    if (!signals.ok()) return signals.error();
    if (Status status = OpenExperimentDir(&launch, context); !status.ok()) return status.error();
    // From here on the experiment directory exists and every exit records
    // itself: an error, a signal, an escaped exception (the last resort).
    AbnormalEndRecord last_resort([&launch](const std::string& why) { RecordFailure(&launch, TaskError(why)); });
    for (auto step : {WriteSnapshot, RunHooks, BuildWorkerCommand}) {
      if (int signal = (*signals)->ReadStopSignal()) return RecordFailure(&launch, StoppedBetweenSteps(signal));
      if (Status status = step(&launch); !status.ok()) return RecordFailure(&launch, status.error());
    }
    if (int signal = (*signals)->ReadStopSignal()) return RecordFailure(&launch, StoppedBetweenSteps(signal));
    auto result = Launch(&launch);
    if (!result.ok()) return RecordFailure(&launch, result.error());
    int code = RecordOutcome(&launch, *result);
    // A Ctrl-C while the end was recorded: the record is written; nothing left to stop.
    (*signals)->ReadStopSignal();
    return code;
  }
};

TaskRegistration<TrainTask> train_registration;

}  // namespace
}  // namespace primus::tasks
