// Errors as values. Every failure that reaches the user carries the exit code
// it maps to, a message naming the bad input and where it came from, and a
// hint saying what to do. Result<T> holds either a value or such an Error.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace primus {

// The documented exit codes (docs/cli.md, "Exit codes"). A worker's own failure
// code, or 128+N for signal N, passes through unchanged unless
// direct.failure_exit_code sets one code for every failure.
enum class ExitCode : int {
  kOk = 0,
  kTaskFailed = 1,    // the task failed (the agent reports the worker's own code)
  kUsage = 2,         // unknown mode, flag or task; malformed command line
  kConfig = 3,        // a configuration file or value is wrong
  kUnavailable = 4,   // a required tool, library, device or port is missing
  // This node was found bad (the hang's culprit, or failing again) and left
  // the job, which goes on without it (fault_tolerance.exclude_bad_nodes).
  kNodeExcluded = 5,
  // The workers' work finished (a worker exited 0), but another worker did
  // not exit within the exit grace and was stopped (stuck in teardown).
  kStuckAtExit = 6,
  // 128+N: stopped by signal N (StoppedBySignal; Ctrl-C is SIGINT, 130).
};

struct Error {
  ExitCode code = ExitCode::kTaskFailed;
  std::string message;
  std::string hint;  // what the user can do about it; may be empty

  // "error: <message>\n  hint: <hint>" as printed to the user.
  std::string Format() const;
};

Error UsageError(std::string message, std::string hint = "");
Error ConfigError(std::string message, std::string hint = "");
Error UnavailableError(std::string message, std::string hint = "");
Error TaskError(std::string message, std::string hint = "");
// Our own signal N stopped the work (Ctrl-C: SIGINT): exit code 128+N, as a
// shell reports a command that a signal ended.
Error StoppedBySignal(int signal, std::string message);

// Status: success, or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}  // NOLINT: implicit on purpose
  static Status Ok() { return Status(); }

  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return *error_; }

 private:
  std::optional<Error> error_;
};

// Result<T>: a T, or an Error.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit on purpose
  Result(Error error) : state_(std::move(error)) {}  // NOLINT: implicit on purpose

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  const T& value() const& { return std::get<T>(state_); }
  T& value() & { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const Error& error() const { return std::get<Error>(state_); }
  Status status() const { return ok() ? Status() : Status(error()); }

 private:
  std::variant<T, Error> state_;
};

}  // namespace primus
