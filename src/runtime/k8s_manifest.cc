#include "runtime/k8s_manifest.h"

#include <sys/random.h>

#include <cctype>

#include "runtime/k8s_yaml.h"
#include "util/strings.h"

namespace primus::runtime {
namespace {

using Json = nlohmann::ordered_json;

const char* const kLabelName = "app.kubernetes.io/name";
const char* const kLabelJob = "primus-cli/job";  // selects the job's pods (Service) and all its objects

Json Labels(const K8sJob& job) { return Json{{kLabelName, "primus-cli"}, {kLabelJob, job.name}}; }

Json Metadata(const K8sJob& job, const std::string& name) {
  return Json{{"name", name}, {"namespace", job.namespace_name}, {"labels", Labels(job)}};
}

// RFC 1035 label: what Service names (and pod host names) must be.
bool IsDnsLabel(const std::string& name) {
  if (name.empty() || name.size() > 63 || !std::islower(static_cast<unsigned char>(name.front()))) return false;
  if (name.back() == '-') return false;
  for (char c : name) {
    if (!std::islower(static_cast<unsigned char>(c)) && !std::isdigit(static_cast<unsigned char>(c)) && c != '-') {
      return false;
    }
  }
  return true;
}

// The longest pod host name suffix after the job's name.
std::string LongestPodSuffix(const K8sJob& job) {
  std::string index = std::to_string(job.nodes > 0 ? job.nodes - 1 : 0);
  return job.kind == "pytorchjob" ? "-worker-" + index : "-" + index;
}

Json EnvValue(const std::string& name, const std::string& value) { return Json{{"name", name}, {"value", value}}; }

Json TokenVariable(const K8sJob& job) {
  return Json{{"name", "PRIMUS_JOB_TOKEN"},
              {"valueFrom", {{"secretKeyRef", {{"name", TokenSecretName(job)}, {"key", kTokenKey}}}}}};
}

// The one container of every pod.
Json Container(const K8sJob& job) {
  bool pytorchjob = job.kind == "pytorchjob";
  Json env = Json::array();
  env.push_back(EnvValue("PRIMUS_DIRECT_PLATFORM", PodPlatform(job)));
  if (!pytorchjob) {
    // The operator of a PyTorchJob sets these itself (PET_*, MASTER_*).
    env.push_back(EnvValue("PRIMUS_DIRECT_NNODES", std::to_string(job.nodes)));
    env.push_back(EnvValue("PRIMUS_DIRECT_MASTER_ADDR", MasterAddress(job)));
    env.push_back(EnvValue("PRIMUS_DIRECT_MASTER_PORT", std::to_string(job.master_port)));
  }
  env.push_back(TokenVariable(job));

  Json container = {
      // The training-operator finds MASTER_PORT on the container named
      // "pytorch", in its port named "pytorchjob-port".
      {"name", pytorchjob ? "pytorch" : "primus"},
      {"image", job.image},
      {"command", job.command},
      {"env", env},
      {"ports",
       Json::array({Json{{"name", pytorchjob ? "pytorchjob-port" : "rendezvous"}, {"containerPort", job.master_port}},
                    Json{{"name", "control"}, {"containerPort", job.master_port + 1}}})},
  };
  if (job.metrics_port > 0) {
    container["ports"].push_back(Json{{"name", "metrics"}, {"containerPort", job.metrics_port}});
  }
  if (job.gpus_per_node > 0) {
    container["resources"] = Json{{"limits", {{GpuResourceName(job.vendor), job.gpus_per_node}}}};
  }
  container["volumeMounts"] = Json::array({Json{{"name", "dshm"}, {"mountPath", "/dev/shm"}}});
  return container;
}

Json PodSpec(const K8sJob& job) {
  Json spec = Json::object();
  if (job.kind == "job") spec["subdomain"] = job.name;  // <name>-<index>.<name> resolves through the Service
  spec["restartPolicy"] = "Never";                      // restarts are the agents' (direct.max_restarts)
  if (!job.service_account.empty()) spec["serviceAccountName"] = job.service_account;
  if (job.host_network) {
    spec["hostNetwork"] = true;
    spec["dnsPolicy"] = "ClusterFirstWithHostNet";  // keeps cluster DNS names resolvable
  }
  spec["containers"] = Json::array({Container(job)});
  Json shm = {{"medium", "Memory"}};
  if (!job.shm_size.empty()) shm["sizeLimit"] = job.shm_size;
  spec["volumes"] = Json::array({Json{{"name", "dshm"}, {"emptyDir", shm}}});
  return spec;
}

Json PodTemplate(const K8sJob& job) {
  Json metadata = {{"labels", Labels(job)}};
  if (job.metrics_port > 0) {
    // The annotations most Prometheus setups discover scrape targets by.
    metadata["annotations"] = {{"prometheus.io/scrape", "true"},
                               {"prometheus.io/port", std::to_string(job.metrics_port)},
                               {"prometheus.io/path", "/metrics"}};
  }
  return Json{{"metadata", metadata}, {"spec", PodSpec(job)}};
}

Json HeadlessService(const K8sJob& job) {
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", Metadata(job, job.name)},
      {"spec",
       {{"clusterIP", "None"},
        {"publishNotReadyAddresses", true},  // names resolve while pods start, before they are Ready
        {"selector", {{kLabelJob, job.name}}},
        {"ports", Json::array({Json{{"name", "rendezvous"}, {"port", job.master_port}},
                               Json{{"name", "control"}, {"port", job.master_port + 1}}})}}},
  };
}

Json IndexedJob(const K8sJob& job) {
  return Json{
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", Metadata(job, job.name)},
      {"spec",
       {{"completionMode", "Indexed"},
        {"completions", job.nodes},
        {"parallelism", job.nodes},
        {"backoffLimit", job.backoff_limit},
        {"template", PodTemplate(job)}}},
  };
}

Json PyTorchJob(const K8sJob& job) {
  Json replicas = {{"Master", {{"replicas", 1}, {"restartPolicy", "Never"}, {"template", PodTemplate(job)}}}};
  if (job.nodes > 1) {
    replicas["Worker"] = {{"replicas", job.nodes - 1}, {"restartPolicy", "Never"}, {"template", PodTemplate(job)}};
  }
  return Json{
      {"apiVersion", "kubeflow.org/v1"},
      {"kind", "PyTorchJob"},
      {"metadata", Metadata(job, job.name)},
      {"spec",
       {{"nprocPerNode", job.gpus_per_node > 0 ? std::to_string(job.gpus_per_node) : "auto"},
        {"runPolicy", {{"backoffLimit", job.backoff_limit}}},
        {"pytorchReplicaSpecs", replicas}}},
  };
}

}  // namespace

std::vector<std::string> PodCommand(const std::string& binary, const std::vector<std::string>& direct_options,
                                    const std::string& task, const std::vector<std::string>& task_args) {
  std::vector<std::string> command = {binary, "direct"};
  command.insert(command.end(), direct_options.begin(), direct_options.end());
  command.push_back("--");
  command.push_back(task);
  command.insert(command.end(), task_args.begin(), task_args.end());
  return command;
}

std::string DefaultJobName(const std::string& task) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  unsigned char random[5] = {};
  if (::getrandom(random, sizeof(random), 0) != static_cast<ssize_t>(sizeof(random))) {
    for (unsigned char& byte : random) byte = static_cast<unsigned char>(std::rand());
  }
  std::string suffix;
  for (unsigned char byte : random) suffix += kAlphabet[byte % (sizeof(kAlphabet) - 1)];
  std::string word;
  for (char c : ToLower(task)) word += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  return "primus-" + word.substr(0, 20) + "-" + suffix;
}

Status ValidateJob(const K8sJob& job) {
  if (job.nodes < 1) {
    return UsageError("k8s: the number of pods is missing or below 1 (" + std::to_string(job.nodes) + ")",
                      "give -N NODES (or k8s.nodes in the configuration)");
  }
  if (job.image.empty()) {
    return UsageError("k8s: no image for the pods", "give --image IMAGE (or k8s.image in the configuration)");
  }
  if (job.kind != "job" && job.kind != "pytorchjob") {
    return UsageError("k8s: kind '" + job.kind + "' is not job or pytorchjob",
                      "--kind job writes an Indexed Job with a headless Service; --kind pytorchjob a Kubeflow PyTorchJob");
  }
  if (job.vendor != "amd" && job.vendor != "nvidia") {
    return UsageError("k8s: GPU vendor '" + job.vendor + "' is not amd or nvidia", "give --vendor amd or --vendor nvidia");
  }
  if (job.gpus_per_node < 0) {
    return UsageError("k8s: --gpus-per-node " + std::to_string(job.gpus_per_node) + " is negative",
                      "give the GPUs per pod, or 0 for CPU-only pods");
  }
  if (job.master_port < 1 || job.master_port > 65534) {
    return UsageError("k8s: master port " + std::to_string(job.master_port) + " is out of range",
                      "give a port from 1 to 65534 (the control channel uses the next one)");
  }
  if (job.backoff_limit < 0) {
    return UsageError("k8s: backoff limit " + std::to_string(job.backoff_limit) + " is negative",
                      "give 0 (fail the job at the first failed pod) or more");
  }
  std::string suffix = LongestPodSuffix(job);
  size_t longest = 63 - suffix.size();
  if (!IsDnsLabel(job.name) || job.name.size() > longest) {
    return UsageError("k8s: job name '" + job.name + "' cannot name the job's pods (" + job.name + suffix + ")",
                      "use lowercase letters, digits and '-', starting with a letter, at most " +
                          std::to_string(longest) + " characters (--name)");
  }
  if (job.command.empty()) return UsageError("k8s: nothing to run in the pods");
  for (size_t i = 0; i < job.command.size(); ++i) {
    // YAML carries Unicode text: a byte that is not UTF-8 would reach the pod changed.
    if (!IsValidUtf8(job.command[i])) {
      return UsageError("k8s: argument " + ShellQuote(job.command[i]) +
                            " is not valid UTF-8, and a Kubernetes manifest can carry text only",
                        "pass such bytes another way (a file in the image or a volume), or encode them (base64)");
    }
  }
  return Status::Ok();
}

std::string GpuResourceName(const std::string& vendor) { return vendor == "nvidia" ? "nvidia.com/gpu" : "amd.com/gpu"; }

std::string TokenSecretName(const K8sJob& job) { return job.name + "-token"; }

std::string MasterAddress(const K8sJob& job) {
  return job.kind == "pytorchjob" ? job.name + "-master-0" : job.name + "-0." + job.name;
}

std::string PodPlatform(const K8sJob& job) {
  if (!job.platform.empty() && job.platform != "auto") return job.platform;
  return job.kind == "pytorchjob" ? "pytorchjob" : "jobset";
}

std::vector<nlohmann::ordered_json> ManifestDocuments(const K8sJob& job) {
  if (job.kind == "pytorchjob") return {PyTorchJob(job)};
  return {HeadlessService(job), IndexedJob(job)};
}

std::string RenderManifest(const K8sJob& job, const std::string& note) {
  std::string what = job.kind == "pytorchjob"
                         ? "Kubeflow PyTorchJob \"" + job.name + "\" (1 Master + " + std::to_string(job.nodes - 1) +
                               " Worker pods)"
                         : "Indexed Job \"" + job.name + "\" (" + std::to_string(job.nodes) +
                               " pods) with headless Service \"" + job.name + "\"";
  std::string gpus = job.gpus_per_node > 0
                         ? std::to_string(job.gpus_per_node) + " x " + GpuResourceName(job.vendor) + " per pod"
                         : "none requested (CPU pods)";
  std::string secret = TokenSecretName(job);
  std::string comment =
      "Written by primus-cli k8s manifest: " + what + " in namespace " + job.namespace_name + ".\n" +
      "Each pod runs: " + ShellJoin(job.command) + "\n" +
      "(the image must have " + job.command.front() + " on its PATH, or mount it and set k8s.binary)\n" +
      "GPUs: " + gpus + (note.empty() ? "" : " (" + note + ")") + "\n" +
      "The pods read the job token from Secret " + secret + " (key " + kTokenKey +
      "); the token is not in this file.\n" +
      "`primus-cli k8s submit` with the same arguments creates it and applies this manifest; by hand:\n" +
      "  head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n' | kubectl create secret generic " + secret +
      " -n " + job.namespace_name + " --from-file=" + kTokenKey + "=/dev/stdin\n" +
      "  kubectl apply -f <this file>\n" +
      "Remove everything: kubectl delete " + (job.kind == "pytorchjob" ? "pytorchjob" : "job,service") +
      ",secret -n " + job.namespace_name + " -l " + kLabelJob + "=" + job.name;
  return ToYamlDocuments(ManifestDocuments(job), comment);
}

nlohmann::ordered_json TokenSecret(const K8sJob& job, const std::string& token) {
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata", Metadata(job, TokenSecretName(job))},
      {"type", "Opaque"},
      {"stringData", {{kTokenKey, token}}},
  };
}

}  // namespace primus::runtime
