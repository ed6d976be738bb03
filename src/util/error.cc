#include "util/error.h"

namespace primus {

std::string Error::Format() const {
  std::string out = "error: " + message;
  if (!hint.empty()) out += "\n  hint: " + hint;
  return out;
}

Error UsageError(std::string message, std::string hint) {
  return Error{ExitCode::kUsage, std::move(message), std::move(hint)};
}
Error ConfigError(std::string message, std::string hint) {
  return Error{ExitCode::kConfig, std::move(message), std::move(hint)};
}
Error UnavailableError(std::string message, std::string hint) {
  return Error{ExitCode::kUnavailable, std::move(message), std::move(hint)};
}
Error TaskError(std::string message, std::string hint) {
  return Error{ExitCode::kTaskFailed, std::move(message), std::move(hint)};
}
Error StoppedBySignal(int signal, std::string message) {
  return Error{static_cast<ExitCode>(128 + signal), std::move(message), ""};
}

}  // namespace primus
