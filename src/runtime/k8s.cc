// `k8s`: write (manifest) or apply (submit) an Indexed Job whose pods each
// run `primus-cli direct -- <task>`; inside a pod, `direct` detects the
// platform's distributed settings by itself.
#include "runtime/runtime.h"

namespace primus::runtime {
namespace {

using K = OptionSpec::Kind;

class KubernetesRuntime : public Runtime {
 public:
  std::string name() const override { return "k8s"; }
  std::string summary() const override { return "write or submit a Kubernetes job that runs the task in pods"; }
  std::string usage() const override {
    return "primus-cli [global options] k8s [manifest|submit] -N NODES --gpus-per-node G --image IMG -- <task> [args]";
  }
  const std::vector<OptionSpec>& options() const override {
    static const std::vector<OptionSpec> table = {
        {{"--nodes", "-N"}, K::kValue, "N", "", "number of pods (nodes)"},
        {{"--gpus-per-node"}, K::kValue, "G", "k8s.gpus_per_node", "GPUs requested per pod"},
        {{"--image"}, K::kValue, "IMAGE", "k8s.image", "image for the pods"},
        {{"--vendor"}, K::kValue, "amd|nvidia", "k8s.vendor", "GPU resource name to request"},
        {{"--namespace", "-n"}, K::kValue, "NS", "k8s.namespace", "namespace"},
        {{"--platform"}, K::kValue, "NAME", "k8s.platform", "in-pod convention: auto|pytorchjob|jobset|platform"},
        {{"--output", "-o"}, K::kValue, "FILE", "", "write the manifest here"},
    };
    return table;
  }
  std::vector<std::string> inner_modes() const override { return {"container", "direct"}; }
  std::vector<std::string> actions() const override { return {"manifest", "submit"}; }
  std::string default_action() const override { return "manifest"; }
  bool available() const override { return false; }
  Result<int> Execute(const RuntimeContext& context) override {
    return Error{ExitCode::kNotAvailable, "mode 'k8s' is not available yet in this build",
                 "inside a pod, run 'primus-cli direct -- <task>'; the Kubernetes runtime is issue #6"};
  }
};

RuntimeRegistration<KubernetesRuntime> registration;

}  // namespace
}  // namespace primus::runtime
