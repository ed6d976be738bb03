#include "agent/agent_runtime.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "agent/process_tree.h"
#include "util/log.h"

namespace primus::agent {

Result<std::unique_ptr<AgentRuntime>> AgentRuntime::Start(std::string_view token_entry) {
  auto poller = EventPoller::Create();
  if (!poller) return poller.error();
  auto timer = DeadlineTimer::Create();
  if (!timer) return timer.error();
  std::unique_ptr<AgentRuntime> runtime(new AgentRuntime(std::move(*poller), std::move(*timer)));
  runtime->agent_pid_ = getpid();

  auto signals = io::SignalChannel::Open();
  if (!signals) return signals.error();
  runtime->signals_ = std::move(*signals);
  if (Status status = runtime->poller_.Add(runtime->signals_->fd(), kSignalTag); !status) return status.error();
  if (Status status = runtime->poller_.Add(runtime->timer_.fd(), kTimerTag); !status) return status.error();

  runtime->dev_null_.Reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!runtime->dev_null_.valid()) {
    return EnvironmentError(std::string("cannot open /dev/null: ") + std::strerror(errno));
  }
  auto guard = OrphanGuard::Start(token_entry);
  if (!guard) return guard.error();
  runtime->guard_ = std::move(*guard);
  if (Status status = BecomeSubreaper(); !status) return status.error();
  runtime->subreaper_ = true;
  return runtime;
}

AgentRuntime::~AgentRuntime() {
  FlushConsoles();
  guard_.reset();  // disarm first: the workers are gone
  if (subreaper_) RestoreSubreaper();
}

int AgentRuntime::SleepUnlessSignalled(SteadyTime until) {
  while (SteadyClock::now() < until) {
    timer_.ArmAt(until);
    for (const epoll_event& event : poller_.Wait(-1)) {
      if (event.data.u64 == kTimerTag) {
        timer_.Acknowledge();
        continue;
      }
      if (event.data.u64 != kSignalTag) continue;
      while (auto info = signals_->Read()) {
        int signal = static_cast<int>(info->ssi_signo);
        if (signal == SIGCHLD) {
          ReapChildren([](pid_t, int) {});
        } else if (signal == SIGINT || signal == SIGTERM || signal == SIGHUP) {
          timer_.ArmAt(std::nullopt);
          return signal;
        }
      }
    }
  }
  timer_.ArmAt(std::nullopt);
  return 0;
}

}  // namespace primus::agent
