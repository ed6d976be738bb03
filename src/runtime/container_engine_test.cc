#include "runtime/container_engine.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::runtime {
namespace {

// A directory of fake clients (never run: detection only looks) and, when
// asked, a real listening unix socket standing in for a docker daemon.
class EngineDirs : public ::testing::Test {
 protected:
  void AddClient(const std::string& name) {
    ASSERT_TRUE(MakeDirs(dir_.path() + "/bin").ok());
    ASSERT_TRUE(WriteFileAtomic(dir_.path() + "/bin/" + name, "#!/bin/sh\nexit 99\n", 0755).ok());
  }
  std::string Listen() {
    std::string path = dir_.path() + "/docker.sock";
    listener_ = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, path.c_str());
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    EXPECT_EQ(listen(listener_, 4), 0);
    return "unix://" + path;
  }
  std::map<std::string, std::string> Env(const std::string& docker_host = "unix:///nonexistent/docker.sock") {
    return {{"PATH", dir_.path() + "/bin"}, {"DOCKER_HOST", docker_host}};
  }
  void TearDown() override {
    if (listener_ >= 0) close(listener_);
  }
  ScopedTempDir dir_{"engines"};
  int listener_ = -1;
};

TEST_F(EngineDirs, NeitherEngineNamesBothAndDirect) {
  AddClient("docker");  // a client without a daemon is no engine
  auto engine = FindEngine("auto", Env());
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.error().code, ExitCode::kUnavailable);
  EXPECT_NE(engine.error().message.find("podman is not installed"), std::string::npos) << engine.error().message;
  EXPECT_NE(engine.error().message.find("no daemon answers at unix:///nonexistent/docker.sock"), std::string::npos);
  EXPECT_NE(engine.error().hint.find("primus-cli direct"), std::string::npos);
}

TEST_F(EngineDirs, PodmanWhenNoDockerDaemonAnswers) {
  AddClient("podman");
  AddClient("docker");
  auto engine = FindEngine("auto", Env());
  ASSERT_TRUE(engine.ok()) << engine.error().Format();
  EXPECT_EQ(engine->kind, EngineKind::kPodman);
  EXPECT_EQ(engine->executable, dir_.path() + "/bin/podman");
}

TEST_F(EngineDirs, AnAnsweringDockerDaemonIsPreferred) {
  AddClient("podman");
  AddClient("docker");
  std::string endpoint = Listen();
  auto engine = FindEngine("auto", Env(endpoint));
  ASSERT_TRUE(engine.ok()) << engine.error().Format();
  EXPECT_EQ(engine->kind, EngineKind::kDocker);
  EXPECT_EQ(engine->endpoint, endpoint);
  auto podman = FindEngine("podman", Env(endpoint));
  ASSERT_TRUE(podman.ok());
  EXPECT_EQ(podman->kind, EngineKind::kPodman);
}

TEST_F(EngineDirs, AnExplicitEngineThatIsMissing) {
  AddClient("docker");
  auto podman = FindEngine("podman", Env(), "container.engine (flag --engine)");
  ASSERT_FALSE(podman.ok());
  EXPECT_NE(podman.error().message.find("container.engine (flag --engine) is podman, but podman is not installed"),
            std::string::npos)
      << podman.error().message;
  auto docker = FindEngine("docker", Env());
  ASSERT_FALSE(docker.ok());
  EXPECT_NE(docker.error().message.find("no daemon answers"), std::string::npos);
  auto typo = FindEngine("podmn", Env(), "container.engine (flag --engine)");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error().code, ExitCode::kUsage);
  EXPECT_NE(typo.error().message.find("did you mean 'podman'"), std::string::npos);
}

TEST_F(EngineDirs, Endpoints) {
  EXPECT_EQ(DockerEndpoint({}), "unix:///var/run/docker.sock");
  EXPECT_EQ(DockerEndpoint({{"DOCKER_HOST", "tcp://127.0.0.1:2375"}}), "tcp://127.0.0.1:2375");
  EXPECT_FALSE(EndpointAnswers("unix://" + dir_.path() + "/none.sock"));
  EXPECT_TRUE(EndpointAnswers(Listen()));
  EXPECT_TRUE(EndpointAnswers("ssh://somewhere")) << "not checkable cheaply: the engine will say";
}

}  // namespace
}  // namespace primus::runtime
