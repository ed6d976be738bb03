#include "runtime/container_failure.h"

#include <vector>

#include "util/strings.h"

namespace primus::runtime {
namespace {

bool ContainsAny(const std::string& text, const std::vector<std::string>& needles) {
  for (const std::string& needle : needles) {
    if (text.find(needle) != std::string::npos) return true;
  }
  return false;
}

// The engine's last error line ("Error: ...", "docker: Error response ...").
std::string LastErrorLine(const std::string& output) {
  std::string found;
  for (const std::string& line : Split(output, '\n')) {
    std::string_view trimmed = Trim(line);
    if (trimmed.empty() || trimmed.starts_with("Run '")) continue;
    if (found.empty() || trimmed.find("rror") != std::string_view::npos) found = std::string(trimmed);
  }
  return found;
}

}  // namespace

bool NameWasTaken(const FailedRun& run) {
  return run.exit_code == kEngineFailed && run.output.find("is already in use") != std::string::npos;
}

std::optional<Error> ExplainEngineFailure(const FailedRun& run) {
  if (run.exit_code != kEngineFailed) return std::nullopt;
  std::string said = LastErrorLine(run.output);
  if (NameWasTaken(run)) {
    return Error{ExitCode::kUnavailable, "container name " + run.name + " is already in use (" + run.engine + ": " + said + ")",
                 "choose another --name, or leave --name out for a unique one; primus-cli never removes a container "
                 "it did not start"};
  }
  static const std::vector<std::string> kImageMissing = {
      "image not known", "No such image", "Unable to find image", "short-name", "initializing source",
      "manifest unknown", "reading manifest", "pull access denied", "repository does not exist",
      "requested access to the resource is denied", "pinging container registry", "registry-1.docker.io",
      "failed to resolve reference", "not found: manifest"};
  if (ContainsAny(run.output, kImageMissing)) {
    std::string hint = run.pull == "never"
                           ? "--pull is never, so only images already in " + run.engine + "'s store are used: " +
                                 run.engine + " pull " + run.image + " (or " + run.engine +
                                 " load / import it), or use --pull missing"
                           : "--pull is " + run.pull + " and " + run.engine +
                                 " could not pull it: check the image name and the registry (login, network); "
                                 "images loaded with " + run.engine + " load/import run with --pull never";
    return Error{ExitCode::kUnavailable, "image " + run.image + " is not available to " + run.engine + ": " + said, hint};
  }
  return Error{ExitCode::kUnavailable, run.engine + " could not run the container: " + said,
               "the engine's message is above; --dry-run prints the exact " + run.engine + " command to try by hand"};
}

}  // namespace primus::runtime
