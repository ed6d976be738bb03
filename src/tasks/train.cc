// The `train` task: `train pretrain|posttrain --config exp.yaml [key=value...]`.
//
// One launch, in order: load and check the experiment (located errors, before
// anything starts) -> settle the world size and its variant -> create the
// experiment directory (config/, env/, metadata.json "running") -> patches
// and hooks -> the backend's worker command -> the node agent (one worker per
// GPU, restarts, per-rank logs in logs/, root cause) -> metadata.json with
// the end, exit status, restarts and root cause. Every failure path after the
// directory exists still writes metadata.json, so nothing is lost.
// --replay DIR re-runs a recorded experiment (train/replay.h).
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <iostream>

#include "agent/launch_spec_from_config.h"
#include "agent/control_protocol.h"
#include "agent/launch_summary.h"
#include "agent/platform_setup.h"
#include "agent/run_workers.h"
#include "config/environment.h"
#include "config/launcher_config.h"
#include "hooks/hook_runner.h"
#include "preflight/preflight_runner.h"
#include "platform/launcher_request.h"
#include "snapshot/experiment_dir.h"
#include "snapshot/metadata.h"
#include "snapshot/snapshot_files.h"
#include "tasks/task.h"
#include "train/backends.h"
#include "train/experiment.h"
#include "train/primus_experiment.h"
#include "train/primus_install.h"
#include "train/progress.h"
#include "train/replay.h"
#include "train/system_info.h"
#include "util/files.h"
#include "util/log.h"
#include "util/option_parser.h"
#include "util/process_environment.h"
#include "util/strings.h"
#include "util/subprocess.h"

namespace primus::tasks {
namespace {

using K = OptionSpec::Kind;

const std::vector<OptionSpec>& TrainOptions() {
  static const std::vector<OptionSpec> table = {
      {{"--config", "--exp"}, K::kValue, "FILE", "", "the experiment file"},
      {{"--backend"}, K::kValue, "torch|megatron|torchtitan|command", "", "override the experiment's backend"},
      {{"--replay"}, K::kValue, "DIR", "", "re-run a recorded experiment directory"},
      {{"--resume"}, K::kValue, "auto|none|PATH", "", "where to resume from (default: the experiment's checkpoint.resume)"},
      {{"--force"}, K::kFlag, "", "", "--replay: run even on incompatible hardware"},
      {{"--no-preflight"}, K::kFlag, "", "", "skip the fast preflight checks before the launch (config: train.preflight)"},
  };
  return table;
}

struct TrainArgs {
  std::string subtask;
  std::string config;
  std::string backend;
  std::string replay;
  std::string resume;
  bool force = false;
  bool no_preflight = false;
  std::vector<std::string> overrides;   // a.b=c
  std::vector<std::string> extra_args;  // everything else, for the backend
  std::vector<std::string> rest;        // both, in order: a Primus-format experiment's overrides, verbatim
};

Result<TrainArgs> ParseTrainArgs(const std::vector<std::string>& args) {
  TrainArgs parsed;
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


// Every scalar under a secret-named key of the experiment, at any depth
// (env.HF_TOKEN, wandb.api_key), is a secret value from now on.
void LearnSecrets(const config::Value& value, snapshot::Redactor* redactor, std::string_view name = "") {
  if (value.IsMap()) {
    for (const auto& [key, item] : value.AsMap()) LearnSecrets(item, redactor, key);
  } else if (value.IsList()) {
    for (const config::Value& item : value.AsList()) LearnSecrets(item, redactor, name);
  } else if (!value.IsNull()) {
    redactor->Learn(name, value.ScalarText());
  }
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
           FormatOptionHelp(TrainOptions());
  }

  Result<int> Run(const TaskContext& context) override {
    auto args = ParseTrainArgs(context.args);
    if (!args.ok()) return args.error();
    const config::LauncherConfig& launcher = *context.launcher;
    std::map<std::string, std::string> process_env = ProcessEnvironment();

    std::optional<train::ReplaySource> replay;
    train::ExperimentRequest request;
    request.environment = config::Environment::FromProcess();
    request.overrides = args->overrides;
    request.file = args->config;
    if (!args->replay.empty()) {
      auto source = train::LoadReplaySource(args->replay);
      if (!source.ok()) return source.error();
      replay = *source;
      request.file = replay->resolved_config;
    }
    if (!args->backend.empty()) request.overrides.push_back("backend=" + args->backend);

    auto experiment = train::LoadExperiment(request);
    if (!experiment.ok()) return experiment.error();
    // Its secrets (env: entries, overrides, any secret-named key, ${VAR}
    // values) are redacted from here on, in what we print and what we write.
    snapshot::Redactor& redactor = snapshot::ProcessRedactor();
    LearnSecrets(experiment->resolved, &redactor);

    // A Primus-format experiment runs through a Primus installation, with
    // everything after --config handed to it verbatim; never half-translated.
    std::optional<train::PrimusInstall> primus;
    std::optional<train::PrimusExperiment> primus_experiment;
    if (experiment->primus_style) {
      LearnSecrets(experiment->primus_file, &redactor);
      if (!args->backend.empty()) {
        return UsageError("--backend " + args->backend + " does not apply to " + experiment->file +
                              ": a Primus-format experiment (modules:) runs through Primus, with each module's framework",
                          "change modules.<name>.framework in the file, or drop --backend");
      }
      auto found = train::PrimusInstallFor(request.environment, launcher);
      if (!found.ok()) return Error{found.error().code, experiment->file + " is a Primus-format experiment (modules:), which runs through Primus; " + found.error().message, found.error().hint};
      primus = *found;
      auto read = train::ReadPrimusExperiment(experiment->primus_file, args->subtask, *primus, args->rest, request.environment);
      if (!read.ok()) return read.error();
      primus_experiment = *read;
    }

    // The world: launcher flags/env > the experiment > launcher files and defaults.
    auto spec = agent::LaunchSpecFromConfig(launcher, {"placeholder"});
    if (!spec.ok()) return spec.error();
    if (!experiment->nproc_per_node.empty() && !platform::SetExplicitly(launcher.OriginOf("direct.nproc_per_node"))) {
      auto from_experiment = ParseInt(experiment->nproc_per_node);
      if (!from_experiment || *from_experiment < 1) {
        return ConfigError(experiment->resolved.Find("distributed.nproc_per_node")->origin().Describe() +
                           ": distributed.nproc_per_node must be a positive number, not '" + experiment->nproc_per_node + "'");
      }
      spec->nproc_per_node = static_cast<int>(*from_experiment);
      spec->nproc_per_node_auto = false;
    }
    if (experiment->nnodes > 0 && !platform::SetExplicitly(launcher.OriginOf("direct.nnodes"))) spec->nnodes = experiment->nnodes;
    if (experiment->max_restarts >= 0 && !platform::SetExplicitly(launcher.OriginOf("direct.max_restarts"))) {
      spec->max_restarts = experiment->max_restarts;
    }
    // The hang watchdog: the user's --hang-timeout > the experiment's > train.hang_timeout
    // (a training run is never left without one by default; 0 still turns it off).
    std::string watchdog_origin = launcher.OriginOf("direct.hang_timeout").Describe();
    if (!platform::SetExplicitly(launcher.OriginOf("direct.hang_timeout"))) {
      if (experiment->hang_timeout >= 0) {
        spec->hang_timeout_s = experiment->hang_timeout;
        watchdog_origin = experiment->resolved.Find("fault_tolerance.hang_timeout")->origin().Describe();
      } else {
        spec->hang_timeout_s = launcher.GetDouble("train.hang_timeout");
        watchdog_origin = "train.hang_timeout, " + launcher.OriginOf("train.hang_timeout").Describe();
      }
    }
    // The experiment's env: joins the plan above the user's environment;
    // the plan then decides every worker variable (platform/environment_plan.h).
    std::vector<platform::EnvAssignment> experiment_env;
    if (const config::Value* env = experiment->resolved.Find("env"); env && env->IsMap()) {
      for (const auto& [name, value] : env->AsMap()) {
        if (replay && value.ScalarText() == snapshot::kRedacted) {
          // A secret recorded as <redacted>: the user's environment must give it again.
          if (!process_env.count(name)) log::Warn("replay: {} was redacted when recorded and is not set now", name);
          continue;
        }
        experiment_env.push_back({name, value.ScalarText(), value.origin().line ? value.origin().Describe() : ""});
      }
    }
    auto setup = agent::ApplyPlatform(launcher, experiment_env, &*spec);
    if (!setup.ok()) return setup.error();
    for (const auto* values : {&spec->env, &spec->env_overrides}) {
      for (const auto& [name, value] : *values) redactor.Learn(name, value);
    }
    for (const auto& [name, entry] : setup->plan.variables) redactor.Learn(name, entry.value);
    int world_size = spec->nnodes * spec->nproc_per_node;
    train::PrimusLayout primus_layout;
    if (primus_experiment) {
      auto layout = train::CheckPrimusLayout(*primus_experiment, world_size);
      if (!layout.ok()) {
        return Error{layout.error().code, experiment->file + ", module " + primus_experiment->module_name + ": " + layout.error().message,
                     layout.error().hint};
      }
      primus_layout = *layout;
    } else {
      if (Status status = train::ResolveForWorldSize(request, world_size, &*experiment); !status.ok()) return status.error();
      if (Status status = train::CheckBackendSubtask(*experiment, args->subtask); !status.ok()) return status.error();
    }
    // What the backend gets after --config: ours minus overrides, or Primus's everything.
    std::vector<std::string> backend_args = primus ? args->rest : args->extra_args;

    // Hooks and patches (found now, so that a bad one fails before anything is created).
    std::vector<std::string> hook_dirs;
    if (std::string builtin = hooks::BuiltinHooksDirectory(); !builtin.empty()) hook_dirs.push_back(builtin);
    hook_dirs.push_back(".primus/hooks");
    for (const std::string& dir : launcher.GetStringList("direct.hooks_dir")) hook_dirs.push_back(dir);
    for (const auto& dir : experiment->resolved.Find("hooks.dirs")->AsList()) {
      hook_dirs.push_back(JoinPath(DirName(experiment->file), dir.ScalarText()));
    }
    auto hooks = hooks::FindHooks({hook_dirs, "train", args->subtask});
    if (!hooks.ok()) return hooks.error();
    auto patches = hooks::PreparePatches(launcher.GetStringList("direct.patch"));
    if (!patches.ok()) return patches.error();

    bool run_preflight = !args->no_preflight && launcher.GetBool("train.preflight");
    std::string job_id = process_env.count("PRIMUS_JOB_ID") ? process_env.at("PRIMUS_JOB_ID") : launcher.scheduler().job_id;
    if (context.dry_run) {
      train::BackendInputs inputs{&*experiment, "<experiment dir>", backend_args, args->resume, process_env,
                                  args->subtask, primus ? &*primus : nullptr};
      auto command = train::BuildBackendCommand(inputs);
      if (!command.ok()) return command.error();
      std::cout << "experiment: " << Join(experiment->files, " <- ") << "\n";
      if (primus) {
        std::cout << "  name " << experiment->exp_name << ", through Primus " << primus->version << " at " << primus->root
                  << " (found by " << primus->found_by << "), world size " << world_size << " (" << spec->nnodes << " x "
                  << spec->nproc_per_node << ")\n"
                  << "  " << train::DescribePrimusPlan(*primus_experiment, primus_layout, world_size) << "\n";
      } else {
        // The effective layout: after the variant for this world size and every key=value override.
        const train::Parallelism& layout = experiment->parallelism;
        std::cout << "  name " << experiment->exp_name << ", backend " << experiment->backend << ", world size "
                  << world_size << " (" << spec->nnodes << " x " << spec->nproc_per_node << "), TP " << layout.tensor
                  << " PP " << layout.pipeline << " CP " << layout.context << " EP " << layout.expert << " DP "
                  << world_size / (layout.tensor * layout.pipeline * layout.context) << ", global batch "
                  << layout.global_batch << " = " << layout.micro_batch << " x "
                  << world_size / (layout.tensor * layout.pipeline * layout.context) << " x " << experiment->grad_accum
                  << " (micro batch x DP x accumulation)\n";
      }
      std::cout << "  experiment directory: " << experiment->workspace << "/" << experiment->exp_name << "_"
                << (job_id.empty() ? std::string("<time>") : job_id) << "/\n"
                << "  hang watchdog: "
                << (spec->hang_timeout_s > 0 ? fmt::format("{:g} s", spec->hang_timeout_s) : std::string("off")) << " ("
                << watchdog_origin << "); exit grace: "
                << (spec->exit_grace_s > 0 ? fmt::format("{:g} s", spec->exit_grace_s) : std::string("off")) << "\n"
                << "scripts that would run (none runs under --dry-run):\n"
                << (patches->empty() && hooks->empty() ? std::string("  (none)\n")
                                                       : hooks::DescribeScripts(*patches) + hooks::DescribeScripts(*hooks))
                << "worker command (once per rank):\n  " << ShellJoin(command->argv) << "\n"
                << agent::DescribeWorkerEnvironment(*setup)
                << (run_preflight ? "preflight: the fast checks would run before the launch (--no-preflight skips them)\n"
                                  : "preflight: off\n");
      return 0;
    }

    // The fast preflight subset: a doomed job stops here, before its
    // experiment directory exists, with the fix (docs/preflight.md).
    if (run_preflight) {
      preflight::JobPlacement placement{spec->nnodes, spec->node_rank, spec->master_addr, spec->master_port, {}};
      // The host ApplyPlatform detected above, from the same roots.
      std::vector<preflight::CheckResult> checks = preflight::QuickTrainChecks(
          setup->host, platform::Roots::FromEnvironment(), process_env, placement, experiment->workspace);
      std::vector<std::string> failures;
      for (const preflight::CheckResult& check : checks) {
        if (check.status == preflight::CheckStatus::kWarn) {
          log::Warn("preflight: {} {}: {} (expected {}); {}", check.category, check.name, check.value, check.expected, check.fix);
        } else if (check.status == preflight::CheckStatus::kFail) {
          failures.push_back(fmt::format("{} {}: {} (expected {})\n  fix: {}", check.category, check.name, check.value,
                                         check.expected, check.fix));
        }
      }
      if (!failures.empty()) {
        return EnvironmentError("preflight stopped the launch:\n" + Join(failures, "\n"),
                                "fix the above, or skip the checks with train --no-preflight");
      }
    }

    // From here on the experiment directory exists and every exit records itself.
    // A job with an id (PRIMUS_JOB_ID, or the scheduler's) has one directory,
    // <exp>_<job id>: its nodes share it (checkpoints, metrics; each node's
    // snapshot inside), a requeued job finds its checkpoints again, and
    // `slurm sbatch` put the batch script and Slurm's log there already.
    std::string shared_root;
    auto dir = [&]() -> Result<snapshot::ExperimentDir> {
      if (!job_id.empty()) {
        auto job = snapshot::OpenJobExperimentDir(experiment->workspace, experiment->exp_name, job_id, spec->node_rank);
        if (!job.ok()) return job.error();
        shared_root = job->shared_root;
        return job->node;
      }
      auto own = snapshot::CreateExperimentDir(experiment->workspace, experiment->exp_name, std::time(nullptr));
      if (own.ok()) shared_root = own->root;
      if (own.ok() && spec->nnodes > 1) {
        log::Warn("no job id (PRIMUS_JOB_ID, or the scheduler's): this node writes its own experiment directory {}, "
                  "so checkpoints are not shared between nodes; export the same PRIMUS_JOB_ID on every node",
                  own->root);
      }
      return own;
    }();
    if (!dir.ok()) return dir.error();
    snapshot::RunMetadata metadata;
    metadata.primus_version = PRIMUS_VERSION;
    metadata.argv = context.command_line;
    metadata.cwd = CurrentDir();
    metadata.git = snapshot::DetectGit(metadata.cwd);
    metadata.task = "train " + args->subtask;
    metadata.hosts = {log::HostName()};
    metadata.start_time = snapshot::IsoTimeUtc(snapshot::NowEpochSeconds());
    metadata.log_dir = dir->logs_dir();
    if (replay) metadata.replay_of = replay->dir.root;
    auto finish = [&](int exit_code, const std::string& status) {
      metadata.exit_code = exit_code;
      metadata.status = status;
      metadata.end_time = snapshot::IsoTimeUtc(snapshot::NowEpochSeconds());
      if (Status written = snapshot::WriteMetadata(dir->metadata_file(), metadata, redactor); !written.ok()) {
        log::Warn("{}", written.error().message);
      }
    };
    auto fail = [&](const Error& error) -> Result<int> {
      metadata.root_cause = {{"launcher_error", error.message}};
      finish(static_cast<int>(error.code), "failed");
      log::Info("experiment directory: {}", dir->root);
      return error;
    };
    if (Status written = snapshot::WriteMetadata(dir->metadata_file(), metadata, redactor); !written.ok()) {
      return written.error();
    }
    log::Info("experiment directory: {}", dir->root);

    nlohmann::ordered_json system = train::DescribeSystem(setup->host);
    train::AddPythonVersions(experiment->interpreter, &system);
    if (primus) system["primus_backend"] = primus->version + " at " + primus->root;
    if (replay) {
      auto differences = train::CompareSystems(replay->system, system);
      bool incompatible = std::any_of(differences.begin(), differences.end(), [](const auto& d) { return d.incompatible; });
      std::cerr << "replay of " << replay->dir.root << " (" << replay->metadata.start_time << "): then vs now\n"
                << train::FormatDifferences(differences);
      if (incompatible && !args->force) {
        return fail(EnvironmentError("this machine is not compatible with the recorded run of " + replay->dir.root,
                                     "use a machine with the recorded GPUs, or add --force to run anyway"));
      }
    }
    if (Status written = snapshot::WriteSystemInfo(*dir, system, redactor); !written.ok()) return fail(written.error());
    auto copied = snapshot::WriteConfigFiles(*dir, replay ? std::vector<std::string>{} : experiment->files,
                                             (primus ? experiment->primus_file : experiment->resolved)
                                                 .ToYaml(/*escape_dollars_for_reload=*/true),
                                             redactor);
    if (!copied.ok()) return fail(copied.error());

    // Worker environment: experiment env over launcher config env, hooks over both;
    // the user's own environment and --env always win (the agent applies that).
    snapshot::EnvWithOrigins origins;
    if (replay) {
      for (const auto& [name, entry] : replay->env) {
        if (!train::IsReplayedVariable(name)) continue;
        if (entry.value == snapshot::kRedacted) {
          if (!process_env.count(name)) log::Warn("replay: {} was redacted when recorded and is not set now", name);
          continue;
        }
        spec->env_overrides[name] = entry.value;
        origins[name] = {entry.value, "replay of " + replay->dir.root + " (" + entry.origin + ")"};
      }
    }
    for (const auto& [name, entry] : setup->plan.variables) origins[name] = {entry.value, entry.origin};

    std::vector<hooks::Script> scripts = *patches;
    scripts.insert(scripts.end(), hooks->begin(), hooks->end());
    hooks::RunContext hook_context;
    hook_context.node_rank = spec->node_rank;
    hook_context.env = {{"PRIMUS_TASK", "train"}, {"PRIMUS_SUBTASK", args->subtask}, {"PRIMUS_EXP_DIR", dir->root},
                        {"PRIMUS_CONFIG", dir->config_dir() + "/resolved.yaml"}, {"NODE_RANK", std::to_string(spec->node_rank)},
                        {"NNODES", std::to_string(spec->nnodes)}};
    auto hook_outcome = hooks::RunScripts(scripts, hook_context);
    if (!hook_outcome.ok()) return fail(hook_outcome.error());
    // A hook computed these for this launch: they win over profiles and files.
    for (const auto& [name, value] : hook_outcome->env) {
      redactor.Learn(name, value);
      spec->env_overrides[name] = value;
      origins[name] = {value, "hook env. line"};
    }

    std::vector<std::string> extra = hook_outcome->extra_args;
    extra.insert(extra.end(), backend_args.begin(), backend_args.end());
    train::BackendInputs inputs{&*experiment, shared_root, extra, args->resume, process_env,
                                args->subtask, primus ? &*primus : nullptr};
    if (primus) {
      log::Info("through Primus {} at {} ({}): {}", primus->version, primus->root, primus->found_by,
                train::DescribePrimusPlan(*primus_experiment, primus_layout, world_size));
    }
    auto command = train::BuildBackendCommand(inputs);
    if (!command.ok()) return fail(command.error());
    for (const auto& [path, content] : command->files) {
      if (Status written = WriteFileAtomic(path, content); !written.ok()) return fail(written.error());
    }
    for (const auto& [name, value] : command->env) {
      redactor.Learn(name, value);
      if (!spec->env.count(name)) {
        spec->env[name] = value;
        origins[name] = {value, "backend " + experiment->backend};
      }
    }
    // env/: everything a worker starts with (the per-rank RANK/LOCAL_RANK/...
    // are the agent's, docs/agent.md), each with where it came from.
    snapshot::EnvWithOrigins worker_env;
    for (const auto& [name, value] : process_env) worker_env[name] = {value, "user environment"};
    for (const auto& [name, value] : spec->env) {
      if (!process_env.count(name)) worker_env[name] = {value, "backend " + experiment->backend};
    }
    for (const auto& [name, value] : spec->env_overrides) {
      worker_env[name] = origins.count(name) ? origins[name] : snapshot::EnvEntry{value, "--env"};
    }
    worker_env.erase(agent::kJobTokenVariable);  // the agent's, never a worker's (agent/worker_env.h)
    worker_env["WORLD_SIZE"] = {std::to_string(world_size), "node agent"};
    worker_env["NNODES"] = {std::to_string(spec->nnodes), "node agent"};
    auto write_env = [&]() {
      if (Status written = snapshot::WriteEnvironment(*dir, worker_env, redactor); !written.ok()) {
        log::Warn("{}", written.error().message);
      }
    };
    write_env();

    spec->argv = command->argv;
    spec->log_dir = dir->logs_dir();
    spec->run_id = Split(dir->root, '/').back();
    log::Debug("worker command: {}", ShellJoin(spec->argv));

    std::optional<train::ProgressFollower> progress;
    if (!command->metrics_file.empty()) {
      progress.emplace(command->metrics_file, experiment->resolved.Find("training.steps")->AsInt(),
                       isatty(STDERR_FILENO) != 0, 30.0);
    }
    auto result = agent::RunWorkers(*spec);
    if (progress) progress->Stop();
    if (!result.ok()) return fail(result.error());

    worker_env["MASTER_ADDR"] = {result->master_addr, "node agent"};
    worker_env["MASTER_PORT"] = {std::to_string(result->master_port), "node agent"};
    worker_env["TORCHELASTIC_RUN_ID"] = {result->run_id, "node agent"};
    write_env();
    metadata.restarts = result->restarts;
    metadata.hosts = {log::HostName()};
    if (result->root_cause) {
      const agent::WorkerFailure& cause = *result->root_cause;
      metadata.root_cause = {{"host", cause.host},       {"rank", cause.rank},         {"local_rank", cause.local_rank},
                             {"pid", cause.pid},         {"attempt", cause.attempt},   {"exit_code", cause.exit_code},
                             {"signal", cause.signal},   {"hung", cause.hung},         {"message", cause.message},
                             {"log_file", cause.log_file}};
    }
    std::string status = result->exit_code == 0                                      ? "succeeded"
                         : result->agent_signal                                     ? "interrupted"
                         : result->exit_code == static_cast<int>(ExitCode::kStuckAtExit) ? "stuck_at_exit"
                                                                                    : "failed";
    finish(result->exit_code, status);
    log::Info("experiment {}: {} (exit {}), {}", dir->root, status, result->exit_code,
              result->restarts ? std::to_string(result->restarts) + " restart(s)" : "no restarts");
    return result->exit_code;
  }
};

TaskRegistration<TrainTask> registration;

}  // namespace
}  // namespace primus::tasks
