#include "runtime/k8s_kubectl.h"

#include <fmt/format.h>

#include "util/strings.h"
#include "io/subprocess.h"

namespace primus::runtime {
namespace {

const char* const kManifestInstead =
    "write the manifest with `primus-cli k8s manifest ... -o job.yaml` (same arguments) and apply it where kubectl "
    "reaches the cluster; the file's header says how to create the token Secret";

std::string LastLines(const CommandResult& result) {
  std::string tail(Trim(result.Tail(3)));
  return tail.empty() ? "(no output)" : ReplaceAll(tail, "\n", " | ");
}

}  // namespace

std::vector<std::string> ClusterCheckCommand(const Kubectl& kubectl) {
  return {kubectl.program, "version", fmt::format("--request-timeout={}s", kubectl.check_timeout_s)};
}

std::vector<std::string> ApplyCommand(const Kubectl& kubectl, const std::string& namespace_name) {
  return {kubectl.program, "apply", "-n", namespace_name, "-f", "-"};
}

Status CheckCluster(const Kubectl& kubectl) {
  CommandOptions options;
  options.timeout_s = kubectl.check_timeout_s + 10;  // kubectl's own timeout first; this one if it hangs anyway
  Result<CommandResult> result = RunCommand(ClusterCheckCommand(kubectl), options);
  if (!result.ok()) {
    return Error{ExitCode::kUnavailable,
                 "k8s submit needs kubectl, and " + kubectl.program + " was not found on PATH",
                 std::string("install kubectl configured for your cluster (KUBECONFIG), or ") + kManifestInstead};
  }
  if (result->timed_out || result->exit_code != 0) {
    return Error{ExitCode::kUnavailable,
                 "no Kubernetes cluster is reachable: `" + ShellJoin(ClusterCheckCommand(kubectl)) + "` " +
                     (result->timed_out ? "timed out" : "exited with " + std::to_string(result->exit_code)) + ": " +
                     LastLines(*result),
                 "check KUBECONFIG and the current context (kubectl config current-context), or " +
                     std::string(kManifestInstead)};
  }
  return Status::Ok();
}

Status Apply(const Kubectl& kubectl, const std::string& namespace_name, const std::string& yaml,
             const std::string& what) {
  CommandOptions options;
  options.stdin_data = yaml;
  options.timeout_s = 60;
  std::vector<std::string> command = ApplyCommand(kubectl, namespace_name);
  Result<CommandResult> result = RunCommand(command, options);
  if (!result.ok()) return result.error();
  if (result->timed_out || result->exit_code != 0) {
    return Error{ExitCode::kUnavailable,
                 "`" + ShellJoin(command) + "` could not apply " + what + ": " + LastLines(*result),
                 "a PyTorchJob needs the Kubeflow training-operator in the cluster (or use --kind job); check the "
                 "namespace exists and that you may create Jobs, Services and Secrets in it"};
  }
  return Status::Ok();
}

}  // namespace primus::runtime
