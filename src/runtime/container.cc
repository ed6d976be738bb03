// `container`: run the task inside a docker or podman image, with the host's
// primus-cli bind-mounted and `direct` running inside. Engine flags this
// table does not know pass through to the engine unchanged.
#include "runtime/runtime.h"

namespace primus::runtime {
namespace {

using K = OptionSpec::Kind;

class ContainerRuntime : public Runtime {
 public:
  std::string name() const override { return "container"; }
  std::string summary() const override { return "run the task inside a docker/podman image"; }
  std::string usage() const override {
    return "primus-cli [global options] container [--image IMG] [container options] [engine flags] -- [direct ...] <task> [args]";
  }
  const std::vector<OptionSpec>& options() const override {
    static const std::vector<OptionSpec> table = {
        {{"--image"}, K::kValue, "IMAGE", "container.image", "image to run (default: container.image in the config)"},
        {{"--mount", "--volume", "-v"}, K::kValue, "HOST:CTR[:ro]", "container.mounts", "bind-mount a path", true},
        {{"--env", "-e"}, K::kValue, "K=V|K", "container.env", "set or forward a variable", true},
        {{"--device"}, K::kValue, "DEV", "container.devices", "add a device", true},
        {{"--engine"}, K::kValue, "docker|podman", "container.engine", "container engine (default: auto-detect)"},
        {{"--name"}, K::kValue, "NAME", "container.name", "container name (default: unique per launch)"},
        {{"--shm-size"}, K::kValue, "SIZE", "container.shm_size", "size of /dev/shm"},
        {{"--user", "-u"}, K::kValue, "USER", "container.user", "user inside the container"},
        {{"--pull"}, K::kValue, "never|missing|always", "container.pull", "when to pull the image"},
    };
    return table;
  }
  std::vector<std::string> inner_modes() const override { return {"direct"}; }
  UnknownOptionPolicy unknown_options() const override { return UnknownOptionPolicy::kPassThrough; }
  bool available() const override { return false; }
  Result<int> Execute(const RuntimeContext& context) override {
    return Error{ExitCode::kNotAvailable, "mode 'container' is not available yet in this build",
                 "run the task with 'direct' inside the image for now; the container runtime is issue #7"};
  }
};

RuntimeRegistration<ContainerRuntime> registration;

}  // namespace
}  // namespace primus::runtime
