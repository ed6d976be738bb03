// `k8s`: write (manifest) or apply (submit) a Kubernetes job whose pods each
// run `primus-cli direct -- <task>`: an Indexed Job with a headless Service,
// or a Kubeflow PyTorchJob (k8s_manifest.h). Inside a pod, `direct` reads
// its node rank and master from the pod's environment by itself
// (config/pod_settings.cc). submit creates the token Secret through
// kubectl's stdin and applies the manifest (k8s_kubectl.h).
#include <algorithm>
#include <iostream>

#include "config/launcher_config.h"
#include "platform/host_detect.h"
#include "runtime/k8s_kubectl.h"
#include "runtime/k8s_manifest.h"
#include "runtime/k8s_yaml.h"
#include "runtime/runtime.h"
#include "snapshot/redaction.h"
#include "util/files.h"
#include "util/log.h"
#include "util/random.h"
#include "util/strings.h"

namespace primus::runtime {
namespace {

using K = OptionSpec::Kind;

// The job as the configuration describes it, plus a note for the manifest
// header when the GPU vendor was guessed.
struct Request {
  K8sJob job;
  std::string vendor_note;
  std::string output;  // -o FILE; "" for stdout
};

Result<int> IntKey(const config::LauncherConfig& launcher, std::string_view key) {
  int64_t value = launcher.GetInt(key);
  if (value < INT32_MIN || value > INT32_MAX) {
    return config::ConfigErrorAt(launcher.OriginOf(key), std::string(key) + " is out of range");
  }
  return static_cast<int>(value);
}

// k8s.vendor auto: the vendor of this host's GPUs (the platform layer's
// detection), else amd with a warning and a note in the manifest.
Result<std::pair<std::string, std::string>> ResolveVendor(const config::LauncherConfig& launcher, int gpus) {
  std::string vendor = ToLower(launcher.GetString("k8s.vendor"));
  if (vendor == "amd" || vendor == "nvidia") return std::pair{vendor, std::string()};
  if (vendor != "auto") {
    return config::ConfigErrorAt(launcher.OriginOf("k8s.vendor"), "k8s.vendor '" + vendor + "' is not amd, nvidia or auto",
                                 "give --vendor amd or --vendor nvidia");
  }
  if (gpus == 0) return std::pair{std::string("amd"), std::string()};  // no GPU resources requested anyway
  platform::HostInfo host = platform::DetectHost(platform::Roots::FromEnvironment());
  if (!host.gpus.empty()) {
    const platform::GpuInfo& gpu = host.gpus.front();
    return std::pair{gpu.vendor, "vendor auto: " + gpu.vendor + ", as this host's " +
                                     (gpu.product.empty() ? std::string("GPUs") : gpu.product)};
  }
  log::Warn("k8s: --vendor auto finds no GPU on this host to tell AMD from NVIDIA; requesting amd.com/gpu "
            "(give --vendor nvidia for NVIDIA nodes)");
  return std::pair{std::string("amd"), std::string("vendor auto: no GPU on the generating host, amd assumed; "
                                                   "--vendor nvidia for NVIDIA nodes")};
}

Result<Request> RequestFromConfig(const RuntimeContext& context) {
  const config::LauncherConfig& launcher = *context.launcher;
  const Invocation& invocation = *context.invocation;
  const ModeInvocation& mode = invocation.chain[context.depth];
  Request request;
  K8sJob& job = request.job;
  for (auto [key, field] : {std::pair{"k8s.nodes", &job.nodes}, std::pair{"k8s.gpus_per_node", &job.gpus_per_node},
                            std::pair{"k8s.master_port", &job.master_port},
                            std::pair{"k8s.backoff_limit", &job.backoff_limit}}) {
    Result<int> value = IntKey(launcher, key);
    if (!value.ok()) return value.error();
    *field = *value;
  }
  auto vendor = ResolveVendor(launcher, job.gpus_per_node);
  if (!vendor.ok()) return vendor.error();
  job.vendor = vendor->first;
  request.vendor_note = vendor->second;
  job.kind = ToLower(launcher.GetString("k8s.kind"));
  job.name = launcher.GetString("k8s.name");
  if (job.name.empty()) job.name = DefaultJobName(invocation.task);
  job.namespace_name = launcher.GetString("k8s.namespace");
  job.image = launcher.GetString("k8s.image");
  job.service_account = launcher.GetString("k8s.service_account");
  job.host_network = launcher.GetBool("k8s.host_network");
  job.shm_size = launcher.GetString("k8s.shm_size");
  job.platform = ToLower(launcher.GetString("k8s.platform"));
  // none would leave the pods without a node rank; slurm is not a pod's.
  if (job.platform != "auto" && job.platform != "pytorchjob" && job.platform != "jobset" && job.platform != "platform") {
    return config::ConfigErrorAt(launcher.OriginOf("k8s.platform"),
                                 "k8s.platform '" + job.platform + "' is not a convention the pods can run under",
                                 "give --platform auto (the kind's own), pytorchjob, jobset or platform");
  }

  // What the pods run: `direct` with the options written after `k8s ... --`.
  std::vector<std::string> direct_options;
  if (context.depth + 1 < invocation.chain.size()) direct_options = invocation.chain[context.depth + 1].written;
  Result<int> metrics_port = IntKey(launcher, "direct.metrics_port");
  if (!metrics_port.ok()) return metrics_port.error();
  job.metrics_port = *metrics_port;
  if (job.metrics_port != 0 &&
      std::find(direct_options.begin(), direct_options.end(), "--metrics-port") == direct_options.end()) {
    // Set in a configuration file here, which the pods do not read.
    direct_options.insert(direct_options.begin(), {"--metrics-port", std::to_string(job.metrics_port)});
  }
  job.command = PodCommand(launcher.GetString("k8s.binary"), direct_options, invocation.task, invocation.task_args);
  for (const ParsedOption& option : mode.options) {
    if (option.spec->names.front() == "--output") request.output = option.value;
  }
  if (Status status = ValidateJob(job); !status.ok()) return status.error();
  if (Status status = snapshot::CheckNoSecretArguments(
          job.command, "a manifest (anyone who can read the namespace's jobs reads it)",
          "keep it in a Kubernetes Secret and give it to the pods as an environment variable (secretKeyRef)");
      !status.ok()) {
    return status.error();
  }
  return request;
}

Status WriteManifestFile(const std::string& path, const std::string& text) {
  Status status = WriteFileAtomic(path, text, kUserOutputMode);
  if (!status.ok()) return status;
  log::Info("k8s: wrote the manifest to {}", path);
  return Status::Ok();
}

Result<int> Manifest(const RuntimeContext& context, const Request& request) {
  std::string text = RenderManifest(request.job, request.vendor_note);
  if (request.output.empty()) {
    std::cout << text << std::flush;
    return 0;
  }
  if (context.dry_run) {
    log::Info("dry run: the manifest below would be written to {}", request.output);
    std::cout << text << std::flush;
    return 0;
  }
  if (Status status = WriteManifestFile(request.output, text); !status.ok()) return status.error();
  return 0;
}

Result<int> Submit(const RuntimeContext& context, const Request& request) {
  const K8sJob& job = request.job;
  Kubectl kubectl;
  std::string text = RenderManifest(job, request.vendor_note);
  std::string secret = TokenSecretName(job);
  if (context.dry_run) {
    std::cout << text;
    std::cout << "# k8s submit would run (nothing is run under --dry-run):\n"
              << "#   " << ShellJoin(ClusterCheckCommand(kubectl)) << "\n"
              << "#   " << ShellJoin(ApplyCommand(kubectl, job.namespace_name)) << "   # stdin: Secret " << secret
              << " with a fresh random token (never written to disk)\n"
              << "#   " << ShellJoin(ApplyCommand(kubectl, job.namespace_name)) << "   # stdin: the manifest above\n"
              << std::flush;
    if (!request.output.empty()) log::Info("dry run: the manifest would also be written to {}", request.output);
    return 0;
  }
  if (Status status = CheckCluster(kubectl); !status.ok()) return status.error();
  if (!request.output.empty()) {
    if (Status status = WriteManifestFile(request.output, text); !status.ok()) return status.error();
  }
  // The token lives in kubectl's stdin and in the cluster's Secret only.
  auto new_token = NewJobToken();
  if (!new_token.ok()) return new_token.error();
  std::string token = std::move(*new_token);
  if (Status status = Apply(kubectl, job.namespace_name, ToYaml(TokenSecret(job, token)), "the token Secret " + secret);
      !status.ok()) {
    return status.error();
  }
  if (Status status = Apply(kubectl, job.namespace_name, text, "the manifest"); !status.ok()) return status.error();
  std::string selector = "primus-cli/job=" + job.name;
  std::cout << "submitted " << (job.kind == "pytorchjob" ? "pytorchjob/" : "job/") << job.name << " (" << job.nodes
            << " pods) in namespace " << job.namespace_name << "\n"
            << "  pods:   kubectl get pods -n " << job.namespace_name << " -l " << selector << "\n"
            << "  logs:   kubectl logs -n " << job.namespace_name << " -l " << selector
            << " -f --prefix --max-log-requests " << std::max(5, job.nodes) << "\n"
            << "  remove: kubectl delete " << (job.kind == "pytorchjob" ? "pytorchjob" : "job,service")
            << ",secret -n " << job.namespace_name << " -l " << selector << "\n"
            << std::flush;
  return 0;
}

class KubernetesRuntime : public Runtime {
 public:
  std::string name() const override { return "k8s"; }
  std::string summary() const override { return "write or submit a Kubernetes job that runs the task in pods"; }
  std::string usage() const override {
    return "primus-cli [global options] k8s [manifest|submit] -N NODES --image IMG [--gpus-per-node G] [k8s options] "
           "-- [direct [direct options] --] <task> [args]";
  }
  std::vector<std::string> examples() const override {
    return {
        "primus-cli k8s manifest -N 4 --image IMG --gpus-per-node 8 -o job.yaml -- train pretrain",
        "primus-cli k8s submit -N 2 --image IMG --gpus-per-node 8 -- benchmark gemm -M 8192",
    };
  }
  std::string details() const override {
    return "manifest (the default) writes an Indexed Job with a headless Service (--kind pytorchjob: a\n"
           "Kubeflow PyTorchJob) to stdout or -o FILE; each pod runs `primus-cli direct -- <task>`,\n"
           "which finds its node rank and master in the pod's environment. submit creates the token\n"
           "Secret and applies the manifest with kubectl; without kubectl or a reachable cluster it\n"
           "exits 4. The image must contain primus-cli (k8s.binary). See docs/k8s.md.\n";
  }
  const std::vector<OptionSpec>& options() const override {
    static const std::vector<OptionSpec> table = {
        {{"--nodes", "-N"}, K::kValue, "N", "k8s.nodes", "number of pods (nodes), one node agent each"},
        {{"--gpus-per-node"}, K::kValue, "G", "k8s.gpus_per_node", "GPUs requested per pod (0: none)"},
        {{"--image"}, K::kValue, "IMAGE", "k8s.image", "image for the pods (it must contain primus-cli)"},
        {{"--vendor"}, K::kValue, "amd|nvidia|auto", "k8s.vendor", "GPU resource: amd.com/gpu or nvidia.com/gpu"},
        {{"--kind"}, K::kValue, "job|pytorchjob", "k8s.kind", "Indexed Job + headless Service, or a Kubeflow PyTorchJob"},
        {{"--name"}, K::kValue, "NAME", "k8s.name", "job name (default: primus-<task>-<random>)"},
        {{"--namespace", "-n"}, K::kValue, "NS", "k8s.namespace", "namespace"},
        {{"--service-account"}, K::kValue, "NAME", "k8s.service_account", "service account of the pods"},
        {{"--host-network"}, K::kFlag, "", "k8s.host_network", "pods use their node's network (RDMA NICs)"},
        {{"--master-port"}, K::kValue, "PORT", "k8s.master_port", "rendezvous port in the pods (control channel: +1)"},
        {{"--backoff-limit"}, K::kValue, "N", "k8s.backoff_limit", "pod failures before the job fails (default 0)"},
        {{"--shm-size"}, K::kValue, "SIZE", "k8s.shm_size", "size limit of the memory-backed /dev/shm"},
        {{"--binary"}, K::kValue, "PATH", "k8s.binary", "primus-cli inside the image (default: on its PATH)"},
        {{"--platform"}, K::kValue, "NAME", "k8s.platform", "in-pod convention: auto|pytorchjob|jobset|platform"},
        {{"--output", "-o"}, K::kValue, "FILE", "", "write the manifest here instead of stdout"},
    };
    return table;
  }
  // A pod is already a container: only `direct` runs inside it.
  std::vector<std::string> inner_modes() const override { return {"direct"}; }
  std::vector<std::string> actions() const override { return {"manifest", "submit"}; }
  std::string default_action() const override { return "manifest"; }
  Result<int> Execute(const RuntimeContext& context) override {
    Result<Request> request = RequestFromConfig(context);
    if (!request.ok()) return request.error();
    if (context.invocation->chain[context.depth].action == "submit") return Submit(context, *request);
    return Manifest(context, *request);
  }
};

RuntimeRegistration<KubernetesRuntime> k8s_registration;

}  // namespace
}  // namespace primus::runtime
