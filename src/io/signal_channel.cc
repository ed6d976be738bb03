#include "io/signal_channel.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <cstring>
#include <iterator>
#include <vector>

namespace primus::io {
namespace {

constexpr int kHandledSignals[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};

// Channels open in this thread, and the mask the outermost found: what
// children get, whichever channel they are started under.
thread_local int g_open_channels = 0;
thread_local sigset_t g_outermost_mask;

}  // namespace

Result<std::unique_ptr<SignalChannel>> SignalChannel::Open(std::initializer_list<int> also) {
  std::unique_ptr<SignalChannel> channel(new SignalChannel());
  sigemptyset(&channel->handled_);
  std::vector<int> signals(std::begin(kHandledSignals), std::end(kHandledSignals));
  signals.insert(signals.end(), also.begin(), also.end());
  for (int signal : signals) {
    struct sigaction current {};
    sigaction(signal, nullptr, &current);
    if (signal != SIGCHLD && current.sa_handler == SIG_IGN) {
      channel->ignored_[signal] = true;
      continue;
    }
    sigaddset(&channel->handled_, signal);
  }
  // A SIGCHLD set to SIG_IGN makes the kernel reap children itself, and the
  // agent would never see an exit status: force the default while we run.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(SIGCHLD, &default_action, &channel->original_sigchld_);

  sigset_t blocked = channel->handled_;
  sigaddset(&blocked, SIGPIPE);
  if (pthread_sigmask(SIG_BLOCK, &blocked, &channel->original_mask_) != 0) {
    sigaction(SIGCHLD, &channel->original_sigchld_, nullptr);
    return UnavailableError("cannot block signals for the agent");
  }
  int fd = signalfd(-1, &channel->handled_, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd < 0) {
    int saved = errno;
    pthread_sigmask(SIG_SETMASK, &channel->original_mask_, nullptr);
    sigaction(SIGCHLD, &channel->original_sigchld_, nullptr);
    return UnavailableError(std::string("cannot create a signalfd: ") + std::strerror(saved));
  }
  channel->fd_.Reset(fd);
  if (g_open_channels++ == 0) g_outermost_mask = channel->original_mask_;
  channel->child_mask_ = g_outermost_mask;
  return channel;
}

SignalChannel::~SignalChannel() {
  // A SIGPIPE raised by a console write is pending while blocked; consume it
  // so that restoring the mask does not kill the caller.
  if (!sigismember(&original_mask_, SIGPIPE)) {
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    timespec zero{0, 0};
    while (sigtimedwait(&pipe_only, nullptr, &zero) == SIGPIPE) {
    }
  }
  fd_.Reset();
  pthread_sigmask(SIG_SETMASK, &original_mask_, nullptr);
  sigaction(SIGCHLD, &original_sigchld_, nullptr);
  --g_open_channels;
}

std::optional<signalfd_siginfo> SignalChannel::Read() {
  signalfd_siginfo info;
  while (true) {
    ssize_t n = ::read(fd_.get(), &info, sizeof(info));
    if (n == static_cast<ssize_t>(sizeof(info))) return info;
    if (n < 0 && errno == EINTR) continue;
    return std::nullopt;
  }
}

int SignalChannel::ReadStopSignal() {
  int stop = 0;
  while (std::optional<signalfd_siginfo> info = Read()) {
    int signal = static_cast<int>(info->ssi_signo);
    if (stop == 0 && (signal == SIGINT || signal == SIGTERM || signal == SIGHUP)) stop = signal;
  }
  return stop;
}

bool SignalChannel::WasIgnored(int signal) const {
  return signal > 0 && signal < NSIG && ignored_[signal];
}

std::string SignalName(int signal) {
  const char* abbreviation = sigabbrev_np(signal);
  if (abbreviation == nullptr) return "signal " + std::to_string(signal);
  return std::string("SIG") + abbreviation;
}

}  // namespace primus::io
