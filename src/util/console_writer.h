// The console (stdout and stderr) as a launch writes to it: never able to
// stop the caller. A paused console (`| less` not scrolled, Ctrl-S, tmux copy
// mode, a slow ssh link) makes write(2) block; in the agent's event loop that
// would stop heartbeats and the other nodes would declare this one lost.
//
// While started, Write() hands whole lines to one writer thread per stream
// that a reader can pause (a pipe, a socket, a terminal; a regular file
// cannot, and keeps plain blocking writes) through a bounded buffer and
// returns at once; the thread does the blocking writes (lifting a progress
// line around them). When a stream's buffer is
// full its new lines are dropped, whole, with one warning when dropping
// starts and a count when the console takes lines again; the log files keep
// everything. A stream that breaks (EPIPE: `| head` exited) stops with one
// warning. When not started, Write() writes directly, blocking as any
// program does (a broken stream stops the same way).
//
// The agent starts it for a launch (LaunchHandles); Drain() waits for what
// is queued; Stop() (at the end of main) drains without a limit and joins.
#pragma once

#include <cstddef>
#include <string_view>

namespace primus::console_writer {

inline constexpr size_t kDefaultLimitBytes = 8 << 20;

// Starts the writer threads (idempotent); `limit_bytes` per stream.
void Start(size_t limit_bytes = kDefaultLimitBytes);

// `lines` (whole lines) for fd 1 or 2, through the writer threads once
// started; written directly when not started, and always for another
// descriptor. False when the console broke (it takes nothing more).
bool Write(int fd, std::string_view lines);

// Waits up to `timeout_s` until everything queued is written; false when
// the console did not take it all in time (it stays queued).
bool Drain(double timeout_s);

// Writes what is queued, however long the console takes, and stops the
// threads; Write() is direct again.
void Stop();

// Lines dropped so far because a console was not being read (for tests).
size_t DroppedLines(int fd);

}  // namespace primus::console_writer
