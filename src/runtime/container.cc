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

#include "config/launcher_config.h"
#include "config/value.h"
#include "hooks/hook_runner.h"
#include "platform/host_detect.h"
#include "platform/launcher_request.h"
#include "platform/roots.h"
#include "runtime/container_command.h"
#include "runtime/container_config_files.h"
#include "runtime/container_devices.h"
#include "runtime/container_engine.h"
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
#include "util/process_environment.h"
#include "util/strings.h"

namespace primus::runtime {
namespace {

using K = OptionSpec::Kind;

// "flag --engine", "/etc/primus/config.yaml:3:9", "default".
std::string Where(const config::LauncherConfig& launcher, std::string_view key) {
  return std::string(key) + " (" + launcher.OriginOf(key).Describe() + ")";
}

std::string SelfExecutable() {
  char path[4096] = {};
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
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

class ContainerRuntime : public Runtime {
 public:
  std::string name() const override { return "container"; }
  std::string summary() const override { return "run the task inside a docker/podman image"; }
  std::string usage() const override {
    return "primus-cli [global options] container [--image IMG] [container options] [engine flags] -- [direct ...] <task> [args]";
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

  Result<int> Execute(const RuntimeContext& context) override {
    const config::LauncherConfig& launcher = *context.launcher;
    const ModeInvocation& mode = context.launch->chain[context.depth];
    const bool dry_run = context.dry_run;
    std::map<std::string, std::string> host_env = ProcessEnvironment();
    std::string cwd = CurrentDir();
    std::vector<std::string> warnings;

    // The engine and the image.
    Engine engine{EngineKind::kPodman, "podman", ""};
    auto found = FindEngine(launcher.GetString("container.engine"), host_env, Where(launcher, "container.engine"));
    if (found.ok()) {
      engine = *found;
    } else if (!dry_run || found.error().code == ExitCode::kUsage) {
      return found.error();
    } else {
      log::Warn("{} (a real run stops here, exit 4)", found.error().message);
    }
    std::string image = launcher.GetString("container.image");
    if (image.empty()) {
      Error missing = UsageError("no image to run: container.image is empty",
                                 "pass --image IMAGE, or set container.image in a configuration file");
      if (!dry_run) return missing;
      log::Warn("{} (a real run stops here, exit 2)", missing.message);
      image = "<image>";
    }
    std::string pull = ToLower(launcher.GetString("container.pull"));
    if (pull != "never" && pull != "missing" && pull != "always") {
      return UsageError(Where(launcher, "container.pull") + ": '" + pull + "' is not a pull policy" +
                            DidYouMean(pull, {"never", "missing", "always"}),
                        "use never, missing or always");
    }

    // The user's engine flags: container.options, then those passed through.
    std::vector<std::string> engine_options = launcher.GetStringList("container.options");
    engine_options.insert(engine_options.end(), mode.passthrough.begin(), mode.passthrough.end());
    std::erase(engine_options, "--rm");  // always there
    if (HasEngineFlag(engine_options, {"-d", "--detach"})) {
      return UsageError("container: -d/--detach cannot be passed to the engine",
                        "the container runs in the foreground, so that its exit code is the launch's and Ctrl-C stops it");
    }

    // The name: the user's, or one of our own.
    std::string job_id = launcher.scheduler().job_id;
    if (job_id.empty() && host_env.count("PRIMUS_JOB_ID")) job_id = host_env.at("PRIMUS_JOB_ID");
    int node_rank = static_cast<int>(launcher.GetInt("direct.node_rank"));
    std::string name = launcher.GetString("container.name");
    if (name.empty()) name = ContainerName(job_id, node_rank, RandomSuffix());

    // What the inner primus-cli reads and writes on the host.
    ConfigFilesInUse config_files = FindConfigFilesInUse(launcher.effective(), DefaultConfigFileLayers(host_env));
    std::map<std::string, std::string> launcher_env;
    if (!launcher.scheduler().job_id.empty()) launcher_env["PRIMUS_JOB_ID"] = launcher.scheduler().job_id;
    MountInputs mount_inputs;
    mount_inputs.binary = SelfExecutable();
    mount_inputs.hooks_dir = hooks::BuiltinHooksDirectory();
    mount_inputs.cwd = cwd;
    mount_inputs.read_only = config_files.files;
    std::string user_config_dir = DirName(DefaultConfigFileLayers(host_env).user_file);
    if (IsDirectory(user_config_dir)) {
      mount_inputs.read_only.push_back(user_config_dir);
      launcher_env["XDG_CONFIG_HOME"] = DirName(user_config_dir);
    }
    for (const std::string& dir : Split(host_env.count("PRIMUS_PROFILE_PATH") ? host_env.at("PRIMUS_PROFILE_PATH") : "", ':')) {
      if (!dir.empty()) mount_inputs.read_only.push_back(dir);
    }
    for (const char* key : {"direct.patch", "direct.hooks_dir"}) {
      for (const std::string& path : launcher.GetStringList(key)) mount_inputs.read_only.push_back(path);
    }
    if (std::string log_dir = launcher.GetString("direct.log_dir"); !log_dir.empty()) {
      mount_inputs.writable.push_back(log_dir);
    } else if (launcher.GetString("container.user").empty() &&
               (!host_env.count("TMPDIR") || host_env.at("TMPDIR").empty() || host_env.at("TMPDIR") == "/tmp")) {
      // The agent's default log directory, so that the paths it prints exist here.
      mount_inputs.writable.push_back("/tmp/primus-" + std::to_string(getuid()));
    }
    TaskPaths task_paths = FindTaskPaths(context.launch->task, context.launch->task_args, host_env);
    mount_inputs.read_only.insert(mount_inputs.read_only.end(), task_paths.read.begin(), task_paths.read.end());
    mount_inputs.writable.insert(mount_inputs.writable.end(), task_paths.written.begin(), task_paths.written.end());
    for (const std::string& text : launcher.GetStringList("container.mounts")) {
      auto mount = ParseMount(text, cwd, Where(launcher, "container.mounts"));
      if (!mount.ok()) return mount.error();
      if (mount->raw.empty() && mount->host.starts_with("/") && !PathExists(mount->host)) {
        Error missing = EnvironmentError("container.mounts: " + mount->host + " (from '" + text + "') does not exist on this host",
                                         "create it first, or correct the path");
        if (!dry_run) return missing;
        log::Warn("{} (a real run stops here, exit 4)", missing.message);
      }
      mount_inputs.user.push_back(*mount);
    }
    MountPlan mounts = PlanMounts(mount_inputs);
    warnings.insert(warnings.end(), mounts.warnings.begin(), mounts.warnings.end());

    // The environment, by name.
    EnvRequest env_request;
    env_request.entries = launcher.GetStringList("container.env");
    env_request.entries_origin = Where(launcher, "container.env");
    env_request.prefixes = launcher.GetStringList("container.forward_env");
    env_request.host = host_env;
    env_request.launcher = launcher_env;
    auto env = PlanEnvironment(env_request);
    if (!env.ok()) return env.error();
    warnings.insert(warnings.end(), env->warnings.begin(), env->warnings.end());

    // Limits and devices.
    UlimitPlan ulimits = PlanUlimits(engine.kind, ReadHostLimits(), UserUlimits(engine_options));
    warnings.insert(warnings.end(), ulimits.warnings.begin(), ulimits.warnings.end());
    platform::HostInfo host = platform::DetectHost(platform::Roots::FromEnvironment());

    // The command inside, then the engine's.
    InnerInputs inner;
    inner.launch = context.launch;
    inner.depth = context.depth;
    inner.launcher = &launcher;
    inner.direct_options = &RuntimeRegistry::Global().Find("direct")->options();
    inner.global_options = &GlobalOptions();
    inner.forwarded_env = std::set<std::string>(env->names.begin(), env->names.end());
    if (!config_files.explicit_file.empty()) inner.config_file = AbsolutePath(config_files.explicit_file, cwd);

    ContainerSpec spec;
    spec.engine = engine.kind;
    spec.engine_executable = engine.executable;
    spec.image = image;
    spec.name = name;
    spec.pull = pull;
    spec.user = launcher.GetString("container.user");
    spec.shm_size = launcher.GetString("container.shm_size");
    spec.gpus = FindGpuDevices(host);
    spec.devices = launcher.GetStringList("container.devices");
    spec.mounts = mounts;
    spec.env_names = env->names;
    spec.ulimits = ulimits.values;
    spec.engine_options = engine_options;
    spec.inner_args = InnerArguments(inner);
    EngineCommand command = BuildEngineCommand(spec);
    warnings.insert(warnings.end(), command.warnings.begin(), command.warnings.end());
    for (const std::string& warning : warnings) log::Warn("{}", warning);

    if (dry_run) {
      std::cout << "container: " << engine.name() << (found.ok() ? " (" + engine.executable + ")" : " (not found)")
                << ", name " << name << (launcher.GetString("container.name").empty() ? " (random part differs per run)" : "")
                << "\n  the image needs glibc " << RequiredGlibcText() << " or newer (its loader checks at start)\n";
      for (const std::string& dir : mounts.create) std::cout << "  would create " << dir << " on the host\n";
      std::cout << "engine command:\n  " << ShowCommand(command.argv, env->values) << "\n" << std::flush;
      return 0;
    }

    for (const std::string& dir : mounts.create) {
      if (Status made = MakeDirs(dir); !made.ok()) return made.error();
    }
    log::Debug("engine command: {}", ShowCommand(command.argv, env->values));
    ContainerRun run;
    run.argv = command.argv;
    run.env_additions = env->values;
    run.container_name = name;
    run.stop_grace_s = launcher.GetDouble("direct.term_timeout") + 10;
    auto exit = RunContainer(run);
    if (!exit.ok()) return exit.error();
    if (exit->exit_code == 0 && exit->stop_signal == 0) return 0;

    FailedRun failed{engine.name(), exit->exit_code, exit->stderr_tail, image, pull, name};
    if (!exit->removed && !NameWasTaken(failed)) RemoveContainer(engine.executable, name);
    if (exit->stop_signal != 0) {
      // Stopped on request: the signal's code, whatever stage the engine was at.
      return exit->exit_code == 0 ? 0 : 128 + exit->stop_signal;
    }
    if (auto loader = ExplainLoaderFailure(exit->stderr_tail, image, kInnerBinary, RequiredGlibcText())) return *loader;
    if (auto engine_error = ExplainEngineFailure(failed)) return *engine_error;
    return exit->exit_code;
  }

 private:
  static std::string RequiredGlibcText() {
    static const std::string version = [] {
      auto required = RequiredGlibc(SelfExecutable());
      return required.ok() ? *required : std::string("2.34");
    }();
    return version;
  }
};

RuntimeRegistration<ContainerRuntime> registration;

}  // namespace
}  // namespace primus::runtime
