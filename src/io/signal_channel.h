// Turns the signals the agent acts on into readable events on one file
// descriptor (signalfd), so the supervisor's epoll loop handles them in order
// with worker output and deadlines: no handler runs at a random point, no
// self-pipe, no lost SIGCHLD (pending signals stay queued while blocked).
//
// Open() blocks SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 (and
// SIGPIPE, so a closed console becomes EPIPE instead of killing the agent) in
// the calling thread; the destructor restores the mask and dispositions it
// found. Channels nest (a task holds one while the agent opens its own): a
// signal goes to whichever channel is read first, the inner one while it
// runs. Signals that were ignored at start (nohup's SIGHUP, a background
// job's SIGINT) stay ignored: the user asked for that. Call from the thread
// that runs the agent, in a process whose other threads block these signals.
#pragma once

#include <signal.h>
#include <sys/signalfd.h>

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>

#include "io/unique_fd.h"
#include "util/error.h"

namespace primus::io {

class SignalChannel {
 public:
  // `also`: more signals to read as events while the channel is open (the
  // Slurm step runner forwards SIGQUIT to srun).
  static Result<std::unique_ptr<SignalChannel>> Open(std::initializer_list<int> also = {});
  ~SignalChannel();
  SignalChannel(const SignalChannel&) = delete;
  SignalChannel& operator=(const SignalChannel&) = delete;

  int fd() const { return fd_.get(); }
  // The next queued signal, or nullopt when none is pending.
  std::optional<signalfd_siginfo> Read();
  // Reads everything queued (a child's SIGCHLD too); the first SIGINT,
  // SIGTERM or SIGHUP among it (a request to stop), or 0.
  int ReadStopSignal();

  // The mask the thread had before any channel was open (channels nest: a
  // task's channel may hold the agent's): children get it back before exec.
  const sigset_t& original_mask() const { return child_mask_; }
  // True when `signal` was SIG_IGN at start and is therefore left alone.
  bool WasIgnored(int signal) const;

 private:
  SignalChannel() = default;

  UniqueFd fd_;
  sigset_t original_mask_{};  // what this channel found, restored when it closes
  sigset_t child_mask_{};
  sigset_t handled_{};
  struct sigaction original_sigchld_ {};
  bool ignored_[NSIG] = {};
};

// "SIGTERM", "SIGSEGV", ... ("signal 42" for unnamed ones).
std::string SignalName(int signal);

// A helper thread calls primus::BlockAllSignalsInThisThread() first
// (util/thread_signals.h), so that the channel's thread gets every signal.
}  // namespace primus::io
