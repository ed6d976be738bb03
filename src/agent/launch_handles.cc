#include "agent/launch_handles.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "agent/metrics_server.h"
#include "agent/process_tree.h"
#include "agent/worker_env.h"
#include "util/console_writer.h"
#include "util/log.h"

namespace primus::agent {
namespace {

constexpr double kConsoleDrainS = 2;

}  // namespace

Result<std::unique_ptr<LaunchHandles>> LaunchHandles::Start(std::string_view token_entry) {
  auto poller = io::EventPoller::Create();
  if (!poller) return poller.error();
  auto timer = DeadlineTimer::Create();
  if (!timer) return timer.error();
  std::unique_ptr<LaunchHandles> handles(new LaunchHandles(std::move(*poller), std::move(*timer)));
  handles->agent_pid_ = getpid();

  // StackSignal() to the agent: take every worker's stacks now (on demand).
  auto signals = io::SignalChannel::Open({StackSignal()});
  if (!signals) return signals.error();
  handles->signals_ = std::move(*signals);
  if (Status status = handles->poller_.Add(handles->signals_->fd(), kSignalTag); !status) return status.error();
  if (Status status = handles->poller_.Add(handles->timer_.fd(), kTimerTag); !status) return status.error();

  handles->dev_null_.Reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!handles->dev_null_.valid()) {
    return UnavailableError(std::string("cannot open /dev/null: ") + std::strerror(errno));
  }
  auto guard = OrphanGuard::Start(token_entry);
  if (!guard) return guard.error();
  handles->guard_ = std::move(*guard);
  if (Status status = BecomeSubreaper(); !status) return status.error();
  handles->subreaper_ = true;
  // A console nobody reads must not stop the loop (heartbeats, the other
  // nodes): console output goes through the writer threads from here on.
  console_writer::Start();
  return handles;
}

LaunchHandles::~LaunchHandles() {
  FlushConsoles();
  // What the workers printed reaches the console before whoever comes next
  // writes; a console that stays paused is waited for at the end of main.
  console_writer::Drain(kConsoleDrainS);
  guard_.reset();  // disarm first: the workers are gone
  if (subreaper_) RestoreSubreaper();
}

void LaunchHandles::ServeMetrics(std::unique_ptr<MetricsServer> server) { metrics_server_ = std::move(server); }

void LaunchHandles::OnMetricsEvent(uint64_t tag) {
  if (metrics_server_) metrics_server_->OnEvent(tag);
}

int LaunchHandles::SleepUnlessSignalled(SteadyTime until) {
  while (SteadyClock::now() < until) {
    timer_.ArmAt(until);
    for (const epoll_event& event : poller_.Wait(-1)) {
      if (event.data.u64 == kTimerTag) {
        timer_.Acknowledge();
        continue;
      }
      if (event.data.u64 >= kFirstMetricsTag) {
        OnMetricsEvent(event.data.u64);
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
