// Why an engine run failed, in words the user can act on. docker and podman
// exit 125 when they themselves fail (the container never ran the command):
// the image is missing or cannot be pulled, the name is taken, the runtime
// refused a setting. The engine's own message stays on the console; this
// adds one error naming the image, the --pull setting and what to do.
#pragma once

#include <optional>
#include <string>

#include "util/error.h"

namespace primus::runtime {

inline constexpr int kEngineFailed = 125;  // docker and podman: the engine itself failed

struct FailedRun {
  std::string engine;     // "podman" | "docker"
  int exit_code = 0;
  std::string output;     // the tail of the engine's stderr
  std::string image;
  std::string pull;       // never | missing | always
  std::string name;       // the container name we asked for
};

// True when the engine refused the name because another container holds
// it: that container is not ours, and cleanup must leave it alone.
bool NameWasTaken(const FailedRun& run);

// An Error (exit code 4) for an engine failure (exit 125) we recognise or
// not, nullopt for any other exit code (the task's own).
std::optional<Error> ExplainEngineFailure(const FailedRun& run);

}  // namespace primus::runtime
