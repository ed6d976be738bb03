// How an agent started over ssh (runtime/ssh_command.h) gets its job token
// and learns that its session ended, without a terminal and without the
// token ever being on a command line or in a file:
//
//   PRIMUS_JOB_TOKEN_STDIN=1    the first line of standard input is
//                               PRIMUS_JOB_TOKEN (read byte by byte, so
//                               nothing after it is consumed; never logged)
//   PRIMUS_STOP_ON_STDIN_EOF=1  the end of standard input is a hangup: the
//                               agent gets SIGHUP (SIGTERM where SIGHUP was
//                               ignored at start) and stops the job as for
//                               any terminating signal (exit 129). The
//                               launching side closes it on Ctrl-C; sshd
//                               closes it when the connection drops or the
//                               ssh client dies
//
// ssh without a terminal sends the remote command no signal when the
// session ends (-tt would, but also mangles output and stdin), so stdin is
// the session's lifeline, and its end is what a terminal's would be: a
// hangup. A thread with every signal blocked reads and discards stdin and
// sends the signal to the process at its end; the agent's own handling
// (stop the workers, tell node 0, every node exits 128+N) does the rest.
// Both variables are removed from the environment once read, so workers and
// nested primus-cli processes never see them.
#pragma once

#include "util/error.h"

namespace primus::agent {

// Reads both variables; call first thing in main, before any other thread
// exists or the environment is read. An UnavailableError when the token was
// asked for and standard input ended (or held only a blank line) before it.
Status SetUpStdinSession();

// The token line of `fd` (without its line break); for the tests.
Result<std::string> ReadTokenLine(int fd);

}  // namespace primus::agent
