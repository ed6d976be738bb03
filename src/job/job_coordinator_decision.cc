// Node 0 at the end of a generation (job_coordinator.h): the exit barrier,
// the root cause across nodes, the banner, and the decision every node
// follows: restart together (after a backoff) or exit with one code.
#include "job/job_coordinator.h"

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "agent/failure_report.h"
#include "io/signal_channel.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus::job {

using agent::BannerInput;
using agent::ChooseRootCause;
using agent::FailedBefore;
using agent::FormatFailureBanner;
using agent::JobDecision;
using agent::NodeOutcome;
using agent::Seconds;
using agent::SteadyClock;
using agent::SteadyTime;
using agent::WorkerFailure;

JobDecision JobCoordinator::EndGeneration(const NodeOutcome& outcome) {
  peers_[0].outcome = outcome;
  if (outcome.agent_signal != 0 && agent_signal_ == 0) agent_signal_ = outcome.agent_signal;
  auto unreported = [this] {
    std::vector<int> slots;
    for (size_t slot = 1; slot < peers_.size(); ++slot) {
      const Peer& peer = peers_[slot];
      if (peer.active && !peer.outcome && peer.lost.empty()) slots.push_back(static_cast<int>(slot));
    }
    return slots;
  };
  // A stopping node may need its whole SIGTERM grace before it can report.
  const SteadyTime barrier_start = SteadyClock::now();
  auto barrier_end = [this, start = barrier_start] {
    double seconds = settings_.exit_barrier_timeout_s + (stop_reason_ ? settings_.term_timeout_s : 0);
    return start + Seconds(seconds);
  };
  while (!unreported().empty() && SteadyClock::now() < barrier_end()) {
    int signal = PumpLinkEvents(handles_, *this, barrier_end());
    if (signal != 0) {
      if (agent_signal_ == 0) agent_signal_ = signal;
      StopEveryone("node 0's agent received " + io::SignalName(signal));
    }
  }
  std::vector<int> never_reported = unreported();
  if (!never_reported.empty()) {
    std::vector<std::string> names;
    for (int slot : never_reported) names.push_back(peers_[static_cast<size_t>(slot)].node.Describe());
    log::Error("exit barrier: {} never reported the end of generation {} (waited {:.0f} s)", primus::Join(names, ", "),
               generation_, std::chrono::duration<double>(SteadyClock::now() - barrier_start).count());
    if (AssignsRanks()) {
      // An elastic job goes on without them, as without any lost node.
      for (int slot : never_reported) {
        Peer& peer = peers_[static_cast<size_t>(slot)];
        if (peer.connection) handles_.poller().Remove(peer.connection->fd());
        peer.connection.reset();
        peer.lost = "never reported the end of generation " + std::to_string(generation_);
      }
      never_reported.clear();
    }
  }
  JobDecision decision = Decide(never_reported);
  if (decision.root_cause && !decision.membership_changed) {
    std::optional<analyze::HangVerdict> hang = JudgeJobHang();
    PrintBanner(decision, hang);
    if (settings_.exclude_bad_nodes) ExcludeBadNode(decision, hang);
  }
  Broadcast(DecisionToJson(decision, generation_));
  if (!decision.restart) {
    ReleaseStandbys(decision.reason);
    return decision;
  }

  double backoff = decision.membership_changed
                       ? 0
                       : std::min(settings_.restart_backoff_s * std::pow(2.0, std::min(restarts_ - 1, 30)),
                                  settings_.max_restart_backoff_s);
  if (decision.membership_changed) {
    log::Warn("restarting every node's workers at once, on {} node{} ({})", decision.next_nnodes,
              decision.next_nnodes == 1 ? "" : "s", decision.reason);
  } else {
    log::Warn("restarting every node's workers in {:g} s (restart {} of {})", backoff, restarts_,
              settings_.max_restarts);
  }
  if (!SleepForBackoff(backoff) || (AssignsRanks() && LiveNodes() < minimum())) {
    std::string why = AssignsRanks() && LiveNodes() < minimum() ? TooFewNodes()
                                                                : stop_reason_.value_or("the restart was called off");
    return CallOffRestart(decision, agent_signal_ != 0 ? 128 + agent_signal_ : 1, why, generation_);
  }
  ++generation_;
  stop_reason_.reset();
  stop_takes_stacks_ = false;
  reported_failures_.clear();
  scale_up_.clear();
  for (Peer& peer : peers_) peer.outcome.reset();
  if (Status status = StartGeneration(); !status) {
    return CallOffRestart(decision, static_cast<int>(status.error().code), status.error().message, generation_ - 1);
  }
  return decision;
}

JobDecision JobCoordinator::CallOffRestart(JobDecision decided, int exit_code, const std::string& why,
                                           int generation) {
  decided.restart = false;
  decided.exit_code = exit_code;
  decided.reason = why;
  log::Error("not restarting: {}", why);
  Broadcast(DecisionToJson(decided, generation));
  ReleaseStandbys(why);
  return decided;
}

void JobCoordinator::ReleaseStandbys(const std::string& why) {
  // They never started: the job is over for them too.
  for (Peer& peer : peers_) {
    if (!peer.active && peer.connection) Send(peer, Json{{"type", "refuse"}, {"reason", "the job ended: " + why}});
  }
}

std::string JobCoordinator::TooFewNodes() const {
  return fmt::format("only {} node{} left, fewer than the minimum of {}", LiveNodes(), LiveNodes() == 1 ? "" : "s",
                     minimum());
}

bool JobCoordinator::SleepForBackoff(double seconds) {
  // stop_reason_ was set by the failure; a new one during the backoff is a
  // lost node or a signal, and calls the restart off (in an elastic job only
  // a signal does: the next generation starts with the nodes there are).
  std::string failure_reason = stop_reason_.value_or("");
  stop_reason_.reset();
  stop_takes_stacks_ = false;
  SteadyTime until = SteadyClock::now() + Seconds(seconds);
  while (SteadyClock::now() < until) {
    int signal = PumpLinkEvents(handles_, *this, until);
    if (signal != 0) {
      if (agent_signal_ == 0) agent_signal_ = signal;
      stop_reason_ = "node 0's agent received " + io::SignalName(signal);
    }
    if (agent_signal_ != 0) return false;
    if (stop_reason_ && !AssignsRanks()) return false;
    if (AssignsRanks()) stop_reason_.reset();
  }
  return true;
}

JobDecision JobCoordinator::Decide(const std::vector<int>& never_reported) {
  std::vector<WorkerFailure> failures;
  bool complete_lists = true;
  for (const Peer& peer : peers_) {
    if (!peer.active) continue;
    if (!peer.outcome) {
      complete_lists = false;
      continue;
    }
    if (peer.outcome->root_cause) failures.push_back(*peer.outcome->root_cause);
    for (const WorkerFailure& other : peer.outcome->other_failures) failures.push_back(other);
  }
  // A node that never reported may still have told us about its failure.
  if (!complete_lists) {
    for (const WorkerFailure& reported : reported_failures_) {
      bool known = std::any_of(failures.begin(), failures.end(), [&](const WorkerFailure& f) {
        return f.host == reported.host && f.rank == reported.rank;
      });
      if (!known) failures.push_back(reported);
    }
  }
  std::vector<std::string> lost;
  for (size_t slot = 1; slot < peers_.size(); ++slot) {
    const Peer& peer = peers_[slot];
    if (peer.active && !peer.lost.empty() && peer.lost != "left after reporting") {
      lost.push_back(peer.node.Describe() + " (" + peer.lost + ")");
    }
  }

  JobDecision decision;
  decision.restarts = restarts_;
  if (!failures.empty()) {
    size_t root = ChooseRootCause(failures);
    decision.root_cause = failures[root];
    failures.erase(failures.begin() + static_cast<long>(root));
    std::stable_sort(failures.begin(), failures.end(), FailedBefore);
    decision.other_failures = std::move(failures);
  }
  bool clean = !decision.root_cause && lost.empty() && never_reported.empty() && agent_signal_ == 0;
  if (clean) {
    std::vector<std::string> stuck;
    for (const Peer& peer : peers_) {
      if (peer.active && peer.outcome && !peer.outcome->stuck_at_exit.empty()) {
        std::vector<int> ranks = peer.outcome->stuck_at_exit;
        stuck.push_back(fmt::format("rank{} {} on {}", ranks.size() == 1 ? "" : "s", JoinNumbers(ranks, ", "),
                                    peer.node.Describe()));
      }
    }
    if (!stuck.empty()) {
      decision.exit_code = static_cast<int>(ExitCode::kStuckAtExit);
      decision.reason = "the work finished, but " + primus::Join(stuck, ", ") +
                        " stayed in teardown past the exit grace and had to be stopped";
      log::Error("generation {}: {} (exit code {})", generation_, decision.reason, decision.exit_code);
      return decision;
    }
    bool all_zero = std::all_of(peers_.begin(), peers_.end(), [](const Peer& peer) {
      return !peer.active || (peer.outcome && peer.outcome->exit_code == 0);
    });
    bool stopped = std::any_of(peers_.begin(), peers_.end(), [](const Peer& peer) {
      return peer.active && peer.outcome && peer.outcome->stopped_by_job;
    });
    if (stopped && !scale_up_.empty() && agent_signal_ == 0 && !fatal_) {
      // The nodes were stopped for the one that joined (a worker that leaves
      // on SIGTERM with 0 has not finished its work).
      decision.restart = true;
      decision.membership_changed = true;
      decision.next_nnodes = std::min(LiveNodes(), maximum());
      decision.reason = scale_up_ + " joined";
      ++membership_changes_;
      return decision;
    }
    decision.exit_code = all_zero ? 0 : 1;
    decision.reason = all_zero ? "every node finished" : "a node ended without a worker failure";
    if (all_zero) log::Info("every node's workers finished (generation {})", generation_);
    return decision;
  }
  if (agent_signal_ != 0) {
    decision.exit_code = 128 + agent_signal_;
    decision.reason = stop_reason_.value_or("an agent received " + io::SignalName(agent_signal_));
  } else if (decision.root_cause) {
    decision.exit_code = decision.root_cause->exit_code != 0 ? decision.root_cause->exit_code : 1;
    decision.reason = stop_reason_.value_or("a worker failed");
  } else {
    decision.exit_code = 1;
    decision.reason = !lost.empty() ? "lost " + primus::Join(lost, ", ") : "a node never reported its end";
  }
  if (AssignsRanks() && !lost.empty() && agent_signal_ == 0 && !fatal_) {
    // Elastic: the survivors go on together, renumbered, while enough remain.
    // Their workers' failures followed from the loss: kept, but not the cause.
    if (decision.root_cause) {
      decision.other_failures.insert(decision.other_failures.begin(), *decision.root_cause);
      decision.root_cause.reset();
    }
    if (LiveNodes() >= minimum()) {
      decision.restart = true;
      decision.membership_changed = true;
      decision.next_nnodes = std::min(LiveNodes(), maximum());
      decision.reason = "lost " + primus::Join(lost, ", ");
      ++membership_changes_;
      log::Warn("{}; {} node{} left (minimum {})", decision.reason, LiveNodes(), LiveNodes() == 1 ? "" : "s",
                minimum());
      return decision;
    }
    decision.exit_code = 1;
    decision.reason = "lost " + primus::Join(lost, ", ") + "; " + TooFewNodes();
    log::Error("the job ends: {}", decision.reason);
    return decision;
  }
  bool restartable = decision.root_cause && lost.empty() && never_reported.empty() && agent_signal_ == 0 && !fatal_;
  if (restartable && restarts_ < settings_.max_restarts) {
    decision.restart = true;
    decision.restarts = ++restarts_;
  } else if (restartable && settings_.max_restarts > 0) {
    log::Error("giving up after {} restart{} of the whole job", restarts_, restarts_ == 1 ? "" : "s");
  } else if (!lost.empty()) {
    log::Error("the job ends: lost {}", primus::Join(lost, ", "));
  }
  return decision;
}

std::optional<analyze::HangVerdict> JobCoordinator::JudgeJobHang() const {
  std::vector<analyze::RankPlace> places;
  for (const Peer& peer : peers_) {
    if (peer.outcome) places.insert(places.end(), peer.outcome->hang_places.begin(), peer.outcome->hang_places.end());
  }
  if (places.empty()) return std::nullopt;
  return analyze::JudgePlaces(std::move(places));
}

void JobCoordinator::ExcludeBadNode(JobDecision& decision, const std::optional<analyze::HangVerdict>& hang) {
  if (agent_signal_ != 0) return;  // stopped by a person, not by a node
  // The guilty host: the hang's culprits, all on one host; else the root
  // cause's host when the previous generation failed there too.
  std::string host, why;
  if (hang) {
    std::set<std::string> hosts;
    for (int rank : hang->culprits) {
      for (const analyze::RankPlace& place : hang->places) {
        if (place.rank == rank) hosts.insert(place.host);
      }
    }
    if (hosts.size() == 1 && !hosts.begin()->empty()) {
      host = *hosts.begin();
      why = "the hang's culprit: " + hang->summary;
    }
  }
  const WorkerFailure& cause = *decision.root_cause;
  if (host.empty() && !cause.host.empty() && cause.host == last_failed_host_) {
    host = cause.host;
    why = fmt::format("it failed again (generation {}: rank {} with {})", generation_, cause.rank,
                      cause.hung ? "a hang" : DescribeEnding(cause.exit_code, cause.signal));
  }
  last_failed_host_ = cause.host;
  if (host.empty()) return;
  std::vector<size_t> on_host;
  for (size_t slot = 0; slot < peers_.size(); ++slot) {
    if (peers_[slot].active && peers_[slot].node.host == host) on_host.push_back(slot);
  }
  if (on_host.size() != 1) {
    log::Warn("{} is found bad ({}), but {} nodes of the job run there: none is left out", host, why, on_host.size());
    return;
  }
  Peer& peer = peers_[on_host.front()];
  bool shrink = AssignsRanks() && on_host.front() != 0 && decision.restart && LiveNodes() - 1 >= minimum();
  if (!shrink && settings_.spare_nodes <= 0) {
    log::Warn("{} is found bad ({}); it stays: the job cannot go on smaller and its launcher has no spare node",
              peer.node.Describe(), why);
    return;
  }
  decision.excluded_hosts = {host};
  decision.exclusion_reason = why;
  excluded_hosts_[host] = why;
  if (shrink) {
    peer.lost = "excluded: " + why;
    decision.membership_changed = true;
    decision.next_nnodes = std::min(LiveNodes(), maximum());
    decision.reason = "excluded " + peer.node.Describe() + ": " + why;
    ++membership_changes_;
    log::Error("excluding {} from the job ({}); going on with {} node{}", peer.node.Describe(), why,
               decision.next_nnodes, decision.next_nnodes == 1 ? "" : "s");
  } else {
    decision.restart = false;
    decision.reason = "excluded " + peer.node.Describe() + ": " + why;
    log::Error("excluding {} from the job ({}); the job ends here for its launcher to start it again on a spare node "
               "({} spare)", peer.node.Describe(), why, settings_.spare_nodes);
  }
}

void JobCoordinator::PrintBanner(JobDecision& decision, const std::optional<analyze::HangVerdict>& hang) const {
  BannerInput banner;
  if (hang) {
    const analyze::HangVerdict& verdict = *hang;
    if (!verdict.culprits.empty()) {
      int culprit = verdict.culprits.front();
      const analyze::RankPlace* place = nullptr;
      for (const analyze::RankPlace& candidate : verdict.places) {
        if (candidate.rank == culprit) place = &candidate;
      }
      agent::PreferRankAsRootCause(culprit, place, &decision.root_cause, &decision.other_failures);
    }
    banner.hang_verdict = verdict.summary;
    banner.hang_details = verdict.details;
    decision.hang_verdict = analyze::FormatVerdict(verdict);
    if (!verdict.culprits.empty()) {
      log::Error("hang: {} (from the {} of every rank of the job's {} nodes)", verdict.summary, verdict.evidence,
                 layout_.nnodes);
    }
  }
  banner.root_cause = *decision.root_cause;
  banner.other_failures = decision.other_failures;
  log::Error("job failed (generation {} of {} nodes): root cause rank {} on host {}\n{}", generation_,
             layout_.nnodes, decision.root_cause->rank, decision.root_cause->host,
             FormatFailureBanner(banner));
}

}  // namespace primus::job
