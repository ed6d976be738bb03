#include "job/open_link.h"

#include <poll.h>
#include <signal.h>

#include <algorithm>

#include "job/job_coordinator.h"
#include "job/job_member.h"

namespace primus::job {

using agent::JobLink;
using agent::LaunchHandles;
using agent::Seconds;
using agent::SteadyClock;
using agent::SteadyTime;
using agent::kFirstLinkTag;
using agent::kFirstMetricsTag;
using agent::kSignalTag;
using agent::kStaticRendezvous;
using agent::kTimerTag;


Result<std::unique_ptr<JobLink>> OpenJobLink(const JobLinkSettings& settings, LaunchHandles& handles) {
  bool assigned = settings.self.rendezvous != kStaticRendezvous;
  auto coordinate = [&](bool* port_in_use) -> Result<std::unique_ptr<JobLink>> {
    auto coordinator = JobCoordinator::Open(settings, handles, port_in_use);
    if (!coordinator) return coordinator.error();
    return std::unique_ptr<JobLink>(std::move(*coordinator));
  };
  auto join = [&]() -> Result<std::unique_ptr<JobLink>> {
    JobLinkSettings member = settings;
    if (assigned) member.self.node_rank = -1;  // the coordinator hands it out
    return std::unique_ptr<JobLink>(std::make_unique<JobMember>(member, handles));
  };
  if (settings.coordinates) return *settings.coordinates ? coordinate(nullptr) : join();
  if (!assigned) return settings.self.node_rank == 0 ? coordinate(nullptr) : join();
  if (io::IsLocalAddress(settings.master_addr)) {
    // The endpoint is here: coordinate, unless another agent already does.
    bool in_use = false;
    auto coordinator = coordinate(&in_use);
    if (coordinator || !in_use) return coordinator;
  }
  return join();
}

bool CoordinatorProvesItself(const std::string& host, int port, const std::string& token, double timeout_s) {
  auto fd = io::ConnectToNode(host, port, std::min(timeout_s, 2.0));
  if (!fd) return false;
  io::MessageConnection connection(std::move(*fd), host + ":" + std::to_string(port));
  NodeIdentity probe;
  probe.node_rank = -1;
  probe.host = "fence-check";
  std::string nonce = NewNonce();
  Json hello = HelloMessage(probe, nonce);
  hello["probe"] = true;
  if (!connection.Send(hello)) return false;
  SteadyTime until = SteadyClock::now() + Seconds(timeout_s);
  std::vector<Json> messages;
  while (messages.empty() && SteadyClock::now() < until) {
    pollfd waiter{connection.fd(), POLLIN, 0};
    if (::poll(&waiter, 1, 50) != 1) continue;
    if (connection.Receive(&messages) == io::MessageConnection::ReadResult::kClosed) break;
  }
  std::string coordinator_nonce;
  return !messages.empty() && !CheckChallenge(messages.front(), token, nonce, &coordinator_nonce);
}

int PumpLinkEvents(LaunchHandles& handles, JobLink& link, std::optional<SteadyTime> until) {
  std::optional<SteadyTime> wake = link.NextDeadline();
  if (until && (!wake || *until < *wake)) wake = until;
  handles.timer().ArmAt(wake);
  int terminating = 0;
  for (const epoll_event& event : handles.poller().Wait(-1)) {
    uint64_t tag = event.data.u64;
    if (tag == kSignalTag) {
      while (auto info = handles.signals().Read()) {
        int signal = static_cast<int>(info->ssi_signo);
        if (signal == SIGCHLD) {
          handles.ReapChildren([](pid_t, int) {});
        } else if (signal == SIGINT || signal == SIGTERM || signal == SIGHUP) {
          terminating = signal;
        }
      }
    } else if (tag == kTimerTag) {
      handles.timer().Acknowledge();
    } else if (tag >= kFirstMetricsTag) {
      handles.OnMetricsEvent(tag);
    } else if (tag >= kFirstLinkTag) {
      link.OnEvent(tag);
    }
  }
  SteadyTime now = SteadyClock::now();
  std::optional<SteadyTime> due = link.NextDeadline();
  if (due && *due <= now) link.OnDeadline(now);
  handles.timer().ArmAt(std::nullopt);
  return terminating;
}

}  // namespace primus::job
