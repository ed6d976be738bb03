#include "runtime/container_failure.h"

#include <gtest/gtest.h>

namespace primus::runtime {
namespace {

FailedRun Failure(const std::string& engine, int code, const std::string& output, const std::string& pull = "never") {
  return FailedRun{engine, code, output, "local/nope", pull, "primus-n0-abcdef"};
}

TEST(ContainerFailureTest, MissingImageNamesTheImageAndThePullSetting) {
  // The engines' own words (podman 4.3, docker 20.10).
  for (const FailedRun& run : {Failure("podman", 125, "Error: local/nope: image not known\n"),
                               Failure("docker", 125, "docker: Error response from daemon: No such image: local/nope:latest.\n"
                                                  "See 'docker run --help'.\n")}) {
    auto error = ExplainEngineFailure(run);
    ASSERT_TRUE(error.has_value()) << run.engine;
    EXPECT_EQ(error->code, ExitCode::kUnavailable);
    EXPECT_NE(error->message.find("image local/nope is not available to " + run.engine), std::string::npos)
        << error->message;
    EXPECT_NE(error->hint.find("--pull is never"), std::string::npos) << error->hint;
  }
  auto pulled = ExplainEngineFailure(
      Failure("podman", 125,
          "Trying to pull localhost/nope:latest...\nError: initializing source docker://localhost/nope:latest: "
          "pinging container registry localhost: connection refused\n",
          "missing"));
  ASSERT_TRUE(pulled.has_value());
  EXPECT_NE(pulled->hint.find("--pull is missing"), std::string::npos);
}

TEST(ContainerFailureTest, ANameInUseIsNotOursToRemove) {
  FailedRun run = Failure("podman", 125,
                      "Error: creating container storage: the container name \"primus-n0-abcdef\" is already in use by "
                      "2ae5. You have to remove that container to be able to reuse that name: that name is already in use\n");
  EXPECT_TRUE(NameWasTaken(run));
  auto error = ExplainEngineFailure(run);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->message.find("already in use"), std::string::npos);
  EXPECT_NE(error->hint.find("never removes"), std::string::npos);
}

TEST(ContainerFailureTest, TheTasksOwnExitCodeIsNotExplained) {
  EXPECT_FALSE(ExplainEngineFailure(Failure("podman", 1, "Error: something in the task\n")).has_value());
  EXPECT_FALSE(NameWasTaken(Failure("podman", 1, "is already in use")));
  auto other = ExplainEngineFailure(Failure("podman", 125, "Error: crun: setrlimit `RLIMIT_NOFILE`: Operation not permitted\n"));
  ASSERT_TRUE(other.has_value());
  EXPECT_NE(other->message.find("podman could not run the container: Error: crun: setrlimit"), std::string::npos);
}

}  // namespace
}  // namespace primus::runtime
