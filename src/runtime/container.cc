// `container`: run the task inside a docker or podman image, with the host's
// primus-cli bind-mounted and `direct` running inside. Engine flags this
// table does not know pass through to the engine unchanged. The parts:
// container_engine (which engine), container_mounts, container_env,
// container_limits, container_devices, container_inner (the command that
// runs inside), container_command (the engine command, a pure function),
// container_process (run it, forward signals, remove by name),
// container_failure and container_glibc (clear errors). docs/container.md.
#include <unistd.h>

#include <iostream>
#include <set>

#include "util/environment.h"
#include "util/private_files.h"
#include "config/launcher_config.h"
#include "config/slurm_settings.h"
#include "config/value.h"
#include "hooks/hook_runner.h"
#include "platform/host_detect.h"
#include "platform/launcher_plan_request.h"
#include "platform/roots.h"
#include "runtime/container_command.h"
#include "runtime/container_config_files.h"
#include "runtime/container_devices.h"
#include "runtime/container_engine.h"
#include "runtime/container_engine_options.h"
#include "runtime/node_dry_run.h"
#include "runtime/container_env.h"
#include "runtime/container_failure.h"
#include "runtime/container_glibc.h"
#include "runtime/container_inner.h"
#include "runtime/container_limits.h"
#include "runtime/container_mounts.h"
#include "runtime/container_name.h"
#include "runtime/container_process.h"
#include "runtime/container_task_paths.h"
#include "runtime/runtime.h"
#include "snapshot/redaction.h"
#include "util/files.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus::runtime {
namespace {

using K = OptionSpec::Kind;

// "flag --engine", "/etc/primus/config.yaml:3:9", "default".
std::string Where(const config::LauncherConfig& launcher, std::string_view key) {
  return std::string(key) + " (" + launcher.OriginOf(key).Describe() + ")";
}

// This binary, mounted into the image; "" when /proc cannot say.
std::string HostBinary() {
  Result<std::string> self = SelfExecutable();
  return self.ok() ? *self : std::string();
}

// `K=V ... /usr/bin/podman run ...`: the variables we add to the engine's
// environment, then the command; secret values never shown.
std::string ShowCommand(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  std::vector<std::string> words;
  for (const auto& [name, value] : env) {
    words.push_back(name + "=" + ShellQuote(snapshot::IsSecretName(name) ? std::string(snapshot::kRedacted) : value));
  }
  return (words.empty() ? "" : Join(words, " ") + " ") + ShellJoin(argv);
}

// The glibc the mounted binary needs ("2.36"), read once from its ELF file.
const std::string& RequiredGlibcText() {
  static const std::string version = [] {
    auto required = RequiredGlibc(HostBinary());
    return required.ok() ? *required : std::string("2.34");
  }();
  return version;
}

// Logs a problem that stops a real run; under --dry-run the plan goes on.
Status StopUnlessDryRun(const Error& error, bool dry_run) {
  if (!dry_run) return error;
  log::Warn("{} (a real run stops here, exit {})", error.message, static_cast<int>(error.code));
  return Status::Ok();
}

// One launch, step by step: resolve the engine, image and name; find what
// the container must see of the host; plan its environment, limits and
// devices; build both command lines; print them or run them.
class ContainerLaunch {
 public:
  explicit ContainerLaunch(const RuntimeContext& context)
      : context_(context),
        launcher_(*context.launcher),
        mode_(context.invocation->chain[context.depth]),
        dry_run_(context.dry_run),
        host_env_(ProcessEnvironment()),
        cwd_(CurrentDir()) {}

  Result<int> Execute() {
    // A multi-node Slurm allocation's batch script is not a step: one node only.
    Status placed = config::CheckDirectInSlurmAllocation(ProcessEnvironment(), launcher_);
    if (!placed.ok() && !StopUnlessDryRun(placed.error(), dry_run_).ok()) return placed.error();
    for (Status step : {ResolveEngineAndImage(), ResolveEngineOptions(), CollectMounts(), PlanEnvironmentAndCommand()}) {
      if (!step.ok()) return step.error();
    }
    for (const std::string& warning : warnings_) log::Warn("{}", warning);
    if (dry_run_) return PrintDryRun();
    return Run();
  }

 private:
  Status ResolveEngineAndImage() {
    auto found = FindEngine(launcher_.GetString("container.engine"), host_env_, Where(launcher_, "container.engine"));
    engine_found_ = found.ok();
    if (found.ok()) {
      engine_ = *found;
    } else if (found.error().code == ExitCode::kUsage || !StopUnlessDryRun(found.error(), dry_run_).ok()) {
      return found.error();
    } else if (ToLower(launcher_.GetString("container.engine")) == "docker") {
      engine_ = Engine{EngineKind::kDocker, "docker", ""};  // the plan of the engine asked for
    }

    image_ = launcher_.GetString("container.image");
    if (image_.empty()) {
      Error missing = UsageError("no image to run: container.image is empty",
                                 "pass --image IMAGE, or set container.image in a configuration file");
      if (Status stop = StopUnlessDryRun(missing, dry_run_); !stop.ok()) return stop;
      image_ = "<image>";
    }
    pull_ = ToLower(launcher_.GetString("container.pull"));
    if (pull_ != "never" && pull_ != "missing" && pull_ != "always") {
      return UsageError(Where(launcher_, "container.pull") + ": '" + pull_ + "' is not a pull policy" +
                            DidYouMean(pull_, {"never", "missing", "always"}),
                        "use never, missing or always");
    }
    // The name: the user's, or primus-<job>-n<rank>-<random>.
    name_ = launcher_.GetString("container.name");
    if (name_.empty()) {
      std::string job_id = launcher_.scheduler().job_id;
      if (job_id.empty() && host_env_.count("PRIMUS_JOB_ID")) job_id = host_env_.at("PRIMUS_JOB_ID");
      name_ = ContainerName(job_id, static_cast<int>(launcher_.GetInt("direct.node_rank")), RandomSuffix());
    }
    return Status::Ok();
  }

  // container.options, then the flags passed through.
  Status ResolveEngineOptions() {
    auto unknown = CheckEngineOptions(mode_.passthrough, RuntimeRegistry::Global().Find("direct")->options());
    if (!unknown.ok()) return unknown.error();
    unknown_options_ = std::move(*unknown);
    engine_options_ = launcher_.GetStringList("container.options");
    engine_options_.insert(engine_options_.end(), mode_.passthrough.begin(), mode_.passthrough.end());
    std::erase(engine_options_, "--rm");  // always there
    if (HasEngineFlag(engine_options_, {"-d", "--detach"})) {
      return UsageError("container: -d/--detach cannot be passed to the engine",
                        "the container runs in the foreground, so that its exit code is the launch's and Ctrl-C stops it");
    }
    return Status::Ok();
  }

  // What the inner primus-cli reads and writes on the host (container_mounts.h).
  Status CollectMounts() {
    config_files_ = FindConfigFilesInUse(launcher_.effective(), DefaultConfigFileLayers(host_env_));
    if (!launcher_.scheduler().job_id.empty()) launcher_env_["PRIMUS_JOB_ID"] = launcher_.scheduler().job_id;
    // A requeued Slurm job's restarts count against max_restarts inside too.
    if (launcher_.scheduler().restart_count > 0) {
      launcher_env_["PRIMUS_SCHEDULER_RESTARTS"] = std::to_string(launcher_.scheduler().restart_count);
    }
    MountRequest inputs;
    inputs.binary = HostBinary();
    inputs.hooks_dir = hooks::BuiltinHooksDirectory();
    inputs.cwd = cwd_;
    inputs.read_only = config_files_.files;
    std::string user_config_dir = DirName(DefaultConfigFileLayers(host_env_).user_file);
    if (IsDirectory(user_config_dir)) {
      inputs.read_only.push_back(user_config_dir);
      launcher_env_["XDG_CONFIG_HOME"] = DirName(user_config_dir);
    }
    if (host_env_.count("PRIMUS_PROFILE_PATH")) {
      for (const std::string& dir : Split(host_env_.at("PRIMUS_PROFILE_PATH"), ':')) {
        if (!dir.empty()) inputs.read_only.push_back(dir);
      }
    }
    for (const char* key : {"direct.patch", "direct.hooks_dir"}) {
      for (const std::string& path : launcher_.GetStringList(key)) inputs.read_only.push_back(path);
    }
    std::string tmpdir = host_env_.count("TMPDIR") ? host_env_.at("TMPDIR") : "";
    if (std::string log_dir = launcher_.GetString("direct.log_dir"); !log_dir.empty()) {
      inputs.writable.push_back(log_dir);
    } else if (launcher_.GetString("container.user").empty() && (tmpdir.empty() || tmpdir == "/tmp")) {
      // The agent's default log directory, so that the paths it prints exist here.
      inputs.writable.push_back(DefaultRunsDir());
    }
    TaskPaths task_paths = FindTaskPaths(context_.invocation->task, context_.invocation->task_args, host_env_);
    inputs.read_only.insert(inputs.read_only.end(), task_paths.read.begin(), task_paths.read.end());
    inputs.writable.insert(inputs.writable.end(), task_paths.written.begin(), task_paths.written.end());
    for (const std::string& text : launcher_.GetStringList("container.mounts")) {
      auto mount = ParseMount(text, cwd_, Where(launcher_, "container.mounts"));
      if (!mount.ok()) return mount.error();
      if (mount->raw.empty() && mount->host.starts_with("/") && !PathExists(mount->host)) {
        Error missing = UnavailableError(Where(launcher_, "container.mounts") + ": " + mount->host + " (in '" + text +
                                             "') does not exist on this host",
                                         "create it first, or correct the path");
        if (Status stop = StopUnlessDryRun(missing, dry_run_); !stop.ok()) return stop;
      }
      inputs.user.push_back(*mount);
    }
    mounts_ = PlanMounts(inputs);
    warnings_.insert(warnings_.end(), mounts_.warnings.begin(), mounts_.warnings.end());
    return Status::Ok();
  }

  Status PlanEnvironmentAndCommand() {
    EnvRequest request;
    request.entries = launcher_.GetStringList("container.env");
    request.entries_origin = Where(launcher_, "container.env");
    request.prefixes = launcher_.GetStringList("container.forward_env");
    request.host = host_env_;
    request.launcher = launcher_env_;
    auto env = PlanEnvironment(request);
    if (!env.ok()) return env.error();
    env_ = *env;
    warnings_.insert(warnings_.end(), env_.warnings.begin(), env_.warnings.end());

    UlimitPlan ulimits = PlanUlimits(engine_.kind, ReadHostLimits(), UserUlimits(engine_options_));
    warnings_.insert(warnings_.end(), ulimits.warnings.begin(), ulimits.warnings.end());

    InnerCommandRequest inner;
    inner.invocation = context_.invocation;
    inner.depth = context_.depth;
    inner.launcher = &launcher_;
    inner.direct_options = &RuntimeRegistry::Global().Find("direct")->options();
    inner.global_options = &GlobalOptions();
    inner.forwarded_env = std::set<std::string>(env_.names.begin(), env_.names.end());
    if (!config_files_.explicit_file.empty()) inner.config_file = AbsolutePath(config_files_.explicit_file, cwd_);

    ContainerSpec spec;
    spec.engine = engine_.kind;
    spec.engine_executable = engine_.executable;
    spec.image = image_;
    spec.name = name_;
    spec.pull = pull_;
    spec.user = launcher_.GetString("container.user");
    spec.shm_size = launcher_.GetString("container.shm_size");
    spec.gpus = FindGpuDevices(platform::DetectHost(platform::Roots::FromEnvironment()));
    spec.devices = launcher_.GetStringList("container.devices");
    spec.mounts = mounts_;
    spec.env_names = env_.names;
    spec.ulimits = ulimits.values;
    spec.engine_options = engine_options_;
    spec.inner_args = InnerArguments(inner);
    inner_args_ = spec.inner_args;
    for (const std::string& arg : spec.inner_args) {
      // The engines hand the command to the runtime as JSON (the OCI config),
      // which turns such bytes into U+FFFD: refuse rather than change it.
      if (!IsValidUtf8(arg)) {
        return UsageError("container: argument " + ShellQuote(arg) +
                              " is not valid UTF-8, and a container engine would change it on the way in",
                          "pass such bytes another way (a file in a mounted directory), or encode them (base64)");
      }
    }
    command_ = BuildEngineCommand(spec);
    warnings_.insert(warnings_.end(), command_.warnings.begin(), command_.warnings.end());
    return Status::Ok();
  }

  Result<int> PrintDryRun() const {
    std::cout << "container: " << engine_.name() << (engine_found_ ? " (" + engine_.executable + ")" : " (not found)")
              << ", name " << name_
              << (launcher_.GetString("container.name").empty() ? " (random part differs per run)" : "")
              << "\n  the image needs glibc " << RequiredGlibcText() << " or newer (its loader checks at start)\n";
    for (const std::string& dir : mounts_.create) std::cout << "  would create " << dir << " on the host\n";
    for (const EngineOption& option : unknown_options_) std::cout << "  " << DescribeEngineOption(option, engine_.name()) << "\n";
    std::cout << "engine command:\n  " << ShowCommand(command_.argv, env_.values) << "\n" << std::flush;
    // What primus-cli inside the image will be asked, checked here (the
    // working directory and the mounts are the same paths there).
    Result<std::string> self = SelfExecutable();
    if (!self.ok()) return self.error();
    std::vector<std::string> node_command = {*self};
    node_command.insert(node_command.end(), inner_args_.begin(), inner_args_.end());
    if (Status checked = CheckNodeCommand({node_command, 1, "the container", 0, /*in_image=*/true}); !checked.ok()) return checked.error();
    return 0;
  }

  Result<int> Run() {
    for (const std::string& dir : mounts_.create) {
      // The agent's default log root is ours alone, as the agent would make it.
      Status made = dir == DefaultRunsDir() ? MakePrivateDir(dir) : MakeDirs(dir, PrivateDirMode());
      if (!made.ok()) return made.error();
    }
    for (const EngineOption& option : unknown_options_) log::Info("{}", DescribeEngineOption(option, engine_.name()));
    log::Debug("engine command: {}", ShowCommand(command_.argv, env_.values));
    ContainerRun run;
    run.argv = command_.argv;
    run.env_additions = env_.values;
    run.container_name = name_;
    run.stop_grace_s = launcher_.GetDouble("direct.term_timeout") + 10;
    auto exit = RunContainer(run);
    if (!exit.ok()) return exit.error();
    if (exit->exit_code == 0 && exit->stop_signal == 0) return 0;

    // Whatever ended it, the container goes: by its name, unless the name
    // was someone else's.
    FailedRun failed{engine_.name(), exit->exit_code, exit->stderr_tail, image_, pull_, name_};
    if (!exit->removed && !NameWasTaken(failed)) RemoveContainer(engine_.executable, name_);
    if (exit->stop_signal != 0) {
      // Stopped on request: the signal's code, whatever stage the engine was at.
      return exit->exit_code == 0 ? 0 : 128 + exit->stop_signal;
    }
    if (auto loader = ExplainLoaderFailure(exit->stderr_tail, image_, kInnerBinary, RequiredGlibcText())) return *loader;
    if (auto engine_error = ExplainEngineFailure(failed)) return *engine_error;
    return exit->exit_code;
  }

  const RuntimeContext& context_;
  const config::LauncherConfig& launcher_;
  const ModeInvocation& mode_;
  const bool dry_run_;
  const std::map<std::string, std::string> host_env_;
  const std::string cwd_;

  Engine engine_{EngineKind::kPodman, "podman", ""};
  bool engine_found_ = false;
  std::string image_, pull_, name_;
  std::vector<std::string> engine_options_;
  std::vector<EngineOption> unknown_options_;  // passed through: named in the plan and the log
  std::vector<std::string> inner_args_;        // what primus-cli inside the image is given
  ConfigFilesInUse config_files_;
  std::map<std::string, std::string> launcher_env_;  // PRIMUS_JOB_ID, XDG_CONFIG_HOME
  MountPlan mounts_;
  EnvForwarding env_;
  EngineCommand command_;
  std::vector<std::string> warnings_;
};

class ContainerRuntime : public Runtime {
 public:
  std::string name() const override { return "container"; }
  std::string summary() const override { return "run the task inside a docker/podman image"; }
  std::string usage() const override {
    return "primus-cli [global options] container [--image IMG] [container options] [engine flags] -- [direct ...] <task> [args]";
  }
  std::vector<std::string> examples() const override {
    return {
        "primus-cli container --image rocm/megatron:v25.8 -- train pretrain --config exp.yaml",
        "primus-cli container -- benchmark gemm -M 4096",
        "primus-cli container --image IMG -v /data:/data:ro -- direct --nproc-per-node 8 -- run ./go.sh",
    };
  }
  std::string details() const override {
    return "The host's primus-cli is mounted read-only into the image and runs `direct` there,\n"
           "so the image needs no primus-cli, only glibc " + RequiredGlibcText() + " or newer. The working directory\n"
           "is mounted at the same path (logs, checkpoints and snapshots land on the host).\n"
           "Devices follow the detected GPUs (AMD: /dev/kfd, /dev/dri; NVIDIA: --gpus all or\n"
           "CDI); --network=host and --ipc=host; host variables with the prefixes of\n"
           "container.forward_env (PRIMUS_ NCCL_ RCCL_ GLOO_ HSA_ HIP_ CUDA_ TORCH_) and the\n"
           "job token are passed by name, never by value. The container is named\n"
           "primus-<job>-n<rank>-<random> and removed at the end; Ctrl-C or SIGTERM stops\n"
           "it, and only it. Unknown flags go to `<engine> run` unchanged. docs/container.md\n";
  }
  const std::vector<OptionSpec>& options() const override {
    static const std::vector<OptionSpec> table = {
        {{"--image"}, K::kValue, "IMAGE", "container.image", "image to run (default: container.image in the config)"},
        {{"--mount", "--volume", "-v"}, K::kValue, "HOST:CTR[:ro]", "container.mounts", "bind-mount a path", true},
        {{"--env", "-e"}, K::kValue, "K=V|K", "container.env", "set or forward a variable", true},
        {{"--device"}, K::kValue, "DEV", "container.devices", "add a device", true},
        {{"--engine"}, K::kValue, "docker|podman", "container.engine", "container engine (default: auto-detect)"},
        {{"--name"}, K::kValue, "NAME", "container.name", "container name (default: unique per launch)"},
        {{"--shm-size"}, K::kValue, "SIZE", "container.shm_size", "private /dev/shm of this size (default: the host's, --ipc=host)"},
        {{"--user", "-u"}, K::kValue, "USER", "container.user", "user inside the container"},
        {{"--pull"}, K::kValue, "never|missing|always", "container.pull", "when to pull the image"},
    };
    return table;
  }
  std::vector<std::string> inner_modes() const override { return {"direct"}; }
  UnknownOptionPolicy unknown_options() const override { return UnknownOptionPolicy::kPassThrough; }
  bool task_word_ends_options() const override { return true; }

  Result<int> Execute(const RuntimeContext& context) override { return ContainerLaunch(context).Execute(); }
};

RuntimeRegistration<ContainerRuntime> container_registration;

}  // namespace
}  // namespace primus::runtime
