// Helper commands (io/subprocess RunCommand: host checks over ssh, binary
// copies, hooks and patches) that our own SIGINT, SIGTERM or SIGHUP stops.
//
// RunCommand puts each command in a process group of its own, so that a
// timeout ends its children too; the price is that a terminal's Ctrl-C
// reaches only us. Were we simply to die of it, the command would run on,
// an orphan (an ssh copy for minutes, a hook for its whole timeout). Here
// the calling thread reads our signals through a SignalChannel while worker
// threads run the commands: the first signal ends every command still
// running (SIGTERM to its group, SIGKILL after its kill grace), starts no
// more, and is returned for the caller to act on (exit 128+N, say so).
#pragma once

#include <string>
#include <vector>

#include "io/subprocess.h"

namespace primus::io {

struct StoppableCommand {
  std::vector<std::string> argv;
  CommandOptions options;  // its stop_fd is set here
};

struct StoppableRun {
  // One result per command, in order: RunCommand's (an Error when it could
  // not be started). One ended, or never started, because of a signal has
  // `stopped`. `on_line` callbacks run on a worker thread while the caller
  // waits.
  std::vector<Result<CommandResult>> results;
  int stop_signal = 0;  // the signal that stopped the run; 0: none
};

// At most `parallel` commands at a time. Signals that were ignored when it
// started (a background job's SIGINT) stay ignored. While it runs it takes
// every signal a SignalChannel handles, SIGCHLD included: call it before a
// process supervises children of its own through another channel, not then.
StoppableRun RunStoppable(const std::vector<StoppableCommand>& commands, int parallel = 1);

}  // namespace primus::io
