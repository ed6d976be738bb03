// `primus-cli container` on real engines: podman with a private store and a
// private dockerd (tests/support/container_engines.h), images imported from
// root filesystems built here. What a user relies on: the task's exit code,
// its arguments byte for byte, PyTorch DDP inside, Ctrl-C and SIGTERM leaving
// no container and no process (and someone else's container untouched), and
// clear errors for a missing engine, a missing image and an image too old.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "wait_for.h"
#include "container_engines.h"
#include "run_process.h"
#include "slurm_cluster.h"
#include "start_process.h"
#include "text.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::testing {
namespace {

using testing::WaitFor;
using testing::ReadOrEmpty;

using Clock = std::chrono::steady_clock;

ProcessOptions WithEnv(const EnvOverrides& env, const std::string& cwd, double timeout_s = 120) {
  ProcessOptions options;
  options.env = env;
  options.cwd = cwd;
  options.timeout_s = timeout_s;
  return options;
}

// Polls `done` every 20 ms for up to `timeout_s`.
// The arguments a task received, written NUL-separated by the task itself.
const char kArgsScript[] = "for a in \"$@\"; do printf '%s\\0' \"$a\"; done > args.out";
const std::vector<std::string> kAwkwardArgs = {"two words", "it's", "say \"hi\"", "$HOME", "`id`", "$(id)",
                                               "line1\nline2", "back\\slash", "*", "", "--", "-x"};

class PodmanTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    store_ = PodmanStore::Start(&setup_error_);
    if (!store_) return;
    for (auto [kind, image] : {std::pair{RootfsKind::kMini, "local/mini"}, std::pair{RootfsKind::kEmptyUsr, "local/usr"},
                               std::pair{RootfsKind::kOldGlibc, "local/oldglibc"}}) {
      if (setup_error_ = store_->ImportImage(kind, image); !setup_error_.empty()) return;
    }
  }
  static void TearDownTestSuite() { store_.reset(); }
  void SetUp() override { ASSERT_TRUE(store_ && setup_error_.empty()) << setup_error_; }
  void TearDown() override {
    if (store_) {
      EXPECT_EQ(store_->ContainerNames(), std::vector<std::string>{}) << "a test left a container";
    }
  }

  ProcessResult Primus(const std::vector<std::string>& args, EnvOverrides extra = {}) {
    EnvOverrides env = store_->Environment();
    env.insert(extra.begin(), extra.end());
    return RunPrimus(args, WithEnv(env, dir_.path()));
  }

  // Starts `primus-cli container ... -- run /bin/sleep <marker>`, waits until
  // the sleep runs inside, and returns the pid (the container's name in *name).
  pid_t StartSleeper(const std::string& marker, std::string* name) {
    ProcessOptions options = WithEnv(store_->Environment(), dir_.path());
    pid_t pid = StartProcess({PRIMUS_BINARY, "container", "--image", "local/mini", "--pull", "never", "--", "run",
                              "/bin/sleep", marker},
                             dir_.path() + "/out", dir_.path() + "/err", options);
    bool running = WaitFor([&] { return !ProcessesStartingWith("/bin/sleep " + marker + " ").empty(); }, 30);
    for (const std::string& container : store_->ContainerNames()) {
      if (container.starts_with("primus-")) *name = container;
    }
    EXPECT_TRUE(running) << ReadOrEmpty(dir_.path() + "/err");
    return pid;
  }

  static std::unique_ptr<PodmanStore> store_;
  static std::string setup_error_;
  TempDir dir_;
};

std::unique_ptr<PodmanStore> PodmanTest::store_;
std::string PodmanTest::setup_error_;

TEST_F(PodmanTest, ATaskRunsAndItsExitCodeComesBack) {
  ProcessResult ok = Primus({"container", "--image", "local/mini", "--pull", "never", "--", "run", "/bin/echo", "hello from inside"});
  EXPECT_EQ(ok.exit_code, 0) << ok.all();
  EXPECT_NE(ok.out.find("hello from inside"), std::string::npos) << ok.all();

  ProcessResult failed = Primus({"container", "--image", "local/mini", "--pull", "never", "--", "run", "/bin/sh", "-c", "exit 7"});
  EXPECT_EQ(failed.exit_code, 7) << failed.all();
}

TEST_F(PodmanTest, ArgumentsReachTheTaskUnchanged) {
  std::vector<std::string> args = {"container", "--image", "local/mini", "--pull", "never", "--", "run", "/bin/sh", "-c", kArgsScript, "sh"};
  args.insert(args.end(), kAwkwardArgs.begin(), kAwkwardArgs.end());
  ProcessResult result = Primus(args);
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_EQ(SplitNul(ReadOrEmpty(dir_.path() + "/args.out")), kAwkwardArgs) << "written through the mounted working directory";
}

TEST_F(PodmanTest, EnvironmentIsForwardedByNameAndTheTokenNeverShows) {
  // The job token goes to the inner agent by name (--env PRIMUS_JOB_TOKEN,
  // below); the agent keeps it from its workers (agent/worker_env.h).
  std::string script =
      "printf '%s|%s|%s|%s\\n' \"${PRIMUS_JOB_TOKEN:-no token}\" \"$NCCL_DEBUG\" \"$EXTRA\" \"${UNRELATED:-unset}\"";
  EnvOverrides env = {{"PRIMUS_JOB_TOKEN", "tok-5ecret"}, {"NCCL_DEBUG", "INFO"}, {"UNRELATED", "x"}};
  ProcessResult result = Primus({"container", "--image", "local/mini", "--pull", "never", "--env", "EXTRA=a b",
                                 "--", "run", "/bin/sh", "-c", script},
                                env);
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_NE(result.out.find("no token|INFO|a b|unset"), std::string::npos) << result.all();

  ProcessResult dry = Primus({"--dry-run", "container", "--image", "local/mini", "--env", "EXTRA=a b", "--", "run", "/bin/true"}, env);
  ASSERT_EQ(dry.exit_code, 0) << dry.all();
  EXPECT_EQ(dry.all().find("tok-5ecret"), std::string::npos) << "the token's value is never printed";
  EXPECT_NE(dry.out.find("--env PRIMUS_JOB_TOKEN"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("EXTRA='a b' "), std::string::npos) << "values we add: in the engine's environment";
}

TEST_F(PodmanTest, DryRunPrintsTheCommandAndRunsNothing) {
  std::vector<std::string> args = {"--dry-run", "container", "--image", "local/mini", "--", "run", "/bin/sh", "-c", kArgsScript, "sh"};
  args.insert(args.end(), kAwkwardArgs.begin(), kAwkwardArgs.end());
  ProcessResult result = Primus(args);
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_NE(result.out.find("engine command:"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("podman run --rm --name primus-n0-"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("--network=host --ipc=host --workdir " + dir_.path()), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("--entrypoint /opt/primus/bin/primus-cli local/mini direct -- run /bin/sh -c"), std::string::npos);
  EXPECT_NE(result.out.find("'two words' 'it'\\''s' 'say \"hi\"' '$HOME' '`id`' '$(id)' $'line1\\nline2'"),
            std::string::npos)
      << result.out;
  EXPECT_FALSE(PathExists(dir_.path() + "/args.out"));
  EXPECT_EQ(store_->ContainerNames(), std::vector<std::string>{});
}

// --log_file as in direct: the outer primus-cli writes the file (what the
// container printed included), the engine never sees the flag, and a flag we
// do not know is named before it goes to podman.
TEST_F(PodmanTest, LogFileHoldsTheContainersOutputAndUnknownFlagsAreNamed) {
  ProcessResult dry = Primus({"--dry-run", "container", "--image", "local/mini", "--pull", "never", "--log_file",
                              "logs/c.log", "--label", "primus.test=1", "--", "run", "/bin/echo", "hello"});
  ASSERT_EQ(dry.exit_code, 0) << dry.all();
  EXPECT_NE(dry.out.find("log file: logs/c.log would receive a copy"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("passing --label primus.test=1 to podman as an engine option"), std::string::npos) << dry.out;
  EXPECT_EQ(dry.out.find("c.log", dry.out.find("engine command:")), std::string::npos) << "not an engine option: " << dry.out;
  EXPECT_FALSE(PathExists(dir_.path() + "/logs")) << "nothing created under --dry-run";

  ProcessResult run = Primus({"container", "--image", "local/mini", "--pull", "never", "--log_file", "logs/c.log",
                              "--label", "primus.test=1", "--", "run", "/bin/echo", "hello from inside"});
  ASSERT_EQ(run.exit_code, 0) << run.all();
  EXPECT_NE(run.out.find("hello from inside"), std::string::npos) << "the terminal still gets it";
  std::string log = ReadOrEmpty(dir_.path() + "/logs/c.log");
  EXPECT_NE(log.find("hello from inside"), std::string::npos) << log;
  EXPECT_NE(log.find("passing --label primus.test=1 to podman as an engine option"), std::string::npos) << log;
  EXPECT_EQ(log.find("--log"), log.find("--log-file: a copy")) << "only our own line names it: " << log;
}

// train with its workspace outside the working directory: the workspace is
// mounted (created first), and the experiment directory lands on the host.
TEST_F(PodmanTest, TrainWritesItsExperimentDirectoryOnTheHost) {
  TempDir workspace;
  std::string experiment = "exp_name: tiny-job\nworkspace: " + workspace.path() +
                           "/runs\nbackend: command\ncommand: {argv: [/bin/true]}\n";
  std::ofstream(dir_.path() + "/exp.yaml") << experiment;
  ProcessResult result = Primus({"container", "--image", "local/mini", "--pull", "never", "--", "train", "pretrain",
                                 "--config", "exp.yaml"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  std::vector<std::string> runs;
  for (const auto& entry : std::filesystem::directory_iterator(workspace.path() + "/runs")) runs.push_back(entry.path());
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(std::filesystem::path(runs[0]).filename().string().starts_with("tiny-job_")) << runs[0];
  EXPECT_NE(ReadOrEmpty(runs[0] + "/metadata.json").find("\"succeeded\""), std::string::npos) << ReadOrEmpty(runs[0] + "/metadata.json");
  EXPECT_TRUE(PathExists(runs[0] + "/config/resolved.yaml"));
}

TEST_F(PodmanTest, MissingImageIsAClearError) {
  ProcessResult result = Primus({"container", "--image", "local/absent", "--pull", "never", "--", "run", "/bin/true"});
  EXPECT_EQ(result.exit_code, 4) << result.all();
  EXPECT_NE(result.err.find("image local/absent is not available to podman"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("--pull is never"), std::string::npos) << result.err;
}

TEST_F(PodmanTest, AnImageWithAnOldGlibcIsAClearError) {
  ProcessResult result = Primus({"container", "--image", "local/oldglibc", "--pull", "never", "--", "run", "/bin/true"});
  EXPECT_EQ(result.exit_code, 4) << result.all();
  EXPECT_NE(result.err.find("the C library in image local/oldglibc is too old for primus-cli"), std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("not found"), std::string::npos) << "the loader's own words";
}

TEST_F(PodmanTest, ANameInUseIsRefusedAndItsContainerSurvives) {
  std::string other = "someone-else-" + std::to_string(getpid());
  ASSERT_EQ(store_->Client({"run", "-d", "--name", other, "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024",
                            "local/mini", "/bin/sleep", "600"})
                .exit_code,
            0);
  ProcessResult result = Primus({"container", "--image", "local/mini", "--pull", "never", "--name", other, "--", "run", "/bin/true"});
  EXPECT_EQ(result.exit_code, 4) << result.all();
  EXPECT_NE(result.err.find("container name " + other + " is already in use"), std::string::npos) << result.err;
  EXPECT_EQ(store_->Client({"inspect", "-f", "{{.State.Running}}", other}).out, "true\n") << "not ours: untouched";
  store_->Client({"rm", "-f", "-t", "0", other});
}

// Ctrl-C (SIGINT), SIGTERM and SIGKILL mid-run: the outer primus-cli exits
// with the signal's code, its container and every process of it are gone, and
// a container it did not start keeps running.
class PodmanStopTest : public PodmanTest, public ::testing::WithParamInterface<int> {};

TEST_P(PodmanStopTest, StoppingMidRunLeavesNoContainerAndNoProcess) {
  const int signal = GetParam();
  std::string bystander = "bystander-" + std::to_string(getpid());
  ASSERT_EQ(store_->Client({"run", "-d", "--name", bystander, "--ulimit", "nofile=1024:1024", "--ulimit",
                            "nproc=1024:1024", "local/mini", "/bin/sleep", "600"})
                .exit_code,
            0);
  std::string marker = std::to_string(5000 + getpid() % 1000 + signal);
  std::string name;
  pid_t pid = StartSleeper(marker, &name);
  EXPECT_TRUE(name.starts_with("primus-n0-")) << name;

  auto started = Clock::now();
  kill(pid, signal);
  int code = WaitForExit(pid, 60);  // SIGKILLs it after the timeout: nothing of the test outlives it
  double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  EXPECT_EQ(code, 128 + signal) << ReadOrEmpty(dir_.path() + "/err");
  EXPECT_LT(seconds, 10) << "the inner agent stops the task at once";
  EXPECT_TRUE(WaitFor([&] { return ProcessesMentioning("sleep " + marker).empty(); }, 5)) << "the task is gone";
  EXPECT_TRUE(WaitFor([&] { return ProcessesMentioning(name).empty(); }, 5)) << "no conmon, no podman for it";
  EXPECT_EQ(store_->ContainerNames(), std::vector<std::string>{bystander}) << "ours removed, theirs kept";
  EXPECT_EQ(store_->Client({"inspect", "-f", "{{.State.Running}}", bystander}).out, "true\n");
  store_->Client({"rm", "-f", "-t", "0", bystander});
}

// SIGKILL: primus-cli cannot act, but the engine client gets SIGTERM as it
// dies (PR_SET_PDEATHSIG) and proxies it to the container.
INSTANTIATE_TEST_SUITE_P(Signals, PodmanStopTest, ::testing::Values(SIGINT, SIGTERM, SIGKILL),
                         [](const auto& info) { return std::string(sigabbrev_np(info.param)); });

// Ctrl-C while the engine is still creating or starting the container: the
// container that comes up anyway is removed by its name.
TEST_F(PodmanTest, CtrlCWhileTheContainerStartsLeavesNothing) {
  for (int delay_ms : {30, 80, 150, 250}) {
    std::string marker = std::to_string(6000 + delay_ms);
    ProcessOptions options = WithEnv(store_->Environment(), dir_.path());
    pid_t pid = StartProcess({PRIMUS_BINARY, "container", "--image", "local/mini", "--pull", "never", "--", "run",
                              "/bin/sleep", marker},
                             dir_.path() + "/out", dir_.path() + "/err", options);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    kill(pid, SIGINT);
    EXPECT_EQ(WaitForExit(pid, 60), 130) << delay_ms << " ms: " << ReadOrEmpty(dir_.path() + "/err");
    EXPECT_EQ(store_->ContainerNames(), std::vector<std::string>{}) << delay_ms << " ms";
    EXPECT_TRUE(WaitFor([&] { return ProcessesMentioning("sleep " + marker).empty(); }, 5)) << delay_ms << " ms";
  }
}

TEST_F(PodmanTest, TorchDdpWithTwoWorkersInside) {
  ASSERT_TRUE(PathExists("/usr/bin/python3"));
  std::filesystem::copy_file(PRIMUS_SOURCE_DIR "/examples/ddp-smoke/train.py", dir_.path() + "/train.py");
  std::vector<std::string> args = {"container", "--image", "local/usr", "--pull", "never"};
  for (const std::string& flag : UsrMounts()) args.push_back(flag);
  for (const char* arg : {"--", "direct", "--nproc-per-node", "2", "--", "run", "/usr/bin/python3", "train.py", "--steps", "30"}) {
    args.push_back(arg);
  }
  ProcessResult result = Primus(args);
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_NE(result.out.find("done: 2 workers, 30 steps"), std::string::npos) << result.all();
  EXPECT_NE(result.out.find("replicas in sync: True"), std::string::npos);
}

// No engine at all: exit 4 naming both, and `direct`. Needs nothing installed.
TEST(ContainerEngineTest, MissingEngineNamesBothAndDirect) {
  TempDir empty;
  ProcessOptions options;
  options.env = {{"PATH", empty.path()}, {"DOCKER_HOST", "unix://" + empty.path() + "/docker.sock"}};
  ProcessResult result = RunPrimus({"container", "--image", "local/mini", "--", "run", "/bin/true"}, options);
  EXPECT_EQ(result.exit_code, 4) << result.all();
  EXPECT_NE(result.err.find("podman is not installed"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("docker is not installed"), std::string::npos);
  EXPECT_NE(result.err.find("primus-cli direct -- <task>"), std::string::npos);
  ProcessResult typo = RunPrimus({"container", "--engine", "dokcer", "--image", "x", "--", "run", "/bin/true"}, options);
  EXPECT_EQ(typo.exit_code, 2) << typo.all();
  EXPECT_NE(typo.err.find("flag --engine"), std::string::npos) << typo.err;
}

// What cannot be an engine option never reaches the engine: exit 2 saying
// where it belongs. Needs no engine.
TEST(ContainerEngineTest, FlagsThatCannotBeEngineOptionsAreRefused) {
  TempDir dir;
  ProcessOptions options;
  options.cwd = dir.path();
  options.env = {{"HOME", dir.path()}, {"NO_COLOR", "1"}};
  struct Case {
    std::vector<std::string> flags;
    const char* message;
    const char* hint;
  };
  for (const Case& c : {Case{{"--nproc_per_node", "2"}, "--nproc_per_node cannot be an option of docker or podman",
                             "-- direct --nproc-per-node"},
                        Case{{"--numa"}, "--numa is an option of direct, not of the container engine", "-- direct --numa --"},
                        Case{{"--cpu_shares", "2"}, "--cpu_shares cannot be an option", "(--cpu-shares)"}}) {
    std::vector<std::string> args = {"--dry-run", "container", "--engine", "podman", "--image", "img"};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    args.insert(args.end(), {"--", "run", "/bin/true"});
    ProcessResult result = RunPrimus(args, options);
    EXPECT_EQ(result.exit_code, 2) << result.all();
    EXPECT_NE(result.err.find(c.message), std::string::npos) << result.err;
    EXPECT_NE(result.err.find(c.hint), std::string::npos) << result.err;
    EXPECT_EQ(result.out.find("engine command"), std::string::npos);
  }
}

// Devices by the detected vendor, on fixture hosts (no GPU here): AMD's
// settings, NVIDIA's per engine, and nothing asked for that is missing.
TEST(ContainerEngineTest, DryRunDevicesFollowTheDetectedGpus) {
  TempDir dir;
  auto on = [&](const std::string& host, const std::string& engine) {
    ProcessOptions options;
    options.cwd = dir.path();
    std::string root = std::string(PRIMUS_SOURCE_DIR) + "/tests/fixtures/hosts/" + host;
    options.env = {{"PRIMUS_SYSFS_ROOT", root + "/sys"}, {"PRIMUS_PROCFS_ROOT", root + "/proc"},
                   {"PRIMUS_ETC_ROOT", root + "/etc"}, {"HOME", dir.path()}};
    return RunPrimus({"--dry-run", "container", "--engine", engine, "--image", "img", "--", "run", "/bin/true"}, options);
  };
  ProcessResult amd = on("mi300x-8", "podman");
  ASSERT_EQ(amd.exit_code, 0) << amd.all();
  EXPECT_NE(amd.out.find("--security-opt seccomp=unconfined --cap-add SYS_PTRACE"), std::string::npos) << amd.out;
  if (!PathExists("/dev/kfd")) {
    EXPECT_EQ(amd.out.find("/dev/kfd"), std::string::npos);
    EXPECT_NE(amd.err.find("/dev/kfd is missing"), std::string::npos) << amd.err;
  }
  if (!PathExists("/dev/infiniband")) {
    EXPECT_EQ(amd.out.find("infiniband"), std::string::npos);
  }
  ProcessResult nvidia_docker = on("h100-8", "docker");
  ASSERT_EQ(nvidia_docker.exit_code, 0) << nvidia_docker.all();
  EXPECT_NE(nvidia_docker.out.find("--gpus all"), std::string::npos) << nvidia_docker.out;
  ProcessResult nvidia_podman = on("h100-8", "podman");
  EXPECT_NE(nvidia_podman.out.find("--device nvidia.com/gpu=all"), std::string::npos) << nvidia_podman.out;
  ProcessResult cpu = on("cpu-only", "podman");
  EXPECT_EQ(cpu.out.find("--device"), std::string::npos) << cpu.out;
  EXPECT_EQ(cpu.out.find("seccomp"), std::string::npos);
}

// The same contract through a private docker daemon.
TEST(DockerTest, ExitCodeArgumentsMissingImageAndCtrlC) {
  std::string error;
  std::unique_ptr<DockerDaemon> docker = DockerDaemon::Start(&error);
  ASSERT_TRUE(docker) << error;
  ASSERT_EQ(docker->ImportImage(RootfsKind::kMini, "local/mini"), "");
  TempDir dir;
  ProcessOptions options = WithEnv(docker->Environment(), dir.path());

  ProcessResult failed = RunPrimus({"container", "--image", "local/mini", "--pull", "never", "--", "run", "/bin/sh", "-c", "exit 5"}, options);
  EXPECT_EQ(failed.exit_code, 5) << failed.all();

  std::vector<std::string> args = {"container", "--engine", "docker", "--image", "local/mini", "--pull", "never",
                                   "--", "run", "/bin/sh", "-c", kArgsScript, "sh"};
  args.insert(args.end(), kAwkwardArgs.begin(), kAwkwardArgs.end());
  ProcessResult echoed = RunPrimus(args, options);
  ASSERT_EQ(echoed.exit_code, 0) << echoed.all();
  EXPECT_EQ(SplitNul(ReadOrEmpty(dir.path() + "/args.out")), kAwkwardArgs);

  ProcessResult missing = RunPrimus({"container", "--image", "local/absent", "--pull", "never", "--", "run", "/bin/true"}, options);
  EXPECT_EQ(missing.exit_code, 4) << missing.all();
  EXPECT_NE(missing.err.find("image local/absent is not available to docker"), std::string::npos) << missing.err;
  EXPECT_EQ(docker->ContainerNames(), std::vector<std::string>{});

  // Ctrl-C: the docker client proxies it; the daemon's container ends and goes.
  pid_t pid = StartProcess({PRIMUS_BINARY, "container", "--image", "local/mini", "--pull", "never", "--", "run",
                            "/bin/sleep", "4711"},
                           dir.path() + "/out", dir.path() + "/err", options);
  ASSERT_TRUE(WaitFor([&] { return !ProcessesStartingWith("/bin/sleep 4711 ").empty(); }, 30)) << ReadOrEmpty(dir.path() + "/err");
  EXPECT_EQ(docker->ContainerNames().size(), 1u);
  kill(pid, SIGINT);
  EXPECT_EQ(WaitForExit(pid, 60), 130) << ReadOrEmpty(dir.path() + "/err");
  EXPECT_TRUE(WaitFor([&] { return docker->ContainerNames().empty(); }, 5));
  EXPECT_TRUE(WaitFor([&] { return ProcessesMentioning("sleep 4711").empty(); }, 5));
}

// `slurm srun -- container` on the local Slurm cluster (2 slurmd, each node a
// network namespace with its own address and host name): every node's
// primus-cli starts a container, the scheduler's settings reach the agent
// inside (node rank, node count, master node1 and the job's port), the job
// token too, and a rank failing on node 2 ends the job with its own code.
TEST(SlurmContainerTest, SrunStartsAContainerOnEveryNode) {
  if (std::string why = SlurmCluster::Unavailable(); !why.empty()) GTEST_SKIP() << "no local Slurm cluster: " << why;
  std::string error;
  // Podman first: it mounts the hugetlb hierarchy, which the nodes' mount
  // namespaces must already see when their slurmd starts.
  std::unique_ptr<PodmanStore> store = PodmanStore::Start(&error);
  ASSERT_TRUE(store) << error;
  ASSERT_EQ(store->ImportImage(RootfsKind::kEmptyUsr, "local/usr"), "");
  std::unique_ptr<SlurmCluster> cluster = SlurmCluster::Start({}, &error);
  ASSERT_TRUE(cluster) << error;
  TempDir dir;
  std::filesystem::copy_file(PRIMUS_SOURCE_DIR "/examples/ddp-smoke/train.py", dir.path() + "/train.py");
  EnvOverrides env = cluster->Environment();
  for (const auto& [name, value] : store->Environment()) env[name] = value;
  env["HOME"] = dir.path();
  ProcessOptions options = WithEnv(env, dir.path(), 180);

  std::vector<std::string> container = {"container", "--image", "local/usr", "--pull", "never"};
  for (const std::string& flag : UsrMounts()) container.push_back(flag);
  std::vector<std::string> ddp = {"slurm", "srun", "-N", "2", "--"};
  ddp.insert(ddp.end(), container.begin(), container.end());
  for (const char* arg : {"--", "run", "/usr/bin/python3", "train.py", "--steps", "30"}) ddp.push_back(arg);
  ProcessResult result = RunPrimus(ddp, options);
  ASSERT_EQ(result.exit_code, 0) << result.all() << cluster->LogTails();
  EXPECT_NE(result.out.find("[node1:0] done: 2 workers, 30 steps"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("replicas in sync: True"), std::string::npos);
  EXPECT_NE(result.err.find("[node2] [INFO] starting 1 worker (rank 1 of world size 2)"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("master node1:"), std::string::npos) << "from SLURM_STEP_NODELIST, outside: " << result.err;

  std::vector<std::string> failing = {"slurm", "srun", "-N", "2", "--"};
  failing.insert(failing.end(), container.begin(), container.end());
  for (const char* arg : {"--", "run", "/bin/sh", "-c", "if [ \"$GROUP_RANK\" = 1 ]; then sleep 0.5; exit 7; fi; exec sleep 60"}) {
    failing.push_back(arg);
  }
  ProcessResult failed = RunPrimus(failing, options);
  EXPECT_EQ(failed.exit_code, 7) << failed.all();
  EXPECT_NE(failed.err.find("Root cause: rank 1 (local rank 0) on node2"), std::string::npos) << failed.err;
  EXPECT_TRUE(WaitFor([&] { return store->ContainerNames().empty(); }, 10)) << "every node removed its container";
}

}  // namespace
}  // namespace primus::testing
