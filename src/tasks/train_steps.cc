#include "tasks/train_steps.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "agent/launch_plan.h"
#include "agent/launch_spec.h"
#include "agent/launch_summary.h"
#include "preflight/preflight_runner.h"
#include "snapshot/redaction.h"
#include "config/render_config.h"
#include "io/subprocess.h"
#include "platform/visible_devices.h"
#include "train/earlier_checkpoints.h"
#include "train/framework_needs.h"
#include "train/launch_settings.h"
#include "train/progress.h"
#include "train/system_info.h"
#include "util/clock.h"
#include "util/files.h"
#include "util/json_fields.h"
#include "util/log.h"
#include "util/private_files.h"
#include "util/strings.h"

namespace primus::tasks {
namespace {

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

// The experiment's env: entries for the environment plan, where it ranks
// above the user's environment; a secret recorded as <redacted> in a
// replayed run must come from the user's environment again.
std::vector<platform::EnvAssignment> ExperimentEnv(const TrainLaunch& launch) {
  std::vector<platform::EnvAssignment> env;
  const config::Value* entries = launch.experiment.resolved.Find("env");
  if (!entries || !entries->IsMap()) return env;
  for (const auto& [name, value] : entries->AsMap()) {
    if (launch.replay && value.ScalarText() == snapshot::kRedacted) {
      if (!launch.process_env.count(name)) log::Warn("replay: {} was redacted when recorded and is not set now", name);
      continue;
    }
    env.push_back({name, value.ScalarText(), value.origin().line ? value.origin().Describe() : ""});
  }
  return env;
}

// The world, each launch setting with its origin (the experiment's layer shows here).
std::string DescribeLaunchSettings(const config::LauncherConfig& launcher) {
  std::vector<std::string> settings;
  for (const char* key : {"direct.nproc_per_node", "direct.nnodes", "direct.max_restarts"}) {
    settings.push_back(fmt::format("{} {} ({})", key, launcher.effective().Find(key)->ScalarText(),
                                   launcher.OriginOf(key).Describe()));
  }
  return "  launch settings: " + Join(settings, ", ") + "\n";
}

// The environment the workers will start with, as far as it is known before
// the hooks run: the user's, the plan's (profiles, network, the experiment's
// env:), then --env.
Environment WorkersEnvironment(const TrainLaunch& launch) {
  Environment workers = launch.workers.setup.plan.ApplyTo(launch.process_env);
  for (const auto* values : {&launch.workers.spec.env, &launch.workers.spec.env_overrides}) {
    for (const auto& [name, value] : *values) workers[name] = value;
  }
  return workers;
}

// The GPU-visibility variables the host's runtime reads from the workers'
// environment, as set: what hid GPUs when fewer are visible than the host has.
std::string VisibilitySetting(const platform::HostInfo& host, const Environment& workers) {
  std::vector<std::string> set;
  for (const std::string& name : platform::AppliedVisibilityVariables(host, workers)) {
    set.push_back(name + "=" + *Lookup(workers, name));
  }
  return Join(set, ", ");
}

// What the backend's workers need and what this host gives them
// (train/framework_needs.h), worked out once for both checks below.
struct HostFit {
  Environment workers;  // WorkersEnvironment
  int visible_gpus = 0;
  train::FrameworkNeeds needs;
};

HostFit FitOf(const TrainLaunch& launch) {
  HostFit fit;
  fit.workers = WorkersEnvironment(launch);
  fit.visible_gpus = platform::CountVisibleGpus(launch.workers.setup.host, fit.workers);
  fit.needs = train::NeedsOf(launch.experiment, fit.visible_gpus);
  return fit;
}

// Whether this host's visible GPUs can take the workers the backend puts on them.
Status CheckGpusFitHost(const TrainLaunch& launch, const HostFit& fit) {
  const platform::HostInfo& host = launch.workers.setup.host;
  return train::CheckGpusFit(fit.needs, launch.workers.spec.nproc_per_node, fit.visible_gpus,
                             host.hostname.empty() ? log::HostName() : host.hostname,
                             VisibilitySetting(host, fit.workers));
}

// Whether the workers' interpreter finds the modules the backend imports.
Status CheckInterpreterHasFramework(const TrainLaunch& launch, const HostFit& fit) {
  const train::ExperimentConfig& experiment = launch.experiment;
  const train::FrameworkNeeds& needs = fit.needs;
  if (needs.modules.empty()) return Status::Ok();
  if (!experiment.conda_env.empty()) {
    log::Debug("the conda environment {} is not probed for {} (conda run takes seconds)", experiment.conda_env,
               Join(needs.modules, ", "));
    return Status::Ok();
  }
  std::string interpreter = experiment.interpreter.empty() ? "python3" : experiment.interpreter;
  std::vector<std::string> argv = {interpreter};
  for (const std::string& arg : train::FindModulesArgs(needs)) argv.push_back(arg);
  // In the workers' environment (a PYTHONPATH or PATH the profiles or the
  // experiment set counts), from the directory they start in.
  CommandOptions options;
  options.clear_env = true;
  for (const auto& [name, value] : fit.workers) options.env[name] = value;
  options.timeout_s = 30;
  auto probe = RunCommand(argv, options);
  if (probe.ok() && probe->timed_out) {
    log::Warn("{} did not answer within 30 s whether it has {}; the launch goes on without knowing", interpreter,
              Join(needs.modules, " and "));
    return Status::Ok();
  }
  if (!probe.ok()) {
    return UnavailableError("the workers' interpreter " + interpreter + " cannot be started: " + probe.error().message,
                            "install it, or name another: python.interpreter or python.venv in the experiment");
  }
  if (probe->exit_code != 0) {
    return UnavailableError("the workers' interpreter " + interpreter + " failed to start (exit " +
                                std::to_string(probe->exit_code) + "): " + std::string(Trim(probe->Tail(2))),
                            "name a working interpreter: python.interpreter or python.venv in the experiment");
  }
  return train::CheckModulesFound(needs, probe->out, interpreter, experiment.backend);
}

// A failing worker as metadata.json records it (root_cause, failures).
nlohmann::ordered_json FailureJson(const agent::WorkerFailure& cause) {
  return {{"host", cause.host},     {"rank", cause.rank},       {"local_rank", cause.local_rank},
          {"pid", cause.pid},       {"attempt", cause.attempt}, {"exit_code", cause.exit_code},
          {"signal", cause.signal}, {"hung", cause.hung},       {"message", cause.message},
          {"log_file", cause.log_file}};
}

std::string DescribeWorld(const TrainLaunch& launch) {
  const train::ExperimentConfig& experiment = launch.experiment;
  const agent::LaunchSpec& spec = launch.workers.spec;
  int world_size = launch.world_size;
  if (launch.primus) {
    return fmt::format("  name {}, through Primus {} at {} (found by {}), world size {} ({} x {})\n  {}\n",
                       experiment.exp_name, launch.primus->version, launch.primus->root, launch.primus->found_by,
                       world_size, spec.nnodes, spec.nproc_per_node,
                       train::DescribePrimusPlan(*launch.primus_experiment, launch.primus_layout, world_size));
  }
  // The effective layout: after the variant for this world size and every key=value override.
  const train::Parallelism& layout = experiment.parallelism;
  int data_parallel = world_size / (layout.tensor * layout.pipeline * layout.context);
  return fmt::format(
      "  name {}, backend {}, world size {} ({} x {}), TP {} PP {} CP {} EP {} DP {}, global batch {} = {} x {} x {} "
      "(micro batch x DP x accumulation)\n",
      experiment.exp_name, experiment.backend, world_size, spec.nnodes, spec.nproc_per_node, layout.tensor,
      layout.pipeline, layout.context, layout.expert, data_parallel, layout.global_batch, layout.micro_batch,
      data_parallel, experiment.grad_accum);
}

bool ReplayNeedsForce(const TrainLaunch& launch) {
  return std::any_of(launch.replay_risks.begin(), launch.replay_risks.end(),
                     [](const train::ReplayRisk& risk) { return risk.needs_force; });
}

// The replay's lines on what changes the code that runs, for its header and
// --dry-run; "(needs --force)" marks what a launch does not run without it.
std::string ReplayRiskText(const TrainLaunch& launch) {
  if (launch.replay_risks.empty()) return "replay: the recorded run changes no library, interpreter or hook here\n";
  std::string text = "replay: what the recorded run sets that changes the code that runs here:\n";
  for (const train::ReplayRisk& risk : launch.replay_risks) {
    text += "  " + risk.text + (risk.needs_force ? (launch.args.force ? "  [--force]" : "  (needs --force)") : "") + "\n";
  }
  return text;
}

std::string Seconds(double seconds) { return seconds > 0 ? fmt::format("{:g} s", seconds) : std::string("off"); }

void WriteWorkerEnv(const TrainLaunch& launch) {
  if (Status written = snapshot::WriteEnvironment(launch.dir, launch.worker_env, snapshot::ProcessRedactor());
      !written.ok()) {
    log::Warn("{}", written.error().message);
  }
}

// Every node's host by node rank, from the job view node 0 kept
// (logs/telemetry/job.json); this host alone when there is none (telemetry off,
// or another node's launcher).
std::vector<std::string> JobHosts(const std::string& job_view) {
  std::vector<std::string> hosts;
  auto text = ReadRegularFile(job_view, 64 << 20);
  std::optional<nlohmann::json> view = text.ok() ? json_fields::Parse(*text) : std::nullopt;
  std::map<int, std::string> by_rank;
  for (const auto& node : view ? json_fields::Array(*view, "nodes") : nlohmann::json::array()) {
    auto rank = json_fields::IntegerIn(node, "node_rank", 0, 1 << 20);
    std::string host = json_fields::Text(node, "host");
    if (rank && !host.empty() && by_rank.size() < 65536) by_rank[*rank] = host;
  }
  for (const auto& [rank, host] : by_rank) hosts.push_back(host);
  if (hosts.empty()) hosts.push_back(log::HostName());
  return hosts;
}

void CloseLaunchLog(TrainLaunch* launch) {
  if (!launch->launch_log.valid()) return;
  log::CopyTo(-1);
  launch->launch_log.Reset();
}

void WriteMetadataOrWarn(const TrainLaunch& launch) {
  if (Status written = snapshot::WriteMetadata(launch.dir.metadata_file(), launch.metadata, snapshot::ProcessRedactor());
      !written.ok()) {
    log::Warn("{}", written.error().message);
  }
}

void Finish(TrainLaunch* launch, int exit_code, const std::string& status) {
  launch->metadata.exit_code = exit_code;
  launch->metadata.status = status;
  launch->metadata.end_time = snapshot::IsoTimeUtc(WallSeconds());
  WriteMetadataOrWarn(*launch);
}

// A replay hands the backend what the recorded run did, unless this command
// line gives arguments of its own (then they replace the recorded ones, said so).
Status ReplayBackendArgs(TrainLaunch* launch) {
  if (!launch->replay || !launch->replay->metadata.layout) return Status::Ok();  // an older snapshot: not recorded
  const std::vector<std::string>& recorded = launch->replay->metadata.backend_args;
  if (!launch->backend_args.empty()) {
    if (launch->backend_args != recorded) {
      log::Warn("replay: the backend arguments of this command line ({}) replace the recorded ones ({})",
                ShellJoin(launch->backend_args), recorded.empty() ? "none" : ShellJoin(recorded));
    }
    return Status::Ok();
  }
  for (const std::string& arg : recorded) {
    if (arg.find(snapshot::kRedacted) != std::string::npos) {
      return ConfigError("--replay " + launch->replay->dir.root + ": the recorded backend argument '" + arg +
                             "' held a secret, which was not recorded",
                         "give the backend arguments again after --replay " + launch->args.replay);
    }
  }
  launch->backend_args = recorded;
  if (!recorded.empty()) log::Info("replay: the recorded backend arguments: {}", ShellJoin(recorded));
  return Status::Ok();
}

// The replay's then/now table: the machine (env/system_info.json), the code and the layout.
std::vector<train::SystemDifference> ReplayDifferences(const TrainLaunch& launch, const nlohmann::ordered_json& system) {
  std::vector<train::SystemDifference> differences = train::CompareSystems(launch.replay->system, system);
  snapshot::RunLayout layout{launch.workers.spec.nnodes, launch.workers.spec.nproc_per_node, launch.world_size};
  std::vector<train::SystemDifference> launch_differences =
      train::CompareLaunch(launch.replay->metadata, snapshot::DetectGit(CurrentDir()), layout);
  differences.insert(differences.begin(), launch_differences.begin(), launch_differences.end());
  return differences;
}

// What of the table refuses the replay without --force.
std::vector<std::string> Incompatible(const std::vector<train::SystemDifference>& differences) {
  std::vector<std::string> what;
  for (const train::SystemDifference& difference : differences) {
    if (difference.incompatible) what.push_back(difference.what);
  }
  return what;
}

nlohmann::ordered_json DescribeThisSystem(const TrainLaunch& launch) {
  nlohmann::ordered_json system = train::DescribeSystem(launch.workers.setup.host);
  train::AddPythonVersions(launch.experiment.interpreter, &system);
  if (launch.primus) system["primus_backend"] = launch.primus->version + " at " + launch.primus->root;
  return system;
}

// resume auto across runs (train/earlier_checkpoints.h): the newest earlier
// run's checkpoints, when the experiment keeps them in its run directory
// (no checkpoint.dir of its own) and its backend can take them.
std::string ResumeSetting(const TrainLaunch& launch) {
  return launch.args.resume.empty() ? launch.experiment.resolved.Find("checkpoint.resume")->ScalarText()
                                    : launch.args.resume;
}

bool ResumesAcrossRuns(const TrainLaunch& launch) {
  const config::Value& resolved = launch.experiment.resolved;
  return ResumeSetting(launch) == "auto" && launch.experiment.backend == "torch" && !launch.primus &&
         resolved.Find("checkpoint.dir")->ScalarText().empty() && resolved.Find("checkpoint.interval")->AsInt() > 0;
}

std::string EarlierRunToResume(const TrainLaunch& launch) {
  const train::ExperimentConfig& experiment = launch.experiment;
  // A replay runs as the recorded run did, not from another run's checkpoints.
  if (!ResumesAcrossRuns(launch) || launch.replay) return "";
  auto found = train::FindEarlierCheckpoints(experiment.workspace, experiment.exp_name, launch.shared_root);
  if (!found) return "";
  log::Info("resume auto: unless this run has checkpoints of its own, it starts from the newest valid one of the "
            "earlier run in {} (its newest is step {})",
            found->dir, found->newest_step);
  return found->dir;
}

// A replay runs the hooks and patches the recorded run ran, from their copies
// in its snapshot, and says where today's differ: an original changed or gone,
// a hook found now that did not run then. A --patch of this command line runs
// after them.
Status UseRecordedScripts(TrainLaunch* launch, const TaskScripts& found_now) {
  const train::ReplaySource& replay = *launch->replay;
  std::vector<std::string> recorded_paths;
  for (const snapshot::RecordedScript& recorded : replay.metadata.scripts) {
    hooks::Script::Kind kind = recorded.kind == "patch" ? hooks::Script::Kind::kPatch : hooks::Script::Kind::kHook;
    auto script = hooks::PrepareScript(JoinPath(replay.dir.root, recorded.copy), kind);
    if (!script.ok()) {
      return ConfigError("--replay " + replay.dir.root + ": the recorded copy of " + recorded.path + " cannot be run: " +
                             script.error().message,
                         "the snapshot is incomplete; run the experiment again with train --config");
    }
    if (auto now = snapshot::FileSha256(recorded.path); !now.ok()) {
      log::Info("replay: {} {} is gone since the recorded run; its recorded copy runs", recorded.kind, recorded.path);
    } else if (*now != recorded.sha256) {
      log::Warn("replay: {} {} changed since the recorded run; its recorded copy runs ({})", recorded.kind,
                recorded.path, recorded.copy);
    }
    (kind == hooks::Script::Kind::kPatch ? launch->scripts.patches : launch->scripts.hooks).push_back(*script);
    launch->script_origins.push_back(recorded.path);
    recorded_paths.push_back(recorded.path);
  }
  for (const hooks::Script& hook : found_now.hooks) {
    if (std::find(recorded_paths.begin(), recorded_paths.end(), hook.path) == recorded_paths.end()) {
      log::Warn("replay: hook {} did not run in the recorded run and does not run now", hook.path);
    }
  }
  for (const hooks::Script& patch : found_now.patches) {
    log::Info("replay: --patch {} of this command line runs after the recorded scripts", patch.path);
    launch->scripts.hooks.push_back(patch);
    launch->script_origins.push_back(patch.path);
  }
  return Status::Ok();
}

// After a run that did not finish: the command that goes on from its newest
// checkpoint. The same command does, when it resumes automatically across runs.
void SayHowToResume(const TrainLaunch& launch) {
  if (launch.command.checkpoint_dir.empty() || launch.metadata.argv.empty()) return;
  std::error_code error;
  bool any = false;
  for (const auto& entry : std::filesystem::directory_iterator(launch.command.checkpoint_dir, error)) {
    any = any || entry.path().extension() == ".pt";
  }
  if (!any) return;
  std::vector<std::string> argv;
  for (const std::string& arg : launch.metadata.argv) argv.push_back(snapshot::ProcessRedactor().Text(arg));
  // The same command finds them (resume auto, across runs or in a checkpoint.dir
  // of its own); otherwise it is told where they are.
  const config::Value& resolved = launch.experiment.resolved;
  bool own_dir = !resolved.Find("checkpoint.dir")->ScalarText().empty();
  if (!ResumesAcrossRuns(launch) && !own_dir) argv.push_back("checkpoint.dir=" + launch.command.checkpoint_dir);
  if (ResumeSetting(launch) != "auto") argv.push_back("checkpoint.resume=auto");
  log::Info("to go on from its newest checkpoint ({}): {}", launch.command.checkpoint_dir, ShellJoin(argv));
}

}  // namespace

Status LoadRequestedExperiment(TrainLaunch* launch) {
  const TrainRequest& args = launch->args;
  launch->request.environment = ProcessEnvironment();
  launch->request.overrides = args.overrides;
  launch->request.file = args.config;
  if (!args.replay.empty()) {
    auto source = train::LoadReplaySource(args.replay);
    if (!source.ok()) return source.error();
    launch->replay = *source;
    launch->request.file = launch->replay->resolved_config;
    // Relative paths (the entry script, the workspace, hook directories)
    // mean what they meant: the replay runs where the recorded run did.
    const std::string& recorded_cwd = launch->replay->metadata.cwd;
    if (!recorded_cwd.empty() && recorded_cwd != CurrentDir()) {
      if (!IsDirectory(recorded_cwd) || ::chdir(recorded_cwd.c_str()) != 0) {
        return UnavailableError("--replay " + args.replay + ": the recorded run's working directory " + recorded_cwd +
                                    " is not there to run in",
                                "restore it (the experiment's relative paths are resolved there), or copy the "
                                "experiment and start it with train --config");
      }
      log::Info("replay: in the recorded working directory {}", recorded_cwd);
    }
  }
  if (!args.backend.empty()) launch->request.overrides.push_back("backend=" + args.backend);
  auto experiment = train::LoadExperiment(launch->request);
  if (!experiment.ok()) return experiment.error();
  launch->experiment = std::move(*experiment);
  for (const std::string& warning : launch->experiment.warnings) log::Warn("{}", warning);
  if (launch->replay) {
    launch->replay_risks = train::ReplayRisks(*launch->replay, launch->experiment.resolved,
                                              launch->experiment.interpreter, launch->process_env);
  }
  // Its secrets (env: entries, overrides, any secret-named key, ${VAR}
  // values) are redacted from here on, in what we print and what we write.
  LearnSecrets(launch->experiment.resolved, &snapshot::ProcessRedactor());
  return Status::Ok();
}

Status ResolvePrimus(TrainLaunch* launch, const config::LauncherConfig& launcher) {
  // A Primus-format experiment runs through a Primus installation, with
  // everything after --config handed to it verbatim; never half-translated.
  const train::ExperimentConfig& experiment = launch->experiment;
  if (!experiment.primus_style) return Status::Ok();
  LearnSecrets(experiment.primus_file, &snapshot::ProcessRedactor());
  if (!launch->args.backend.empty()) {
    return UsageError("--backend " + launch->args.backend + " does not apply to " + experiment.file +
                          ": a Primus-format experiment (modules:) runs through Primus, with each module's framework",
                      "change modules.<name>.framework in the file, or drop --backend");
  }
  auto found = train::PrimusInstallFor(launch->request.environment, launcher);
  if (!found.ok()) {
    return Error{found.error().code,
                 experiment.file + " is a Primus-format experiment (modules:), which runs through Primus; " +
                     found.error().message,
                 found.error().hint};
  }
  launch->primus = *found;
  auto read = train::ReadPrimusExperiment(experiment.primus_file, launch->args.subtask, *launch->primus,
                                          launch->args.rest, launch->request.environment);
  if (!read.ok()) return read.error();
  launch->primus_experiment = *read;
  return Status::Ok();
}

Status ApplyExperimentLaunchSettings(TrainLaunch* launch, const config::LauncherConfig& launcher) {
  auto extended = train::WithExperimentLaunchSettings(launcher, launch->experiment);
  if (!extended.ok()) return extended.error();
  launch->launcher = std::move(*extended);
  return Status::Ok();
}

Status BuildLaunchSpec(TrainLaunch* launch) {
  const config::LauncherConfig& launcher = *launch->launcher;
  // The experiment's env: joins the plan above the user's environment;
  // the plan then decides every worker variable (platform/environment_plan.h).
  auto workers = PrepareWorkerLaunch(launcher, ExperimentEnv(*launch));
  if (!workers.ok()) return workers.error();
  launch->workers = std::move(*workers);
  snapshot::Redactor& redactor = snapshot::ProcessRedactor();
  for (const auto* values : {&launch->workers.spec.env, &launch->workers.spec.env_overrides}) {
    for (const auto& [name, value] : *values) redactor.Learn(name, value);
  }
  for (const auto& [name, entry] : launch->workers.setup.plan.variables) redactor.Learn(name, entry.value);

  launch->world_size = launch->workers.spec.nnodes * launch->workers.spec.nproc_per_node;
  // A replay on another layout is another run: said as such, before the
  // batch arithmetic would fail on it in its own words.
  if (launch->replay && launch->replay->metadata.layout && !launch->args.force) {
    const snapshot::RunLayout& was = *launch->replay->metadata.layout;
    const agent::LaunchSpec& spec = launch->workers.spec;
    if (was.nnodes != spec.nnodes || was.nproc_per_node != spec.nproc_per_node || was.world_size != launch->world_size) {
      return UnavailableError(
          fmt::format("the replay of {} would not run the same: it ran on {} node(s) x {} worker(s) (world size {}), "
                      "this launch has {} x {} (world size {})",
                      launch->replay->dir.root, was.nnodes, was.nproc_per_node, was.world_size, spec.nnodes,
                      spec.nproc_per_node, launch->world_size),
          fmt::format("replay it on {} node(s) with --nproc-per-node {}, or add --force to run it on this layout",
                      was.nnodes, was.nproc_per_node));
    }
  }
  if (launch->primus_experiment) {
    auto layout = train::CheckPrimusLayout(*launch->primus_experiment, launch->world_size);
    if (!layout.ok()) {
      return Error{layout.error().code,
                   launch->experiment.file + ", module " + launch->primus_experiment->module_name + ": " +
                       layout.error().message,
                   layout.error().hint};
    }
    launch->primus_layout = *layout;
  } else {
    if (Status status = train::ResolveForWorldSize(launch->request, launch->world_size, &launch->experiment);
        !status.ok()) {
      return status.error();
    }
    if (Status status = train::CheckBackendSubtask(launch->experiment, launch->args.subtask); !status.ok()) {
      return status.error();
    }
  }
  // The framework's own progress lines feed the metrics (telemetry/progress_line.h);
  // the backend names the format unless direct.progress_format did.
  if (launcher.OriginOf("direct.progress_format").source == "default") {
    std::string framework = launch->primus_experiment ? launch->primus_experiment->framework : launch->experiment.backend;
    if (framework == "megatron") launch->workers.spec.progress_format = telemetry::ProgressFormat::kMegatron;
    if (framework == "torchtitan") launch->workers.spec.progress_format = telemetry::ProgressFormat::kTorchTitan;
  }
  launch->workers.spec.experiment_name = launch->experiment.exp_name;
  launch->workers.spec.backend = launch->primus_experiment ? "primus" : launch->experiment.backend;
  launch->backend_args = launch->primus ? launch->args.rest : launch->args.extra_args;
  if (Status replayed = ReplayBackendArgs(launch); !replayed.ok()) return replayed;
  launch->run_preflight = !launch->args.no_preflight && launcher.GetBool("train.preflight");
  launch->job_id = launch->process_env.count("PRIMUS_JOB_ID") ? launch->process_env.at("PRIMUS_JOB_ID")
                                                               : launcher.scheduler().job_id;
  return Status::Ok();
}

Status FindScripts(TrainLaunch* launch) {
  std::vector<std::string> experiment_dirs;
  for (const auto& dir : launch->experiment.resolved.Find("hooks.dirs")->AsList()) {
    experiment_dirs.push_back(JoinPath(DirName(launch->experiment.file), dir.ScalarText()));
  }
  auto found = FindTaskScripts(*launch->launcher, "train", launch->args.subtask, experiment_dirs);
  if (!found.ok()) return found.error();
  if (launch->replay && launch->replay->metadata.layout) return UseRecordedScripts(launch, *found);
  launch->scripts = std::move(*found);
  for (const hooks::Script& script : launch->scripts.InOrder()) launch->script_origins.push_back(script.path);
  return Status::Ok();
}

Result<int> PrintDryRun(const TrainLaunch& launch) {
  const train::ExperimentConfig& experiment = launch.experiment;
  const agent::LaunchSpec& spec = launch.workers.spec;
  train::BackendRequest inputs{&experiment,           "<experiment dir>",  launch.backend_args,
                              launch.args.resume,    launch.process_env, launch.args.subtask,
                              launch.primus ? &*launch.primus : nullptr, /*resume_fallback=*/""};
  auto command = train::BuildBackendCommand(inputs);
  if (!command.ok()) return command.error();
  const config::LauncherConfig& launcher = *launch.launcher;
  std::cout << "experiment: " << Join(experiment.files, " <- ") << "\n"
            << DescribeWorld(launch) << DescribeLaunchSettings(launcher)
            << "  experiment directory: " << experiment.workspace << "/" << experiment.exp_name << "_"
            << (launch.job_id.empty() ? std::string("<time>") : launch.job_id) << "/\n"
            << "  hang watchdog: " << Seconds(spec.hang_timeout_s) << " ("
            << launcher.OriginOf("direct.hang_timeout").Describe() << "); exit grace: " << Seconds(spec.exit_grace_s)
            << "\n"
            << DescribeTaskScripts(launch.scripts)
            << (experiment.megatron_table_source.empty()
                    ? std::string()
                    : "Megatron-LM options checked against " + experiment.megatron_table_source + "\n")
            << (experiment.torchtitan_keys_source.empty()
                    ? std::string()
                    : "TorchTitan keys checked against " + experiment.torchtitan_keys_source + "\n")
            << "worker command (once per rank):\n  " << ShellJoin(command->argv) << "\n"
            << (std::find(command->framework_env.begin(), command->framework_env.end(), "jax") !=
                        command->framework_env.end()
                    ? "  and JAX's variables per worker: JAX_COORDINATOR_ADDRESS (MASTER_ADDR:MASTER_PORT), "
                      "JAX_NUM_PROCESSES, JAX_PROCESS_ID (docs/agent.md)\n"
                    : std::string())
            << agent::DescribeWorkerEnvironment(launch.workers.setup)
            << (launch.args.full_preflight ? "preflight: full: every node's host, GPU, network and software checks, "
                                             "judged by node 0, would gate the launch\n"
                : launch.run_preflight ? "preflight: the fast checks would run before the launch (--no-preflight skips them)\n"
                                       : "preflight: off\n");
  // Planned elsewhere (init --gpus 8 on a laptop) is fine; said, not refused.
  if (Status fit = CheckGpusFitHost(launch, FitOf(launch)); !fit.ok()) {
    std::cout << "note: on this host the launch would stop: " << fit.error().message << "\n";
  }
  if (launch.replay) {
    std::vector<train::SystemDifference> differences = ReplayDifferences(launch, DescribeThisSystem(launch));
    std::cout << "replay of " << launch.replay->dir.root << " (" << launch.replay->metadata.start_time
              << "): then vs now\n"
              << train::FormatDifferences(differences) << ReplayRiskText(launch);
    std::vector<std::string> incompatible = Incompatible(differences);
    if (!incompatible.empty() && !launch.args.force) {
      return UnavailableError("a launch would refuse this replay: " + Join(incompatible, ", ") + " differ",
                              "add --force to run it anyway");
    }
  }
  return 0;
}

Status CheckReplayTrust(const TrainLaunch& launch) {
  if (!launch.replay || launch.args.force || !ReplayNeedsForce(launch)) return Status::Ok();
  std::vector<std::string> lines;
  for (const train::ReplayRisk& risk : launch.replay_risks) {
    if (risk.needs_force) lines.push_back(risk.text);
  }
  return ConfigError("--replay " + launch.replay->dir.root +
                         ": the recorded run sets what changes the code that runs here, and differs from now:\n  " +
                         Join(lines, "\n  "),
                     "check that these are what you want to run (--dry-run shows the whole launch), then add "
                     "--force");
}

// --preflight full: the host, GPU, network and software checks of every node,
// judged by node 0 (preflight/preflight_runner.h), before any worker starts.
// A node that FAILs refuses the launch (exit 4), or under
// direct.exclude_bad_nodes, where the job can go on without it (an elastic
// job, or a launcher with a spare node), leaves it with exit code 5; the
// nodes that pass then start (elastic) or end for the launcher to start the
// job again without it.
Status RunFullPreflight(const TrainLaunch& launch) {
  const agent::LaunchSpec& spec = launch.workers.spec;
  bool elastic = spec.rendezvous != agent::kStaticRendezvous;
  preflight::PreflightOptions options;
  options.host = options.gpu = options.network = options.software = true;
  options.workspace = launch.experiment.workspace;
  options.report_dir = launch.experiment.workspace;
  if (!launch.experiment.interpreter.empty()) options.python = launch.experiment.interpreter;
  // An elastic job's node ranks are handed out later: each node judges itself.
  preflight::JobPlacement placement{elastic ? 1 : spec.nnodes, elastic ? 0 : spec.node_rank, spec.master_addr,
                                    spec.master_port, {}};
  Result<std::string> self = SelfExecutable();
  preflight::PreflightVerdict verdict;
  auto ran = preflight::RunPreflight(options, placement, platform::Roots::FromEnvironment(), launch.process_env,
                                     self.ok() ? *self : std::string("primus-cli"), &verdict);
  if (!ran.ok()) return ran.error();
  if (!verdict.job_fail) return Status::Ok();
  bool can_go_on = spec.exclude_bad_nodes && (elastic || spec.spare_nodes > 0);
  std::string failing = verdict.failing_hosts.empty() ? "" : " (" + Join(verdict.failing_hosts, ", ") + ")";
  if (verdict.own_fail && can_go_on) {
    return Error{ExitCode::kNodeExcluded,
                 "preflight full: this node FAILs; it leaves the job, which goes on without it "
                 "(direct.exclude_bad_nodes)",
                 "the checks above say what to fix on this node"};
  }
  if (verdict.own_fail) {
    return UnavailableError("preflight full: this node FAILs, so the job does not start",
                            "fix the above, or let the job go on without it: --set direct.exclude_bad_nodes=true "
                            "with an elastic job or spare nodes");
  }
  if (elastic && can_go_on) {
    log::Warn("preflight full: a node FAILs{}; this one passes and starts with the others that do", failing);
    return Status::Ok();
  }
  return UnavailableError("preflight full: a node of the job FAILs" + failing + ", so the job does not start here" +
                              (can_go_on ? " (its launcher starts the job again without it)" : ""),
                          "failing_nodes.txt in " + options.report_dir + " lists them");
}

Status RunPreflight(const TrainLaunch& launch) {
  if (!launch.args.full_preflight && !launch.run_preflight) return Status::Ok();
  // Before any worker starts: a GPU for each, and the framework importable.
  HostFit fit = FitOf(launch);
  if (Status fits = CheckGpusFitHost(launch, fit); !fits.ok()) return fits;
  if (Status found = CheckInterpreterHasFramework(launch, fit); !found.ok()) return found;
  if (launch.args.full_preflight) return RunFullPreflight(launch);
  const agent::LaunchSpec& spec = launch.workers.spec;
  preflight::JobPlacement placement{spec.nnodes, spec.node_rank, spec.master_addr, spec.master_port, {}};
  // The host ApplyPlatform detected, from the same roots.
  std::vector<preflight::CheckResult> checks = preflight::QuickTrainChecks(
      launch.workers.setup.host, platform::Roots::FromEnvironment(), launch.process_env, placement, launch.experiment.workspace);
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
    return UnavailableError("preflight stopped the launch:\n" + Join(failures, "\n"),
                            "fix the above, or skip the checks with train --no-preflight");
  }
  return Status::Ok();
}

Status OpenExperimentDir(TrainLaunch* launch, const TaskContext& context) {
  // A job with an id (PRIMUS_JOB_ID, or the scheduler's) has one directory,
  // <exp>_<job id>: its nodes share it (checkpoints, metrics; each node's
  // snapshot inside), a requeued job finds its checkpoints again, and
  // `slurm sbatch` put the batch script and Slurm's log there already.
  const train::ExperimentConfig& experiment = launch->experiment;
  if (!launch->job_id.empty()) {
    auto job = snapshot::OpenJobExperimentDir(experiment.workspace, experiment.exp_name, launch->job_id,
                                              launch->workers.spec.node_rank);
    if (!job.ok()) return job.error();
    launch->shared_root = job->shared_root;
    launch->dir = job->node;
  } else {
    auto own = snapshot::CreateExperimentDir(experiment.workspace, experiment.exp_name, std::time(nullptr));
    if (!own.ok()) return own.error();
    launch->shared_root = own->root;
    launch->dir = *own;
    if (launch->workers.spec.nnodes > 1) {
      log::Warn("no job id (PRIMUS_JOB_ID, or the scheduler's): this node writes its own experiment directory {}, "
                "so checkpoints are not shared between nodes; export the same PRIMUS_JOB_ID on every node",
                own->root);
    }
  }
  snapshot::RunMetadata& metadata = launch->metadata;
  metadata.primus_version = PRIMUS_VERSION;
  metadata.argv = context.command_line;
  metadata.cwd = CurrentDir();
  metadata.git = snapshot::DetectGit(metadata.cwd);
  metadata.backend_args = launch->backend_args;  // the hooks' come later, apart
  if (metadata.git && !metadata.git->diff.empty()) {
    // The uncommitted changes beside the commit: `git apply` restores the code.
    std::string code_dir = JoinPath(launch->dir.root, "code");
    if (Status made = MakePrivateDir(code_dir); !made.ok()) return made.error();
    if (Status written = WriteFileAtomic(JoinPath(code_dir, "uncommitted.patch"), metadata.git->diff); !written.ok()) {
      return written.error();
    }
    if (metadata.git->diff_cut) {
      log::Warn("the uncommitted changes of {} are longer than {} MiB: code/uncommitted.patch holds their start only",
                metadata.git->toplevel, snapshot::kMaxDiffBytes >> 20);
    }
  }
  metadata.task = "train " + launch->args.subtask;
  metadata.hosts = {log::HostName()};
  metadata.start_time = snapshot::IsoTimeUtc(WallSeconds());
  // The run's log directory, decided now so that metadata.json names it from
  // the start (a requeued job's logs/ may hold an earlier run's attempts).
  auto log_dir = agent::MakeRunLogDir(launch->dir.logs_dir(), Split(launch->dir.root, '/').back(), log::HostName(),
                                      launch->workers.spec.restarts_before);
  if (!log_dir.ok()) return log_dir.error();
  launch->log_dir = *log_dir;
  metadata.log_dir = launch->log_dir;
  // logs/launch.log: this launcher's own lines, from its first (appended to
  // when a requeued job comes back to the same directory).
  if (auto launch_log = OpenPrivateFileForAppend(JoinPath(launch->dir.logs_dir(), "launch.log")); launch_log.ok()) {
    launch->launch_log.Reset(*launch_log);
    log::CopyTo(launch->launch_log.get());
  } else {
    log::Warn("logs/launch.log is not written: {}", launch_log.error().message);
  }
  metadata.launcher = ThisProcess();
  if (launch->replay) metadata.replay_of = launch->replay->dir.root;
  if (Status written = snapshot::WriteMetadata(launch->dir.metadata_file(), metadata, snapshot::ProcessRedactor());
      !written.ok()) {
    return written.error();
  }
  log::Info("experiment directory: {}", launch->dir.root);
  return Status::Ok();
}

Status WriteSnapshot(TrainLaunch* launch) {
  const train::ExperimentConfig& experiment = launch->experiment;
  nlohmann::ordered_json system = DescribeThisSystem(*launch);
  if (launch->replay) {
    auto differences = ReplayDifferences(*launch, system);
    std::vector<std::string> incompatible = Incompatible(differences);
    std::cerr << "replay of " << launch->replay->dir.root << " (" << launch->replay->metadata.start_time
              << "): then vs now\n"
              << train::FormatDifferences(differences) << ReplayRiskText(*launch);
    if (!incompatible.empty() && !launch->args.force) {
      std::string hint = "run it where the recorded ";
      const std::optional<snapshot::GitState>& git = launch->replay->metadata.git;
      if (git && std::any_of(incompatible.begin(), incompatible.end(), [](const std::string& what) { return what.starts_with("code"); })) {
        hint += "code is (git checkout " + git->commit.substr(0, 12) +
                (git->dirty ? ", then git apply " + launch->replay->dir.root + "/code/uncommitted.patch" : "") + "), ";
      }
      hint += "layout and GPUs are, or add --force to run anyway";
      return UnavailableError("the replay of " + launch->replay->dir.root + " would not run the same: " +
                                  Join(incompatible, ", ") + " differ (the table above)",
                              hint);
    }
  }
  const snapshot::Redactor& redactor = snapshot::ProcessRedactor();
  if (Status written = snapshot::WriteSystemInfo(launch->dir, system, redactor); !written.ok()) return written;
  auto copied = snapshot::WriteConfigFiles(
      launch->dir, launch->replay ? std::vector<std::string>{} : experiment.files,
      (launch->primus ? experiment.primus_file : experiment.resolved).ToYaml(/*escape_dollars_for_reload=*/true),
      redactor);
  if (!copied.ok()) return copied.error();
  // The launcher's configuration as this launch used it (the experiment's
  // launch settings, files, PRIMUS_* variables, --set and flags), with each
  // value's origin: `analyze run` shows it beside the experiment's keys.
  nlohmann::ordered_json launcher =
      nlohmann::ordered_json::parse(config::RenderConfigJson(launch->launcher->effective(), /*with_origin=*/true));
  return snapshot::WriteJsonFile(JoinPath(launch->dir.config_dir(), "launcher.json"), redactor.Json(launcher));
}

Status RunHooks(TrainLaunch* launch) {
  // Worker environment: experiment env over launcher config env, hooks over both;
  // the user's own environment and --env always win (the agent applies that).
  agent::LaunchSpec& spec = launch->workers.spec;
  snapshot::EnvWithOrigins& origins = launch->origins;
  if (launch->replay) {
    for (const auto& [name, entry] : launch->replay->env) {
      if (!train::IsReplayedVariable(name)) continue;
      if (entry.value == snapshot::kRedacted) {
        if (!launch->process_env.count(name)) log::Warn("replay: {} was redacted when recorded and is not set now", name);
        continue;
      }
      spec.env_overrides[name] = entry.value;
      origins[name] = {entry.value, "replay of " + launch->replay->dir.root + " (" + entry.origin + ")"};
    }
  }
  for (const auto& [name, entry] : launch->workers.setup.plan.variables) origins[name] = {entry.value, entry.origin};

  std::vector<hooks::Script> scripts = launch->scripts.InOrder();
  hooks::HookContext hook_context;
  hook_context.node_rank = spec.node_rank;
  // The resolved experiment as JSON too, for the Python hook API (python/primus_hooks.py).
  std::string config_json = launch->dir.config_dir() + "/resolved.json";
  if (!scripts.empty()) {
    const config::Value& resolved = launch->primus ? launch->experiment.primus_file : launch->experiment.resolved;
    if (Status written =
            snapshot::WriteJsonFile(config_json, snapshot::ProcessRedactor().Json(resolved.ToJson()));
        !written.ok()) {
      return written;
    }
  }
  // `train pretrain --config exp.yaml ...`, as typed: Primus's hooks read their group and name from it.
  hook_context.args = {"train", launch->args.subtask, "--config", launch->experiment.file};
  hook_context.args.insert(hook_context.args.end(), launch->args.rest.begin(), launch->args.rest.end());
  hook_context.env = {{"PRIMUS_TASK", "train"},
                      {"PRIMUS_SUBTASK", launch->args.subtask},
                      {"PRIMUS_EXP_DIR", launch->dir.root},
                      {"PRIMUS_CONFIG", launch->dir.config_dir() + "/resolved.yaml"},
                      {"PRIMUS_CONFIG_JSON", config_json},
                      {"NODE_RANK", std::to_string(spec.node_rank)},
                      {"NNODES", std::to_string(spec.nnodes)},
                      {"WORLD_SIZE", std::to_string(launch->world_size)}};
  auto outcome = hooks::RunScripts(scripts, hook_context);
  if (!outcome.ok()) return outcome.error();
  // What ran, kept: a copy of each script and what it printed (metadata.json's launch.scripts).
  for (size_t i = 0; i < scripts.size() && i < outcome->scripts.size(); ++i) {
    const char* kind = scripts[i].kind == hooks::Script::Kind::kPatch ? "patch" : "hook";
    auto kept = snapshot::KeepScriptCopy(launch->dir, i + 1, kind, scripts[i].path);
    if (!kept.ok()) return kept.error();
    kept->path = i < launch->script_origins.size() ? launch->script_origins[i] : scripts[i].path;
    kept->skipped = outcome->scripts[i].skipped;
    kept->env = outcome->scripts[i].env;
    kept->extra_args = outcome->scripts[i].extra_args;
    launch->metadata.scripts.push_back(std::move(*kept));
  }
  // A hook computed these for this launch: they win over profiles and files.
  for (const auto& [name, value] : outcome->env) {
    snapshot::ProcessRedactor().Learn(name, value);
    spec.env_overrides[name] = value;
    origins[name] = {value, "hook env. line"};
  }
  // The hooks' extra arguments go to the backend before the command line's.
  launch->metadata.hook_args = outcome->extra_args;
  std::vector<std::string> extra = outcome->extra_args;
  extra.insert(extra.end(), launch->backend_args.begin(), launch->backend_args.end());
  launch->backend_args = std::move(extra);
  return Status::Ok();
}

Status BuildWorkerCommand(TrainLaunch* launch) {
  const train::ExperimentConfig& experiment = launch->experiment;
  agent::LaunchSpec& spec = launch->workers.spec;
  train::BackendRequest inputs{&experiment,           launch->shared_root, launch->backend_args,
                              launch->args.resume,   launch->process_env, launch->args.subtask,
                              launch->primus ? &*launch->primus : nullptr, EarlierRunToResume(*launch)};
  if (launch->primus) {
    log::Info("through Primus {} at {} ({}): {}", launch->primus->version, launch->primus->root, launch->primus->found_by,
              train::DescribePrimusPlan(*launch->primus_experiment, launch->primus_layout, launch->world_size));
  }
  auto command = train::BuildBackendCommand(inputs);
  if (!command.ok()) return command.error();
  launch->command = std::move(*command);
  for (const auto& [path, content] : launch->command.files) {
    if (Status written = WriteFileAtomic(path, content); !written.ok()) return written;
  }
  snapshot::EnvWithOrigins& origins = launch->origins;
  for (const auto& [name, value] : launch->command.env) {
    snapshot::ProcessRedactor().Learn(name, value);
    if (!spec.env.count(name)) {
      spec.env[name] = value;
      origins[name] = {value, "backend " + experiment.backend};
    }
  }
  // env/: everything a worker starts with (the per-rank RANK/LOCAL_RANK/...
  // are the agent's, docs/agent.md), each with where it came from.
  snapshot::EnvWithOrigins& worker_env = launch->worker_env;
  for (const auto& [name, value] : launch->process_env) worker_env[name] = {value, "user environment"};
  for (const auto& [name, value] : spec.env) {
    if (!launch->process_env.count(name)) worker_env[name] = {value, "backend " + experiment.backend};
  }
  for (const auto& [name, value] : spec.env_overrides) {
    worker_env[name] = origins.count(name) ? origins[name] : snapshot::EnvEntry{value, "--env"};
  }
  worker_env.erase(agent::kJobTokenVariable);  // the agent's, never a worker's (agent/worker_env.h)
  worker_env["WORLD_SIZE"] = {std::to_string(launch->world_size), "node agent"};
  worker_env["NNODES"] = {std::to_string(spec.nnodes), "node agent"};
  WriteWorkerEnv(*launch);

  spec.argv = launch->command.argv;
  for (const std::string& framework : launch->command.framework_env) {
    if (std::find(spec.framework_env.begin(), spec.framework_env.end(), framework) == spec.framework_env.end()) {
      spec.framework_env.push_back(framework);
    }
  }
  launch->metadata.worker_argv = spec.argv;
  launch->metadata.code_files.clear();
  for (size_t i = 0; i < spec.argv.size() && i < 4; ++i) {  // the entry script: the first .py/.sh after the interpreter
    const std::string& arg = spec.argv[i];
    if (!(arg.ends_with(".py") || arg.ends_with(".sh")) || !PathExists(arg) || IsDirectory(arg)) continue;
    if (auto sha = snapshot::FileSha256(arg); sha.ok()) launch->metadata.code_files.push_back({arg, *sha});
    break;
  }
  for (const std::string& file : launch->replay ? std::vector<std::string>{} : experiment.files) {
    if (auto sha = snapshot::FileSha256(file); sha.ok()) launch->metadata.code_files.push_back({file, *sha});
  }
  launch->metadata.layout = snapshot::RunLayout{spec.nnodes, spec.nproc_per_node, launch->world_size};
  WriteMetadataOrWarn(*launch);
  spec.log_dir = launch->log_dir;
  spec.run_id = Split(launch->dir.root, '/').back();
  // Every experiment's events under <experiment>/tensorboard: `tensorboard --logdir output/` shows them all.
  if (spec.tensorboard) spec.tensorboard_dir = JoinPath(launch->dir.root, "tensorboard");
  log::Debug("worker command: {}", ShellJoin(spec.argv));
  return Status::Ok();
}

Result<agent::RunResult> Launch(TrainLaunch* launch) {
  std::optional<train::ProgressFollower> progress;
  if (!launch->command.metrics_file.empty()) {
    // Made here, ours, so that the trainer's appends keep our mode (a worker's
    // open() would create it world-readable under the usual umask).
    auto metrics = OpenPrivateFileForAppend(launch->command.metrics_file);
    if (!metrics) return metrics.error();
    ::close(*metrics);
    progress.emplace(launch->command.metrics_file, launch->experiment.resolved.Find("training.steps")->AsInt(),
                     isatty(STDERR_FILENO) != 0, 30.0);
  } else if (launch->workers.spec.node_rank == 0 && launch->workers.spec.telemetry_interval_s > 0 &&
             launch->workers.spec.progress_format != telemetry::ProgressFormat::kNone) {
    // A framework that prints its progress: the job view node 0 writes has it.
    progress.emplace(JoinPath(launch->log_dir, "telemetry/job.json"), 0, isatty(STDERR_FILENO) != 0, 30.0,
                     train::ProgressFollower::Source::kJobView);
  }
  auto result = RunWorkerLaunch(launch->workers);
  if (progress) progress->Stop();
  return result;
}

int RecordOutcome(TrainLaunch* launch, const agent::RunResult& result) {
  snapshot::EnvWithOrigins& worker_env = launch->worker_env;
  worker_env["MASTER_ADDR"] = {result.master_addr, "node agent"};
  worker_env["MASTER_PORT"] = {std::to_string(result.master_port), "node agent"};
  worker_env["TORCHELASTIC_RUN_ID"] = {result.run_id, "node agent"};
  WriteWorkerEnv(*launch);
  snapshot::RunMetadata& metadata = launch->metadata;
  metadata.restarts = result.restarts;
  for (const std::string& host : result.excluded_hosts) {
    metadata.excluded_nodes.push_back({{"host", host}, {"reason", result.exclusion_reason}});
  }
  if (!result.log_dir.empty()) metadata.log_dir = result.log_dir;  // a fresh one when logs/ held an earlier run's
  metadata.hosts = JobHosts(JoinPath(launch->log_dir, "telemetry/job.json"));
  if (result.root_cause) metadata.root_cause = FailureJson(*result.root_cause);
  for (const agent::WorkerFailure& cause : result.attempt_causes) metadata.failures.push_back(FailureJson(cause));
  std::string status = result.exit_code == 0                                           ? "succeeded"
                       : result.agent_signal                                           ? "interrupted"
                       : result.exit_code == static_cast<int>(ExitCode::kStuckAtExit) ? "stuck_at_exit"
                                                                                       : "failed";
  int exit_code = WorkerLaunchExitCode(result, *launch->launcher);
  Finish(launch, exit_code, status);
  std::string worker_code = exit_code == result.exit_code || !result.root_cause
                                ? ""
                                : fmt::format("; the failing worker's own code {} (direct.failure_exit_code)",
                                              result.root_cause->exit_code);
  log::Info("experiment {}: {} (exit {}{}), {}", launch->dir.root, status, exit_code, worker_code,
            result.restarts ? std::to_string(result.restarts) + " restart(s)" : "no restarts");
  if (status != "succeeded") SayHowToResume(*launch);
  CloseLaunchLog(launch);
  return exit_code;
}

Error RecordFailure(TrainLaunch* launch, const Error& error) {
  launch->metadata.root_cause = {{"launcher_error", error.message}};
  int code = static_cast<int>(error.code);
  Finish(launch, code, code > 128 ? "interrupted" : "failed");  // 128+N: our signal N (a hook's Ctrl-C)
  log::Info("experiment directory: {}", launch->dir.root);
  if (launch->launch_log.valid()) {  // the console gets the error from the caller; the file, here
    std::string line = log::FormatLine(log::Level::kError, error.message);
    io::WriteAll(launch->launch_log.get(), line.data(), line.size());
  }
  CloseLaunchLog(launch);
  return error;
}

}  // namespace primus::tasks
