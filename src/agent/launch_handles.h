// What lives for a whole launch, across restarts: the signal channel, the
// epoll set with the signalfd and the deadline timer in it, the orphan guard,
// the console (stdout, and stderr for workers' stderr lines when they go
// there) and /dev/null for the workers' stdin. RunWorkers builds it once;
// each attempt's Supervisor borrows it.
#pragma once

#include <sys/types.h>

#include <memory>

#include "agent/console_sink.h"
#include "agent/deadline_timer.h"
#include "io/event_poller.h"
#include "agent/metrics_server.h"
#include "agent/orphan_guard.h"
#include "io/signal_channel.h"
#include "io/unique_fd.h"
#include "util/error.h"

namespace primus::agent {

// Tags of the fds in the epoll set; worker streams use kFirstStreamTag + n,
// worker pidfds kFirstPidTag + worker index, the job link kFirstLinkTag and up.
inline constexpr uint64_t kSignalTag = 1;
inline constexpr uint64_t kTimerTag = 2;
inline constexpr uint64_t kFirstStreamTag = 16;
inline constexpr uint64_t kFirstPidTag = uint64_t{1} << 32;
// The job link's sockets (job_link.h): the listening socket and one per node.
inline constexpr uint64_t kFirstLinkTag = uint64_t{1} << 48;
// The metrics server's fds (metrics_server.h): every wait of the launch hands
// these to LaunchHandles::OnMetricsEvent, so the metrics port answers while the
// workers run, between restarts and while the nodes join.
inline constexpr uint64_t kFirstMetricsTag = uint64_t{1} << 56;

class LaunchHandles {
 public:
  // Blocks the signals, creates the epoll set and timer, starts the orphan
  // guard for `token_entry`, and makes this process a child subreaper.
  static Result<std::unique_ptr<LaunchHandles>> Start(std::string_view token_entry);
  ~LaunchHandles();

  io::SignalChannel& signals() { return *signals_; }
  io::EventPoller& poller() { return poller_; }
  DeadlineTimer& timer() { return timer_; }
  OrphanGuard& guard() { return *guard_; }
  ConsoleSink& console() { return console_; }
  ConsoleSink& console_errors() { return console_errors_; }  // the agent's stderr (LaunchSpec::stderr_to_stderr)
  void FlushConsoles() {
    console_.Flush();
    console_errors_.Flush();
  }
  void FlushConsolesIfLarge() {
    console_.FlushIfLarge();
    console_errors_.FlushIfLarge();
  }
  int dev_null() const { return dev_null_.get(); }

  // The launch's metrics server (--metrics-port), registered in poller(); it
  // lives until the runtime ends. Loops pass tags >= kFirstMetricsTag to
  // OnMetricsEvent.
  void ServeMetrics(std::unique_ptr<MetricsServer> server);
  MetricsServer* metrics_server() { return metrics_server_.get(); }
  void OnMetricsEvent(uint64_t tag);
  pid_t agent_pid() const { return agent_pid_; }

  // Reaps every exited child without blocking; calls `on_exit(pid, status)`
  // for each (strays included; the guard is noted, not reported).
  template <typename Callback>
  void ReapChildren(Callback&& on_exit);

  // Sleeps until `until` (the restart backoff) while still handling signals:
  // returns the terminating signal (SIGINT/SIGTERM/SIGHUP) that cut it short,
  // or 0. SIGUSR1/SIGUSR2 have no worker to go to and are dropped.
  int SleepUnlessSignalled(SteadyTime until);

 private:
  LaunchHandles(io::EventPoller poller, DeadlineTimer timer)
      : poller_(std::move(poller)), timer_(std::move(timer)), console_(1), console_errors_(2) {}

  std::unique_ptr<io::SignalChannel> signals_;
  io::EventPoller poller_;
  DeadlineTimer timer_;
  std::unique_ptr<OrphanGuard> guard_;
  ConsoleSink console_;
  ConsoleSink console_errors_;
  io::UniqueFd dev_null_;
  pid_t agent_pid_ = 0;
  bool subreaper_ = false;
  std::unique_ptr<MetricsServer> metrics_server_;  // last: it leaves the poller before the poller closes
};

}  // namespace primus::agent

#include <errno.h>
#include <sys/wait.h>

namespace primus::agent {

template <typename Callback>
void LaunchHandles::ReapChildren(Callback&& on_exit) {
  while (true) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      if (pid == guard_->pid()) {
        guard_->MarkExited();
        continue;
      }
      on_exit(pid, status);
      continue;
    }
    if (pid < 0 && errno == EINTR) continue;
    return;  // 0: children still running; -1/ECHILD: none left
  }
}

}  // namespace primus::agent
