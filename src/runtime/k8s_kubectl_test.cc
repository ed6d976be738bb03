// CheckCluster and Apply against real programs: a kubectl that is not
// installed, a command that fails the way an unreachable cluster makes
// kubectl fail, and (when kubectl is installed) the real kubectl pointed at
// a cluster that is not there. There is no cluster on a build machine, so
// the success path is exercised by hand (docs/k8s.md).
#include "runtime/k8s_kubectl.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::runtime {
namespace {

TEST(K8sKubectlTest, TheCommandsAsTheyAreRun) {
  Kubectl kubectl;
  EXPECT_EQ(ClusterCheckCommand(kubectl), (std::vector<std::string>{"kubectl", "version", "--request-timeout=5s"}));
  EXPECT_EQ(ApplyCommand(kubectl, "ml"), (std::vector<std::string>{"kubectl", "apply", "-n", "ml", "-f", "-"}));
}

TEST(K8sKubectlTest, MissingKubectlIsUnavailable) {
  Kubectl kubectl;
  kubectl.program = "kubectl-that-is-not-installed";
  Status status = CheckCluster(kubectl);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ExitCode::kUnavailable);
  EXPECT_NE(status.error().message.find("kubectl-that-is-not-installed was not found on PATH"), std::string::npos)
      << status.error().message;
  EXPECT_NE(status.error().hint.find("primus-cli k8s manifest"), std::string::npos) << status.error().hint;
}

TEST(K8sKubectlTest, AFailingCheckSaysNoClusterIsReachable) {
  Kubectl kubectl;
  kubectl.program = "/bin/false";
  Status status = CheckCluster(kubectl);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ExitCode::kUnavailable);
  EXPECT_NE(status.error().message.find("no Kubernetes cluster is reachable: `/bin/false version "
                                        "--request-timeout=5s` exited with 1"),
            std::string::npos)
      << status.error().message;
}

TEST(K8sKubectlTest, ApplyPassesTheDocumentsOnStdinNotOnTheCommandLine) {
  // A stand-in that records what kubectl would receive: its arguments and stdin.
  ScopedTempDir dir;
  std::string recorder = dir.path() + "/record";
  ASSERT_TRUE(WriteFileAtomic(recorder, "#!/bin/sh\necho \"$@\" > \"$0.args\"\ncat > \"$0.stdin\"\n", 0755).ok());
  Kubectl kubectl;
  kubectl.program = recorder;
  ASSERT_TRUE(Apply(kubectl, "ml", "kind: Secret\nstringData:\n  token: abc\n", "the token Secret").ok());
  EXPECT_EQ(*ReadFile(recorder + ".args"), "apply -n ml -f -\n");
  EXPECT_EQ(*ReadFile(recorder + ".stdin"), "kind: Secret\nstringData:\n  token: abc\n");

  kubectl.program = "/bin/false";
  Status failed = Apply(kubectl, "ml", "kind: Secret\n", "the token Secret x-token");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ExitCode::kUnavailable);
  EXPECT_NE(failed.error().message.find("could not apply the token Secret x-token"), std::string::npos)
      << failed.error().message;
}

TEST(K8sKubectlTest, RealKubectlWithoutACluster) {
  if (FindExecutable("kubectl").empty()) GTEST_SKIP() << "kubectl is not installed";
  ScopedTempDir dir;
  std::string config = dir.path() + "/kubeconfig";
  ASSERT_TRUE(WriteFileAtomic(config,
                              "apiVersion: v1\nkind: Config\nclusters:\n- name: none\n  cluster:\n"
                              "    server: https://127.0.0.1:1\ncontexts:\n- name: none\n  context:\n"
                              "    cluster: none\ncurrent-context: none\n")
                  .ok());
  setenv("KUBECONFIG", config.c_str(), 1);
  Status status = CheckCluster(Kubectl{});
  unsetenv("KUBECONFIG");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ExitCode::kUnavailable);
  EXPECT_NE(status.error().message.find("no Kubernetes cluster is reachable"), std::string::npos) << status.error().message;
}

}  // namespace
}  // namespace primus::runtime
