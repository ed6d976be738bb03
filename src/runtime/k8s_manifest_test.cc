// Manifests rendered, parsed back with yaml-cpp, and checked field by field:
// the Indexed Job and its headless Service, the PyTorchJob variant, both GPU
// vendors, host network, the token only by reference, and task arguments
// with spaces and quotes arriving intact.
#include "runtime/k8s_manifest.h"
#include "runtime/k8s_yaml.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <regex>
#include <set>

namespace primus::runtime {
namespace {

const std::vector<std::string> kTaskArgs = {"/usr/bin/python3", "-c", "print('a b', \"c\")", "--lr", "1e-3",
                                            "--steps", "8", "yes", ""};

K8sJob TwoPodJob() {
  K8sJob job;
  job.name = "gpt-a1b2c";
  job.namespace_name = "ml";
  job.image = "rocm/primus:v25.9";
  job.nodes = 2;
  job.gpus_per_node = 8;
  job.vendor = "amd";
  job.command = PodCommand("primus-cli", {}, "run", kTaskArgs);
  return job;
}

std::vector<YAML::Node> Parse(const K8sJob& job) {
  std::string text = RenderManifest(job);
  std::vector<YAML::Node> documents = YAML::LoadAll(text);
  return documents;
}

std::vector<std::string> Strings(const YAML::Node& sequence) {
  std::vector<std::string> items;
  for (const YAML::Node& item : sequence) items.push_back(item.as<std::string>());
  return items;
}

// env: name -> the entry.
std::map<std::string, YAML::Node> Env(const YAML::Node& container) {
  std::map<std::string, YAML::Node> env;
  for (const YAML::Node& entry : container["env"]) env[entry["name"].as<std::string>()] = entry;
  return env;
}

std::string Value(const std::map<std::string, YAML::Node>& env, const std::string& name) {
  auto it = env.find(name);
  if (it == env.end()) return "(unset)";
  // Values must be strings for the API server, whatever they look like.
  EXPECT_EQ(it->second["value"].Tag(), IsPlainSafe(it->second["value"].as<std::string>()) ? "?" : "!") << name;
  return it->second["value"].as<std::string>();
}

TEST(K8sManifestTest, PodCommandRunsDirectWithTheTask) {
  EXPECT_EQ(PodCommand("/opt/primus/bin/primus-cli", {"--nproc-per-node", "2"}, "train", {"pretrain", "--config", "a b.yaml"}),
            (std::vector<std::string>{"/opt/primus/bin/primus-cli", "direct", "--nproc-per-node", "2", "--", "train",
                                      "pretrain", "--config", "a b.yaml"}));
}

TEST(K8sManifestTest, IndexedJobWithHeadlessService) {
  K8sJob job = TwoPodJob();
  ASSERT_TRUE(ValidateJob(job).ok()) << ValidateJob(job).error().message;
  std::vector<YAML::Node> documents = Parse(job);
  ASSERT_EQ(documents.size(), 2u);

  const YAML::Node& service = documents[0];
  EXPECT_EQ(service["apiVersion"].as<std::string>(), "v1");
  EXPECT_EQ(service["kind"].as<std::string>(), "Service");
  EXPECT_EQ(service["metadata"]["name"].as<std::string>(), "gpt-a1b2c");
  EXPECT_EQ(service["metadata"]["namespace"].as<std::string>(), "ml");
  EXPECT_EQ(service["spec"]["clusterIP"].as<std::string>(), "None");
  EXPECT_TRUE(service["spec"]["publishNotReadyAddresses"].as<bool>());
  EXPECT_EQ(service["spec"]["selector"]["primus-cli/job"].as<std::string>(), "gpt-a1b2c");
  EXPECT_EQ(service["spec"]["ports"][0]["port"].as<int>(), 29500);
  EXPECT_EQ(service["spec"]["ports"][1]["port"].as<int>(), 29501);

  const YAML::Node& job_doc = documents[1];
  EXPECT_EQ(job_doc["apiVersion"].as<std::string>(), "batch/v1");
  EXPECT_EQ(job_doc["kind"].as<std::string>(), "Job");
  EXPECT_EQ(job_doc["metadata"]["name"].as<std::string>(), "gpt-a1b2c");
  EXPECT_EQ(job_doc["metadata"]["namespace"].as<std::string>(), "ml");
  const YAML::Node& spec = job_doc["spec"];
  EXPECT_EQ(spec["completionMode"].as<std::string>(), "Indexed");
  EXPECT_EQ(spec["completions"].as<int>(), 2);
  EXPECT_EQ(spec["parallelism"].as<int>(), 2);
  EXPECT_EQ(spec["backoffLimit"].as<int>(), 0);
  // The Service selects exactly the Job's pods, and they live in its subdomain.
  EXPECT_EQ(spec["template"]["metadata"]["labels"]["primus-cli/job"].as<std::string>(), "gpt-a1b2c");
  const YAML::Node& pod = spec["template"]["spec"];
  EXPECT_EQ(pod["subdomain"].as<std::string>(), service["metadata"]["name"].as<std::string>());
  EXPECT_EQ(pod["restartPolicy"].as<std::string>(), "Never");
  EXPECT_FALSE(pod["hostNetwork"]);
  EXPECT_FALSE(pod["serviceAccountName"]);
  ASSERT_EQ(pod["containers"].size(), 1u);
  const YAML::Node& container = pod["containers"][0];
  EXPECT_EQ(container["image"].as<std::string>(), "rocm/primus:v25.9");
  std::vector<std::string> expected = {"primus-cli", "direct", "--", "run"};
  expected.insert(expected.end(), kTaskArgs.begin(), kTaskArgs.end());
  EXPECT_EQ(Strings(container["command"]), expected);
  EXPECT_FALSE(container["args"]);

  std::map<std::string, YAML::Node> env = Env(container);
  EXPECT_EQ(Value(env, "PRIMUS_DIRECT_PLATFORM"), "jobset");
  EXPECT_EQ(Value(env, "PRIMUS_DIRECT_NNODES"), "2");
  EXPECT_EQ(Value(env, "PRIMUS_DIRECT_MASTER_ADDR"), "gpt-a1b2c-0.gpt-a1b2c");
  EXPECT_EQ(Value(env, "PRIMUS_DIRECT_MASTER_PORT"), "29500");
  const YAML::Node& token = env["PRIMUS_JOB_TOKEN"];
  EXPECT_FALSE(token["value"]);
  EXPECT_EQ(token["valueFrom"]["secretKeyRef"]["name"].as<std::string>(), "gpt-a1b2c-token");
  EXPECT_EQ(token["valueFrom"]["secretKeyRef"]["key"].as<std::string>(), "token");

  EXPECT_EQ(container["resources"]["limits"]["amd.com/gpu"].as<int>(), 8);
  EXPECT_EQ(container["resources"]["limits"].size(), 1u);
  EXPECT_EQ(container["ports"][0]["containerPort"].as<int>(), 29500);
  EXPECT_EQ(container["ports"][1]["containerPort"].as<int>(), 29501);
  EXPECT_EQ(container["volumeMounts"][0]["name"].as<std::string>(), "dshm");
  EXPECT_EQ(container["volumeMounts"][0]["mountPath"].as<std::string>(), "/dev/shm");
  EXPECT_EQ(pod["volumes"][0]["name"].as<std::string>(), "dshm");
  EXPECT_EQ(pod["volumes"][0]["emptyDir"]["medium"].as<std::string>(), "Memory");
  EXPECT_FALSE(pod["volumes"][0]["emptyDir"]["sizeLimit"]);
}

TEST(K8sManifestTest, NvidiaHostNetworkServiceAccountAndShmLimit) {
  K8sJob job = TwoPodJob();
  job.vendor = "nvidia";
  job.gpus_per_node = 4;
  job.host_network = true;
  job.service_account = "trainer";
  job.shm_size = "64Gi";
  job.backoff_limit = 2;
  job.master_port = 23456;
  std::vector<YAML::Node> documents = Parse(job);
  ASSERT_EQ(documents.size(), 2u);
  const YAML::Node& pod = documents[1]["spec"]["template"]["spec"];
  EXPECT_TRUE(pod["hostNetwork"].as<bool>());
  EXPECT_EQ(pod["dnsPolicy"].as<std::string>(), "ClusterFirstWithHostNet");
  EXPECT_EQ(pod["serviceAccountName"].as<std::string>(), "trainer");
  EXPECT_EQ(pod["volumes"][0]["emptyDir"]["sizeLimit"].as<std::string>(), "64Gi");
  EXPECT_EQ(documents[1]["spec"]["backoffLimit"].as<int>(), 2);
  const YAML::Node& container = pod["containers"][0];
  EXPECT_EQ(container["resources"]["limits"]["nvidia.com/gpu"].as<int>(), 4);
  EXPECT_FALSE(container["resources"]["limits"]["amd.com/gpu"]);
  EXPECT_EQ(Value(Env(container), "PRIMUS_DIRECT_MASTER_PORT"), "23456");
  EXPECT_EQ(container["ports"][1]["containerPort"].as<int>(), 23457);
}

TEST(K8sManifestTest, CpuPodsRequestNoGpus) {
  K8sJob job = TwoPodJob();
  job.gpus_per_node = 0;
  std::vector<YAML::Node> documents = Parse(job);
  EXPECT_FALSE(documents[1]["spec"]["template"]["spec"]["containers"][0]["resources"]);
}

TEST(K8sManifestTest, PyTorchJobWithMasterAndWorkers) {
  for (const char* vendor : {"amd", "nvidia"}) {
    SCOPED_TRACE(vendor);
    K8sJob job = TwoPodJob();
    job.kind = "pytorchjob";
    job.vendor = vendor;
    job.nodes = 4;
    job.master_port = 23456;
    ASSERT_TRUE(ValidateJob(job).ok());
    std::vector<YAML::Node> documents = Parse(job);
    ASSERT_EQ(documents.size(), 1u);  // the operator makes the Services
    const YAML::Node& pytorchjob = documents[0];
    EXPECT_EQ(pytorchjob["apiVersion"].as<std::string>(), "kubeflow.org/v1");
    EXPECT_EQ(pytorchjob["kind"].as<std::string>(), "PyTorchJob");
    EXPECT_EQ(pytorchjob["metadata"]["name"].as<std::string>(), "gpt-a1b2c");
    EXPECT_EQ(pytorchjob["spec"]["nprocPerNode"].Tag(), "!");  // a string in the CRD
    EXPECT_EQ(pytorchjob["spec"]["nprocPerNode"].as<std::string>(), "8");
    EXPECT_EQ(pytorchjob["spec"]["runPolicy"]["backoffLimit"].as<int>(), 0);
    const YAML::Node& replicas = pytorchjob["spec"]["pytorchReplicaSpecs"];
    EXPECT_EQ(replicas["Master"]["replicas"].as<int>(), 1);
    EXPECT_EQ(replicas["Worker"]["replicas"].as<int>(), 3);
    for (const char* role : {"Master", "Worker"}) {
      SCOPED_TRACE(role);
      EXPECT_EQ(replicas[role]["restartPolicy"].as<std::string>(), "Never");
      const YAML::Node& pod = replicas[role]["template"]["spec"];
      EXPECT_FALSE(pod["subdomain"]);
      const YAML::Node& container = pod["containers"][0];
      // The operator reads MASTER_PORT from this container and port name.
      EXPECT_EQ(container["name"].as<std::string>(), "pytorch");
      EXPECT_EQ(container["ports"][0]["name"].as<std::string>(), "pytorchjob-port");
      EXPECT_EQ(container["ports"][0]["containerPort"].as<int>(), 23456);
      EXPECT_EQ(container["resources"]["limits"][GpuResourceName(vendor)].as<int>(), 8);
      std::map<std::string, YAML::Node> env = Env(container);
      EXPECT_EQ(Value(env, "PRIMUS_DIRECT_PLATFORM"), "pytorchjob");
      EXPECT_EQ(env.count("PRIMUS_DIRECT_NNODES"), 0u);  // the operator's PET_NNODES says it
      EXPECT_EQ(env["PRIMUS_JOB_TOKEN"]["valueFrom"]["secretKeyRef"]["name"].as<std::string>(), "gpt-a1b2c-token");
      EXPECT_EQ(container["volumeMounts"][0]["mountPath"].as<std::string>(), "/dev/shm");
      EXPECT_EQ(pod["volumes"][0]["emptyDir"]["medium"].as<std::string>(), "Memory");
    }
  }
  K8sJob single = TwoPodJob();
  single.kind = "pytorchjob";
  single.nodes = 1;
  single.gpus_per_node = 0;
  std::vector<YAML::Node> documents = Parse(single);
  EXPECT_FALSE(documents[0]["spec"]["pytorchReplicaSpecs"]["Worker"]);
  EXPECT_EQ(documents[0]["spec"]["nprocPerNode"].as<std::string>(), "auto");
  EXPECT_EQ(MasterAddress(single), "gpt-a1b2c-master-0");
}

TEST(K8sManifestTest, PlatformOverrideReachesThePods) {
  K8sJob job = TwoPodJob();
  job.platform = "platform";
  EXPECT_EQ(Value(Env(Parse(job)[1]["spec"]["template"]["spec"]["containers"][0]), "PRIMUS_DIRECT_PLATFORM"), "platform");
}

TEST(K8sManifestTest, TheTokenIsOnlyInTheSecret) {
  K8sJob job = TwoPodJob();
  std::string text = RenderManifest(job);
  EXPECT_EQ(text.find("stringData"), std::string::npos);
  EXPECT_EQ(text.find("kind: Secret"), std::string::npos);
  YAML::Node secret = YAML::Load(ToYaml(TokenSecret(job, "0123456789abcdef0123456789abcdef")));
  EXPECT_EQ(secret["kind"].as<std::string>(), "Secret");
  EXPECT_EQ(secret["metadata"]["name"].as<std::string>(), "gpt-a1b2c-token");
  EXPECT_EQ(secret["metadata"]["namespace"].as<std::string>(), "ml");
  EXPECT_EQ(secret["metadata"]["labels"]["primus-cli/job"].as<std::string>(), "gpt-a1b2c");
  EXPECT_EQ(secret["stringData"]["token"].as<std::string>(), "0123456789abcdef0123456789abcdef");
}

TEST(K8sManifestTest, HeaderSaysHowToCreateTheSecret) {
  std::string text = RenderManifest(TwoPodJob(), "vendor auto: amd assumed");
  EXPECT_TRUE(text.starts_with("# Written by primus-cli k8s manifest: Indexed Job \"gpt-a1b2c\" (2 pods)")) << text;
  EXPECT_NE(text.find("kubectl create secret generic gpt-a1b2c-token -n ml --from-file=token=/dev/stdin"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("GPUs: 8 x amd.com/gpu per pod (vendor auto: amd assumed)"), std::string::npos) << text;
  EXPECT_NE(text.find("# Each pod runs: primus-cli direct -- run /usr/bin/python3 -c "), std::string::npos) << text;
}

TEST(K8sManifestTest, ValidationNamesTheProblem) {
  auto error_of = [](K8sJob job) { Status status = ValidateJob(job); return status.ok() ? std::string("ok") : status.error().message + " | " + status.error().hint; };
  K8sJob job = TwoPodJob();
  job.nodes = 0;
  EXPECT_NE(error_of(job).find("number of pods is missing"), std::string::npos);
  job = TwoPodJob();
  job.image = "";
  EXPECT_NE(error_of(job).find("no image"), std::string::npos);
  job = TwoPodJob();
  job.kind = "deployment";
  EXPECT_NE(error_of(job).find("kind 'deployment'"), std::string::npos);
  job = TwoPodJob();
  job.vendor = "intel";
  EXPECT_NE(error_of(job).find("vendor 'intel'"), std::string::npos);
  job = TwoPodJob();
  job.name = "GPT_run";
  EXPECT_NE(error_of(job).find("job name 'GPT_run'"), std::string::npos);
  job = TwoPodJob();
  job.name = std::string(62, 'a');
  EXPECT_NE(error_of(job).find("cannot name the job's pods"), std::string::npos);
  job.name = std::string(61, 'a');
  EXPECT_EQ(error_of(job), "ok");
  job.kind = "pytorchjob";  // <name>-worker-1 is longer
  EXPECT_NE(error_of(job).find("at most 54 characters"), std::string::npos) << error_of(job);
  job = TwoPodJob();
  job.master_port = 65535;
  EXPECT_NE(error_of(job).find("master port 65535"), std::string::npos);
  job = TwoPodJob();
  job.command = PodCommand("primus-cli", {}, "run", {"/bin/echo", "\xff\xfe"});
  EXPECT_NE(error_of(job).find("argument $'\\xff\\xfe' is not valid UTF-8"), std::string::npos) << error_of(job);
}

// Every awkward argument reaches the pod's args exactly (read back by a YAML
// parser), and nothing else appears in the documents: a line break or CR in
// an argument adds no key, no object, no comment end.
TEST(K8sManifestTest, ArgumentsWithControlCharactersReachThePodExactly) {
  const std::vector<std::string> args = {"/bin/echo", "x\necho INJECTED #", "cr\rkind: Secret", "esc\x1b[2J",
                                         "import sys\nprint(1)", "$(id)", "`id`", "it's \"q\"", "", "del\x7f"};
  K8sJob job = TwoPodJob();
  job.command = PodCommand("primus-cli", {}, "run", args);
  ASSERT_TRUE(ValidateJob(job).ok());
  std::vector<YAML::Node> documents = Parse(job);
  ASSERT_EQ(documents.size(), 2u);
  YAML::Node container = documents[1]["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(Strings(container["command"]), job.command);
}

TEST(K8sManifestTest, DefaultNamesAreFreshAndValid) {
  std::set<std::string> names;
  for (int i = 0; i < 20; ++i) {
    std::string name = DefaultJobName("train");
    EXPECT_TRUE(std::regex_match(name, std::regex("primus-train-[a-z0-9]{5}"))) << name;
    names.insert(name);
  }
  EXPECT_GT(names.size(), 15u);
}

}  // namespace
}  // namespace primus::runtime
