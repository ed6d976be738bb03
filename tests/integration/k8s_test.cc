// Platform mode through the real binary. Two "pods" on loopback: agents
// started with exactly the environment a pod would have (a Kubeflow
// PyTorchJob's, a seed-style platform's, the pods of our own Indexed Job
// manifest) and no direct flags, each running
// `primus-cli direct -- run /usr/bin/python3 examples/ddp-smoke/train.py`;
// the 2-node gloo DDP job must come up and train. Then the other side:
// `config show --origin` naming the pod's variables, `k8s manifest` parsed
// back, `k8s submit` without kubectl. The DDP tests import torch in every
// worker (seconds each): label slow.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <vector>

#include "free_port.h"
#include "run_process.h"
#include "start_process.h"
#include "text.h"
#include "util/files.h"

namespace primus {
namespace {

using testing::FreePortPair;
using testing::ProcessOptions;
using testing::ProcessResult;
using testing::ReadOrEmpty;
using Env = std::map<std::string, std::string>;

const std::string kSource = PRIMUS_SOURCE_DIR;
const std::string kPython = "/usr/bin/python3";
const std::vector<std::string> kTask = {"run", kPython, "examples/ddp-smoke/train.py", "--steps", "30"};

class K8sTest : public ::testing::Test {
 protected:
  // What the kubelet and a typical image give every container, plus TMPDIR
  // so the agents' default log directories land in the test's directory.
  Env PodBase(const std::string& hostname) const {
    return {{"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
            {"HOME", dir_.path()},
            {"HOSTNAME", hostname},
            {"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
            {"KUBERNETES_SERVICE_PORT", "443"},
            {"KUBERNETES_PORT", "tcp://10.96.0.1:443"},
            {"TMPDIR", dir_.path()}};
  }
  ProcessOptions PodOptions(const Env& env) const {
    ProcessOptions options;
    options.cwd = kSource;
    options.clear_env = true;
    for (const auto& [key, value] : env) options.env[key] = value;
    options.timeout_s = 120;
    return options;
  }
  void RequireTorch() {
    if (testing::RunProcess({kPython, "-c", "import torch.distributed"}).exit_code != 0) {
      GTEST_SKIP() << kPython << " has no torch.distributed";
    }
  }
  // Starts one agent per pod with `command` (argv[0] is replaced by the
  // binary under test); returns each pod's stdout and expects exit 0.
  std::vector<std::string> RunPods(const std::vector<Env>& pods, std::vector<std::string> command) {
    command[0] = PRIMUS_BINARY;
    std::vector<pid_t> agents;
    for (size_t pod = 0; pod < pods.size(); ++pod) {
      std::string prefix = dir_.path() + "/pod" + std::to_string(pod);
      agents.push_back(testing::StartProcess(command, prefix + ".out", prefix + ".err", PodOptions(pods[pod])));
      EXPECT_GT(agents.back(), 0);
    }
    std::vector<std::string> outputs;
    for (size_t pod = 0; pod < pods.size(); ++pod) {
      std::string prefix = dir_.path() + "/pod" + std::to_string(pod);
      int code = testing::WaitForExit(agents[pod], 120);
      EXPECT_EQ(code, 0) << "pod " << pod << ":\n" << ReadOrEmpty(prefix + ".err");
      outputs.push_back(ReadOrEmpty(prefix + ".out") + ReadOrEmpty(prefix + ".err"));
    }
    return outputs;
  }
  static std::vector<std::string> DirectCommand() {
    std::vector<std::string> command = {"primus-cli", "direct", "--"};
    command.insert(command.end(), kTask.begin(), kTask.end());
    return command;
  }
  testing::TempDir dir_;
};

// rank 0's summary line: "done: <world> workers, ..., replicas in sync: True".
void ExpectTrained(const std::vector<std::string>& outputs, int world) {
  ASSERT_FALSE(outputs.empty());
  EXPECT_NE(outputs[0].find("done: " + std::to_string(world) + " workers"), std::string::npos) << outputs[0];
  EXPECT_NE(outputs[0].find("replicas in sync: True"), std::string::npos) << outputs[0];
}

// A PyTorchJob `bert` with 1 Master + 1 Worker, nprocPerNode "2": what the
// training-operator puts in each pod (MASTER_ADDR would be bert-master-0,
// which resolves to the Master pod; here the Master is this host).
Env PyTorchJobPod(const Env& base, int rank, int port) {
  Env env = base;
  std::string port_text = std::to_string(port);
  env.insert({{"PYTHONUNBUFFERED", "0"},
              {"MASTER_PORT", port_text},
              {"PET_MASTER_PORT", port_text},
              {"MASTER_ADDR", "127.0.0.1"},
              {"PET_MASTER_ADDR", "127.0.0.1"},
              {"WORLD_SIZE", "4"},  // processes: 2 pods x nprocPerNode 2
              {"RANK", std::to_string(rank)},
              {"PET_NPROC_PER_NODE", "2"},
              {"PET_NODE_RANK", std::to_string(rank)},
              {"PET_NNODES", "2"},
              {"PRIMUS_JOB_TOKEN", "5f0c1e9d2b7a4c3e8f6a1d0b9c2e7f41"}});
  return env;
}

// The seeds' platform: WORLD_SIZE = nodes, RANK = node index.
Env PlatformPod(const Env& base, int rank, int port) {
  Env env = base;
  env.insert({{"WORLD_SIZE", "2"},
              {"RANK", std::to_string(rank)},
              {"MASTER_ADDR", "127.0.0.1"},
              {"MASTER_PORT", std::to_string(port)}});
  return env;
}

TEST_F(K8sTest, PyTorchJobPodsTrainTogether) {
  RequireTorch();
  int port = FreePortPair();
  std::vector<Env> pods = {PyTorchJobPod(PodBase("bert-master-0"), 0, port),
                           PyTorchJobPod(PodBase("bert-worker-0"), 1, port)};
  ExpectTrained(RunPods(pods, DirectCommand()), 4);
}

TEST_F(K8sTest, SeedPlatformPodsTrainTogether) {
  RequireTorch();
  int port = FreePortPair();
  std::vector<Env> pods = {PlatformPod(PodBase("jo-dbxfe2k2l635222i-worker-0"), 0, port),
                           PlatformPod(PodBase("jo-dbxfe2k2l635222i-worker-1"), 1, port)};
  ExpectTrained(RunPods(pods, DirectCommand()), 2);  // auto: one worker per pod without GPUs
}

TEST_F(K8sTest, PodsOfOurIndexedJobManifestTrainTogether) {
  RequireTorch();
  int port = FreePortPair();
  std::vector<std::string> args = {"k8s", "manifest", "-N", "2", "--image", "rocm/primus:test", "--name", "ddp",
                                   "--master-port", std::to_string(port), "--"};
  args.insert(args.end(), kTask.begin(), kTask.end());
  ProcessResult manifest = testing::RunPrimus(args, PodOptions(PodBase("laptop")));
  ASSERT_EQ(manifest.exit_code, 0) << manifest.err;
  std::vector<YAML::Node> documents = YAML::LoadAll(manifest.out);
  ASSERT_EQ(documents.size(), 2u);
  YAML::Node container = documents[1]["spec"]["template"]["spec"]["containers"][0];
  std::vector<std::string> command;
  for (const YAML::Node& item : container["command"]) command.push_back(item.as<std::string>());

  // Each pod: the manifest's env, what Kubernetes adds to an Indexed Job's
  // pod, and the Secret's token. The cluster DNS would resolve ddp-0.ddp to
  // pod 0; here that is this host.
  std::vector<Env> pods;
  for (int index = 0; index < 2; ++index) {
    Env env = PodBase("ddp-" + std::to_string(index));
    for (const YAML::Node& entry : container["env"]) {
      if (entry["value"]) env[entry["name"].as<std::string>()] = entry["value"].as<std::string>();
    }
    EXPECT_EQ(env["PRIMUS_DIRECT_MASTER_ADDR"], "ddp-0.ddp");
    env["PRIMUS_DIRECT_MASTER_ADDR"] = "127.0.0.1";
    env["JOB_COMPLETION_INDEX"] = std::to_string(index);
    env["PRIMUS_JOB_TOKEN"] = "0b9d3f6e1a2c4e8f7d5b3a1c9e0f2d4b";
    pods.push_back(env);
  }
  ExpectTrained(RunPods(pods, command), 2);
}

TEST_F(K8sTest, ConfigShowOriginNamesThePodsVariables) {
  ProcessResult platform =
      testing::RunPrimus({"config", "show", "--origin"}, PodOptions(PlatformPod(PodBase("w-1"), 1, 29500)));
  ASSERT_EQ(platform.exit_code, 0) << platform.err;
  for (const char* fragment : {"nnodes: 2", "# platform WORLD_SIZE", "node_rank: 1", "# platform RANK",
                               "master_addr: \"127.0.0.1\"", "# platform MASTER_ADDR", "# platform MASTER_PORT"}) {
    EXPECT_NE(platform.out.find(fragment), std::string::npos) << fragment << "\n" << platform.out;
  }

  Env pytorchjob = PyTorchJobPod(PodBase("bert-worker-0"), 1, 23456);
  pytorchjob.erase("PET_MASTER_ADDR");  // an operator before v1.8
  ProcessResult dry_run = testing::RunPrimus({"--dry-run", "direct", "--", "run", "/bin/true"}, PodOptions(pytorchjob));
  ASSERT_EQ(dry_run.exit_code, 0) << dry_run.err;
  for (const char* fragment : {"env PET_NNODES", "env PET_NODE_RANK", "pytorchjob MASTER_ADDR", "env PET_MASTER_PORT"}) {
    EXPECT_NE(dry_run.out.find(fragment), std::string::npos) << fragment << "\n" << dry_run.out;
  }

  // --platform none ignores the pod; a named convention that is absent is exit 4.
  ProcessResult none = testing::RunPrimus({"--set", "direct.platform=none", "config", "show", "--origin"},
                                          PodOptions(PlatformPod(PodBase("w-1"), 1, 29500)));
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.out.find("nnodes: 1"), std::string::npos) << none.out;
  ProcessResult absent = testing::RunPrimus({"--dry-run", "direct", "--platform", "jobset", "--", "run", "/bin/true"},
                                            PodOptions(PodBase("w-1")));
  EXPECT_EQ(absent.exit_code, 4) << absent.all();
  EXPECT_NE(absent.err.find("JOB_COMPLETION_INDEX is not set"), std::string::npos) << absent.err;
  // A contradiction names both variables.
  Env contradiction = PlatformPod(PodBase("w-1"), 1, 29500);
  contradiction["RANK"] = "2";
  ProcessResult bad = testing::RunPrimus({"config", "show"}, PodOptions(contradiction));
  EXPECT_EQ(bad.exit_code, 4) << bad.all();
  EXPECT_NE(bad.err.find("RANK=2 is not below WORLD_SIZE=2"), std::string::npos) << bad.err;
}

TEST_F(K8sTest, ManifestThroughTheBinary) {
  std::string file = dir_.path() + "/job.yaml";
  ProcessResult written = testing::RunPrimus(
      {"k8s", "manifest", "-N", "3", "--gpus-per-node", "8", "--image", "rocm/primus:v25.9", "--vendor", "nvidia",
       "--host-network", "--namespace", "ml", "--name", "gpt", "-o", file, "--", "direct", "--max-restarts", "2", "--",
       "train", "pretrain", "--config", "my exp.yaml", "--note", "say \"hi\""},
      PodOptions(PodBase("laptop")));
  ASSERT_EQ(written.exit_code, 0) << written.err;
  auto text = ReadFile(file);
  ASSERT_TRUE(text.ok());
  std::vector<YAML::Node> documents = YAML::LoadAll(*text);
  ASSERT_EQ(documents.size(), 2u);
  const YAML::Node& pod = documents[1]["spec"]["template"]["spec"];
  EXPECT_TRUE(pod["hostNetwork"].as<bool>());
  EXPECT_EQ(pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as<int>(), 8);
  std::vector<std::string> command;
  for (const YAML::Node& item : pod["containers"][0]["command"]) command.push_back(item.as<std::string>());
  EXPECT_EQ(command, (std::vector<std::string>{"primus-cli", "direct", "--max-restarts", "2", "--", "train", "pretrain",
                                               "--config", "my exp.yaml", "--note", "say \"hi\""}));

  // --dry-run writes nothing; the PyTorchJob variant; vendor auto on a GPU host.
  std::string not_written = dir_.path() + "/dry.yaml";
  ProcessResult dry = testing::RunPrimus({"--dry-run", "k8s", "manifest", "-N", "2", "--image", "i", "--kind",
                                          "pytorchjob", "-o", not_written, "--", "run", "/bin/true"},
                                         PodOptions(PodBase("laptop")));
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_FALSE(PathExists(not_written));
  EXPECT_NE(dry.out.find("kind: PyTorchJob"), std::string::npos) << dry.out;

  Env h100 = PodBase("laptop");
  h100["PRIMUS_SYSFS_ROOT"] = kSource + "/tests/fixtures/hosts/h100-8/sys";
  h100["PRIMUS_PROCFS_ROOT"] = kSource + "/tests/fixtures/hosts/h100-8/proc";
  ProcessResult detected = testing::RunPrimus(
      {"k8s", "manifest", "-N", "2", "--gpus-per-node", "8", "--image", "i", "--", "run", "/bin/true"}, PodOptions(h100));
  ASSERT_EQ(detected.exit_code, 0) << detected.err;
  EXPECT_NE(detected.out.find("nvidia.com/gpu: 8"), std::string::npos) << detected.out;

  ProcessResult missing = testing::RunPrimus({"k8s", "manifest", "--image", "i", "--", "run", "/bin/true"},
                                             PodOptions(PodBase("laptop")));
  EXPECT_EQ(missing.exit_code, 2) << missing.all();
  EXPECT_NE(missing.err.find("give -N NODES"), std::string::npos) << missing.err;

  ProcessResult no_rank = testing::RunPrimus(
      {"k8s", "manifest", "-N", "2", "--image", "i", "--platform", "none", "--", "run", "/bin/true"},
      PodOptions(PodBase("laptop")));
  EXPECT_EQ(no_rank.exit_code, 3) << no_rank.all();
  EXPECT_NE(no_rank.err.find("flag --platform: k8s.platform 'none'"), std::string::npos) << no_rank.err;
}

TEST_F(K8sTest, SubmitWithoutKubectlSaysSoAndHowToGoOn) {
  // A PATH with no kubectl on it (the binary is started by its full path).
  Env env = PodBase("laptop");
  env["PATH"] = dir_.path() + "/empty-bin";
  ASSERT_TRUE(MakeDirs(dir_.path() + "/empty-bin").ok());
  std::vector<std::string> args = {"k8s", "submit", "-N", "2", "--image", "i", "--name", "gpt", "--", "run", "/bin/true"};
  ProcessResult result = testing::RunPrimus(args, PodOptions(env));
  EXPECT_EQ(result.exit_code, 4) << result.all();
  EXPECT_NE(result.err.find("k8s submit needs kubectl, and kubectl was not found on PATH"), std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("primus-cli k8s manifest ... -o job.yaml"), std::string::npos) << result.err;

  // --dry-run prints the manifest and the kubectl commands and runs nothing.
  args.insert(args.begin(), "--dry-run");
  ProcessResult dry = testing::RunPrimus(args, PodOptions(env));
  EXPECT_EQ(dry.exit_code, 0) << dry.all();
  EXPECT_NE(dry.out.find("kind: Job"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("#   kubectl apply -n default -f -   # stdin: Secret gpt-token"), std::string::npos) << dry.out;
}

TEST_F(K8sTest, SubmitWithKubectlButNoCluster) {
  std::string kubectl = FindExecutable("kubectl");
  if (kubectl.empty()) GTEST_SKIP() << "kubectl is not installed";
  dir_.Write("kubeconfig",
             "apiVersion: v1\nkind: Config\nclusters:\n- name: none\n  cluster:\n    server: https://127.0.0.1:1\n"
             "contexts:\n- name: none\n  context:\n    cluster: none\ncurrent-context: none\n");
  Env env = PodBase("laptop");
  env["KUBECONFIG"] = dir_.path() + "/kubeconfig";
  ProcessResult result = testing::RunPrimus(
      {"k8s", "submit", "-N", "2", "--image", "i", "--", "run", "/bin/true"}, PodOptions(env));
  EXPECT_EQ(result.exit_code, 4) << result.all();
  EXPECT_NE(result.err.find("no Kubernetes cluster is reachable"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace primus
