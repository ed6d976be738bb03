// Runs one helper command to completion: a hook, a patch, docker, scontrol,
// kubectl (through io/spawn.h, as every child). Captures stdout and stderr (bounded), optionally streams each
// output line to a callback as it arrives, and enforces a timeout by
// SIGTERM then SIGKILL to the command's own process group, so a timed-out
// hook leaves nothing behind. (Workers are the node agent's business, not
// this.)
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/error.h"

namespace primus {

struct CommandOptions {
  std::string cwd{};                                         // "" = inherit
  std::map<std::string, std::optional<std::string>> env{};   // set (value) or unset (nullopt) on top
  bool clear_env = false;                                    // start from an empty environment
  double timeout_s = 0;                                      // 0 = none
  double kill_grace_s = 2;                                   // SIGTERM -> SIGKILL after a timeout
  std::string stdin_data{};                                  // written to the command's stdin
  size_t capture_limit = 16 << 20;                           // bytes kept per stream (the tail)
  std::function<void(bool is_stderr, const std::string& line)> on_line{};  // streaming, optional
  // A descriptor (a pipe's read end) that, once readable, stops the command
  // as a timeout does: SIGTERM to its group, SIGKILL after kill_grace_s. It
  // is never read, so one byte stops every command that watches it. -1: none.
  int stop_fd = -1;
};

struct CommandResult {
  int exit_code = -1;      // the command's code, or 128+N when killed by signal N
  bool timed_out = false;
  bool stopped = false;    // ended through options.stop_fd
  double seconds = 0;      // wall time from start to exit
  std::string out;
  std::string err;
  std::string Tail(size_t lines) const;  // the last lines of stdout+stderr, for messages
};

// Error only when the command could not be started (missing executable:
// exit code 4 with the name and a hint). A non-zero exit is a result.
Result<CommandResult> RunCommand(const std::vector<std::string>& argv, const CommandOptions& options = {});

}  // namespace primus
