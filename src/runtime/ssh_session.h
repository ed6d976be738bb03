// Running the ssh sessions of an `ssh` job (ssh_command.h builds their
// command lines; the host checks and copies before them run through
// io/stoppable_commands.h):
//
// RunSessions: one ssh per host for the whole job. Each child gets the job
// token as the first line of its standard input, which then stays open: it
// is the remote agent's lifeline (agent/stdin_session.h). The children run
// in their own process group, so a terminal's Ctrl-C reaches only us:
//   - first SIGINT/SIGTERM/SIGHUP: every child's stdin is closed, so every
//     remote agent stops its workers as on a hangup while its output still
//     comes back; after `stop_grace_s` the ssh clients still running are
//     terminated. A second signal terminates them at once.
//   - a session that ends with ssh's own failure (255: the connection
//     dropped, the ssh client died) is reported; that host's agent has had a
//     hangup (or is unreachable, and lost to the others), so the agents end
//     the job among themselves. If it still runs 3 s later (before every
//     node joined), every other stdin is closed, as for a signal.
//   - once node 0's session ended, the others have `finish_grace_s` to end.
// Output: the children's stdout lines pass through unchanged (the workers'
// lines already carry [host:rank]); their stderr lines (the agents' log,
// ssh's messages) get "[host] " in front, on our stderr.
// The result is the job's exit code: 128+N after our signal N, else node
// 0's status, else (node 0's connection failed) the first other host's that
// is not ssh's 255, else 255.
#pragma once

#include <string>
#include <vector>

#include "util/error.h"

namespace primus::runtime {

struct SshSession {
  std::string host;               // the label on its stderr lines and in messages
  std::vector<std::string> argv;  // ssh ...
};

struct SessionOptions {
  std::string token;              // written to every child's stdin, then a line break
  double stop_grace_s = 45;       // after a stop: how long the agents may take
  double finish_grace_s = 60;     // after node 0 ended: how long the others may take
};

// An Error only when ssh cannot be started at all. `statuses`: each
// session's exit status (255 when ssh's own), in order, when wanted.
Result<int> RunSessions(const std::vector<SshSession>& sessions, const SessionOptions& options,
                        std::vector<int>* statuses = nullptr);

// The job's exit code from each session's status (node order) and the
// signal that stopped us (0: none).
int JobExitCode(const std::vector<int>& statuses, int signal);

}  // namespace primus::runtime
