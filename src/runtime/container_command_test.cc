#include "runtime/container_command.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "util/strings.h"

namespace primus::runtime {
namespace {

ContainerSpec BaseSpec() {
  ContainerSpec spec;
  spec.engine = EngineKind::kPodman;
  spec.engine_executable = "/usr/bin/podman";
  spec.image = "rocm/megatron-lm:v25.8";
  spec.name = "primus-42-n0-abcdef";
  spec.mounts.mounts = {{"/build/primus-cli", kInnerBinary, "ro", ""}, {"/work/exp", "/work/exp", "", ""}};
  spec.mounts.workdir = "/work/exp";
  spec.inner_args = {"direct", "--", "run", "/bin/true"};
  return spec;
}

std::string Text(const EngineCommand& command) { return ShellJoin(command.argv); }

bool HasSequence(const std::vector<std::string>& argv, const std::vector<std::string>& sequence) {
  return std::search(argv.begin(), argv.end(), sequence.begin(), sequence.end()) != argv.end();
}

TEST(ContainerCommandTest, TheWholeCommandForAPlainHost) {
  EngineCommand command = BuildEngineCommand(BaseSpec());
  EXPECT_EQ(Text(command),
            "/usr/bin/podman run --rm --name primus-42-n0-abcdef --pull=missing --network=host --ipc=host "
            "--workdir /work/exp -v /build/primus-cli:/opt/primus/bin/primus-cli:ro -v /work/exp:/work/exp "
            "--entrypoint /opt/primus/bin/primus-cli rocm/megatron-lm:v25.8 direct -- run /bin/true");
  EXPECT_TRUE(command.warnings.empty());
}

TEST(ContainerCommandTest, AmdDevicesThatExistWithTheirGroups) {
  ContainerSpec spec = BaseSpec();
  spec.gpus.vendor = "amd";
  spec.gpus.present = {"/dev/kfd", "/dev/dri"};
  spec.gpus.group_ids = {44, 109};
  EngineCommand command = BuildEngineCommand(spec);
  EXPECT_TRUE(HasSequence(command.argv, {"--device", "/dev/kfd", "--device", "/dev/dri", "--group-add", "44",
                                         "--group-add", "109", "--security-opt", "seccomp=unconfined", "--cap-add",
                                         "SYS_PTRACE"}))
      << Text(command);
  EXPECT_EQ(Text(command).find("infiniband"), std::string::npos) << "absent, so not asked for";
  EXPECT_TRUE(command.warnings.empty());
}

TEST(ContainerCommandTest, AmdWithoutItsDeviceFilesWarnsAndAsksForNone) {
  ContainerSpec spec = BaseSpec();
  spec.gpus.vendor = "amd";
  EngineCommand command = BuildEngineCommand(spec);
  EXPECT_EQ(Text(command).find("/dev/kfd"), std::string::npos);
  ASSERT_EQ(command.warnings.size(), 2u);
  EXPECT_NE(command.warnings[0].find("/dev/kfd is missing"), std::string::npos);
}

TEST(ContainerCommandTest, NvidiaByEngine) {
  ContainerSpec spec = BaseSpec();
  spec.gpus.vendor = "nvidia";
  spec.gpus.nvidia_cdi = true;
  EngineCommand podman = BuildEngineCommand(spec);
  EXPECT_TRUE(HasSequence(podman.argv, {"--device", "nvidia.com/gpu=all"})) << Text(podman);
  EXPECT_EQ(Text(podman).find("--gpus"), std::string::npos);
  EXPECT_TRUE(podman.warnings.empty());
  spec.gpus.nvidia_cdi = false;
  EXPECT_NE(BuildEngineCommand(spec).warnings.at(0).find("nvidia-ctk cdi generate"), std::string::npos);

  spec.engine = EngineKind::kDocker;
  spec.engine_executable = "docker";
  EngineCommand docker = BuildEngineCommand(spec);
  EXPECT_TRUE(HasSequence(docker.argv, {"--gpus", "all"})) << Text(docker);
  EXPECT_EQ(Text(docker).find("nvidia.com/gpu"), std::string::npos);
  EXPECT_EQ(Text(docker).find("seccomp"), std::string::npos) << "AMD's settings only for AMD";
}

TEST(ContainerCommandTest, InfinibandOnlyWhenPresentForAnyVendor) {
  ContainerSpec spec = BaseSpec();
  spec.gpus.present = {"/dev/infiniband"};
  EXPECT_TRUE(HasSequence(BuildEngineCommand(spec).argv, {"--device", "/dev/infiniband", "--cap-add", "IPC_LOCK"}));
  spec.gpus.present.clear();
  EXPECT_EQ(Text(BuildEngineCommand(spec)).find("infiniband"), std::string::npos);
}

TEST(ContainerCommandTest, UlimitsEnvDevicesAndUserFlagsInOrder) {
  ContainerSpec spec = BaseSpec();
  spec.ulimits = {"memlock=8388608:8388608", "nofile=20000:20000"};
  spec.env_names = {"PRIMUS_JOB_TOKEN", "NCCL_DEBUG"};
  spec.devices = {"/dev/fuse"};
  spec.engine_options = {"--cpus", "4"};
  spec.user = "1000:1000";
  std::string text = Text(BuildEngineCommand(spec));
  EXPECT_NE(text.find("--user 1000:1000"), std::string::npos);
  EXPECT_NE(text.find("--ulimit memlock=8388608:8388608 --ulimit nofile=20000:20000"), std::string::npos);
  EXPECT_NE(text.find("--device /dev/fuse"), std::string::npos);
  EXPECT_NE(text.find("--env PRIMUS_JOB_TOKEN --env NCCL_DEBUG --cpus 4 --entrypoint"), std::string::npos) << text;
}

TEST(ContainerCommandTest, TheUsersNetworkIpcWorkdirAndEntrypointWin) {
  ContainerSpec spec = BaseSpec();
  spec.engine_options = {"--network=bridge", "--ipc", "private", "-w", "/x", "--entrypoint", "/init.sh"};
  EngineCommand command = BuildEngineCommand(spec);
  std::string text = Text(command);
  EXPECT_EQ(text.find("--network=host"), std::string::npos);
  EXPECT_EQ(text.find("--ipc=host"), std::string::npos);
  EXPECT_EQ(text.find("--workdir"), std::string::npos);
  EXPECT_NE(text.find("--entrypoint /init.sh rocm/megatron-lm:v25.8 /opt/primus/bin/primus-cli direct --"),
            std::string::npos)
      << text;
  ASSERT_EQ(command.warnings.size(), 1u);
  EXPECT_NE(command.warnings[0].find("--network=host"), std::string::npos);
}

TEST(ContainerCommandTest, ShmSizeMeansAPrivateIpcNamespace) {
  ContainerSpec spec = BaseSpec();
  spec.shm_size = "64g";
  std::string text = Text(BuildEngineCommand(spec));
  EXPECT_NE(text.find("--shm-size 64g"), std::string::npos);
  EXPECT_EQ(text.find("--ipc=host"), std::string::npos) << "podman refuses both";
}

TEST(ContainerCommandTest, TaskArgumentsStaySeparateWords) {
  ContainerSpec spec = BaseSpec();
  std::vector<std::string> awkward = {"a b", "it's", "$HOME", "`id`", "line1\nline2", "\"q\"", ""};
  spec.inner_args = {"direct", "--", "run", "/bin/echo"};
  spec.inner_args.insert(spec.inner_args.end(), awkward.begin(), awkward.end());
  EngineCommand command = BuildEngineCommand(spec);
  std::vector<std::string> tail(command.argv.end() - static_cast<long>(awkward.size()), command.argv.end());
  EXPECT_EQ(tail, awkward);  // argv, not a shell string: nothing to re-quote
  EXPECT_NE(Text(command).find("'a b' 'it'\\''s' '$HOME' '`id`'"), std::string::npos) << Text(command);
}

TEST(ContainerCommandTest, EngineFlagHelpers) {
  EXPECT_TRUE(HasEngineFlag({"--net", "none"}, {"--network", "--net"}));
  EXPECT_TRUE(HasEngineFlag({"--network=none"}, {"--network"}));
  EXPECT_FALSE(HasEngineFlag({"--networking"}, {"--network"}));
  EXPECT_EQ(UserUlimits({"--ulimit", "nofile=10:10", "--cpus", "2", "--ulimit=memlock=-1:-1"}),
            (std::vector<std::string>{"nofile", "memlock"}));
}

}  // namespace
}  // namespace primus::runtime
