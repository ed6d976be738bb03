#include "job/job_member.h"

#include <signal.h>

#include <algorithm>
#include <functional>

#include "agent/failure_report.h"
#include "io/signal_channel.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus::job {

using agent::GenerationLayout;
using agent::JobDecision;
using agent::LaunchHandles;
using agent::NodeOutcome;
using agent::Seconds;
using agent::SteadyClock;
using agent::SteadyTime;
using agent::WorkerFailure;
using agent::kFirstLinkTag;
using agent::kJobTokenVariable;
using agent::kStaticRendezvous;

namespace {

constexpr uint64_t kConnectionTag = kFirstLinkTag;
constexpr double kConnectAttemptS = 2;
constexpr double kMaxRetryDelayS = 1;
constexpr double kWaitingNoticeS = 10;

}  // namespace

JobMember::JobMember(const JobLinkSettings& settings, LaunchHandles& handles)
    : settings_(settings), handles_(handles), generation_(settings.restarts_before) {
  layout_.node_rank = settings.self.node_rank;
  layout_.nnodes = settings.self.nnodes;
  layout_.master_addr = settings.master_addr;
  layout_.master_port = settings.master_port;
  layout_.run_id = settings.run_id;
  next_layout_ = layout_;
}

JobMember::~JobMember() {
  if (connection_) handles_.poller().Remove(connection_->fd());
}

std::string JobMember::Coordinator() const {
  return (settings_.self.rendezvous == kStaticRendezvous ? "node 0 at " : "the coordinator at ") +
         settings_.master_addr + ":" + std::to_string(settings_.control_port);
}

Status JobMember::Connect(SteadyTime deadline, int* signal) {
  double delay = 0.005;  // node 0 usually listens within milliseconds; back off from there
  std::string last_error;
  SteadyTime next_notice = SteadyClock::now() + Seconds(kWaitingNoticeS);
  while (true) {
    auto fd = io::ConnectToNode(settings_.master_addr, settings_.control_port, kConnectAttemptS);
    if (fd) {
      connection_ = std::make_unique<io::MessageConnection>(std::move(*fd), settings_.master_addr + ":" +
                                                                            std::to_string(settings_.control_port));
      if (Status status = handles_.poller().Add(connection_->fd(), kConnectionTag); !status) return status;
      return Status::Ok();
    }
    last_error = fd.error().message;
    SteadyTime now = SteadyClock::now();
    if (now >= deadline) break;
    if (now >= next_notice) {
      log::Warn("still waiting for {} ({}); giving up in {:.0f} s", Coordinator(), last_error,
                std::chrono::duration<double>(deadline - now).count());
      next_notice = now + Seconds(kWaitingNoticeS);
    }
    SteadyTime retry = std::min(deadline, now + Seconds(delay));
    delay = std::min(delay * 2, kMaxRetryDelayS);
    *signal = handles_.SleepUnlessSignalled(retry);
    if (*signal != 0) return Status::Ok();
  }
  return UnavailableError(
      fmt::format("cannot reach {} within {:g} s: {}", Coordinator(), settings_.join_timeout_s, last_error),
      fmt::format("check that node 0 runs primus-cli for this job, that {} is node 0's address as this node sees "
                  "it, and that TCP port {} is open between the nodes (set it with --control-port)",
                  settings_.master_addr, settings_.control_port));
}

Result<int> JobMember::Join() {
  SteadyTime deadline = SteadyClock::now() + Seconds(settings_.join_timeout_s);
  int signal = 0;
  if (settings_.self.node_rank >= 0) {
    log::Info("node {} of {}: joining {}", settings_.self.node_rank, settings_.self.nnodes, Coordinator());
  } else {
    log::Info("joining {} (node rank to be assigned)", Coordinator());
  }
  if (Status status = Connect(deadline, &signal); !status) return status.error();
  if (signal != 0) return signal;
  own_nonce_ = NewNonce();
  hello_ = HelloMessage(settings_.self, own_nonce_);
  Send(hello_);
  // Once welcomed, a node waits for its start as long as the coordinator is
  // alive (a standby, or a node waiting for the others): the coordinator
  // owns the join timeout, and its heartbeats say it is alive.
  bool said_standby = false;
  while (!refused_ && !lost_ && !impostor_ && !start_generation_ && (welcomed_ || SteadyClock::now() < deadline)) {
    if (standby_ && !said_standby) {
      log::Info("the job runs at its maximum node count: waiting as a standby until a node leaves");
      said_standby = true;
    }
    signal = PumpLinkEvents(handles_, *this, welcomed_ ? std::nullopt : std::optional<SteadyTime>(deadline));
    if (signal != 0) return signal;
  }
  if (impostor_) {
    return UnavailableError(
        "what answers at " + Coordinator() + " is not this job's node 0: " + *impostor_,
        std::string("give every node the same ") + kJobTokenVariable +
            "; if they have it, another program (or another user's) holds that port: choose another "
            "--control-port");
  }
  if (refused_) {
    bool token = refused_->find("token") != std::string::npos;
    return UnavailableError(Coordinator() + " refused this node: " + *refused_,
                            token ? std::string("give every node the same ") + kJobTokenVariable +
                                        " (the launcher sets it for Slurm and Kubernetes jobs)"
                                  : "start every node with the same primus-cli, --nnodes and --nproc-per-node, "
                                    "and its own --node-rank");
  }
  // What answered said why, without proving it is node 0 (an older primus-cli does not prove itself).
  std::string said = unproven_refusal_ ? " (what answers there said, without proving itself: " +
                                             *unproven_refusal_ + ")"
                                       : "";
  if (lost_) {
    return UnavailableError(
        "the control channel to " + Coordinator() + " ended before the job started: " + *lost_ + said,
        said.empty() ? "node 0's log says why (another node may have been refused, or it timed out)"
                     : "run the same primus-cli, with the same " + std::string(kJobTokenVariable) + ", on every node");
  }
  if (!start_generation_) {
    return UnavailableError(fmt::format("{} did not start the job within {:g} s (joined: {}){}", Coordinator(),
                                        settings_.join_timeout_s, welcomed_ ? "yes" : "no", said),
                            "some other node has not joined; node 0's log names it");
  }
  generation_ = *start_generation_;
  layout_ = next_layout_;
  log::Info("joined; starting generation {} as node {} of {}", generation_, layout_.node_rank, layout_.nnodes);
  return 0;
}

void JobMember::OnEvent(uint64_t tag) {
  if (tag == kConnectionTag) HandleMessages();
}

void JobMember::HandleMessages() {
  if (!connection_) return;
  std::vector<Json> messages;
  bool closed = connection_->Receive(&messages) == io::MessageConnection::ReadResult::kClosed;
  last_seen_ = SteadyClock::now();
  for (const Json& message : messages) OnMessage(message);
  if (closed && connection_) LoseCoordinator(connection_->error());
}

void JobMember::OnMessage(const Json& message) {
  std::string type = MessageType(message);
  if (!coordinator_proven_) {
    // Nothing counts before node 0 proved it holds the job token.
    if (type != "challenge") {
      log::Debug("control channel: ignored a {} from {} before its challenge", EscapeControlCharacters(type),
                 Coordinator());
      if (type == "refuse" && !unproven_refusal_) unproven_refusal_ = MessageText(message, "reason", "no reason given");
      return;
    }
    std::string coordinator_nonce;
    std::optional<std::string> problem = CheckChallenge(message, settings_.token, own_nonce_, &coordinator_nonce);
    // Our proof goes only to a node 0 that proved itself: a stranger gets no
    // HMAC of the token to guess a weak one against.
    if (!problem) Send(AuthMessage(settings_.token, own_nonce_, coordinator_nonce, hello_));
    if (problem) {
      impostor_ = *problem;
      if (connection_) {
        handles_.poller().Remove(connection_->fd());
        connection_.reset();
      }
      return;
    }
    coordinator_proven_ = true;
    return;
  }
  if (type == "heartbeat") return;
  if (type == "welcome") {
    welcomed_ = true;
    standby_ = json_fields::Bool(message, "standby").value_or(false);
  } else if (type == "refuse") {
    refused_ = MessageText(message, "reason", "no reason given");
    if (!stop_reason_) stop_reason_ = "node 0 ended the job: " + *refused_;
  } else if (type == "start") {
    GenerationLayout layout = next_layout_;
    if (auto problem = ReadStartMessage(message, settings_.self.nnodes, &layout)) {
      LoseCoordinator("its start message does not fit this job: " + *problem);
      return;
    }
    next_layout_ = layout;
    start_generation_ = MessageGeneration(message);
  } else if (type == "stop") {
    // Only for a generation this node runs (not one that ran while it waited as a standby).
    if (start_generation_ && MessageGeneration(message) == *start_generation_ && !stop_reason_) {
      stop_reason_ = MessageText(message, "reason", "node 0 stopped the job");
      stop_takes_stacks_ = json_fields::Bool(message, "stacks").value_or(false);
    }
  } else if (type == "decision") {
    if (MessageGeneration(message) != generation_) return;
    decision_ = DecisionFromJson(message);
    if (!decision_->restart && !stop_reason_) stop_reason_ = "node 0 ended the job: " + decision_->reason;
    if (!decision_->restart) start_generation_.reset();
  }
}

void JobMember::LoseCoordinator(std::string why) {
  if (connection_) {
    handles_.poller().Remove(connection_->fd());
    connection_.reset();
  }
  if (lost_) return;
  lost_ = why;
  if (decision_ && !decision_->restart) return;  // node 0 said goodbye first
  if (!start_generation_ && !welcomed_) return;   // Join reports it
  log::Error("lost {}: {}", Coordinator(), why);
  if (!stop_reason_) stop_reason_ = "lost " + Coordinator() + ": " + why;
}

void JobMember::Send(const Json& message) {
  if (!connection_) return;
  if (!connection_->Send(message)) {
    LoseCoordinator(connection_->error());
    return;
  }
  last_sent_ = SteadyClock::now();
}

std::optional<SteadyTime> JobMember::NextDeadline() const {
  // Nothing is sent before node 0 proved itself: the message after the hello is the auth.
  if (!connection_ || !coordinator_proven_) return std::nullopt;
  SteadyTime next = last_sent_ + Seconds(settings_.heartbeat_interval_s);
  if (start_generation_ || welcomed_) next = std::min(next, last_seen_ + Seconds(settings_.heartbeat_timeout_s));
  return next;
}

void JobMember::OnDeadline(SteadyTime now) {
  if (!connection_ || !coordinator_proven_) return;
  if ((start_generation_ || welcomed_) && now >= last_seen_ + Seconds(settings_.heartbeat_timeout_s)) {
    LoseCoordinator(fmt::format("no heartbeat for {:g} s", settings_.heartbeat_timeout_s));
    return;
  }
  if (now >= last_sent_ + Seconds(settings_.heartbeat_interval_s)) Send(Json{{"type", "heartbeat"}});
}

void JobMember::ReportLocalFailure(const WorkerFailure& failure) {
  Send(Json{{"type", "failure"}, {"generation", generation_}, {"failure", FailureToJson(failure)}});
}

void JobMember::SendTelemetry(const Json& sample) {
  if (!start_generation_ || stop_reason_) return;  // node 0 is not listening for this generation's samples
  Send(Json{{"type", "telemetry"}, {"generation", generation_}, {"sample", sample}});
}

void JobMember::ReportLocalSignal(int signal) {
  if (agent_signal_ != 0) return;
  agent_signal_ = signal;
  Send(Json{{"type", "failure"}, {"generation", generation_}, {"signal", signal}});
}

void JobMember::WaitUntil(const std::function<bool()>& done) {
  while (!done() && !lost_) {
    int signal = PumpLinkEvents(handles_, *this, std::nullopt);
    if (signal != 0) ReportLocalSignal(signal);
  }
}

JobDecision JobMember::EndGeneration(const NodeOutcome& outcome) {
  Json done{{"type", "done"}, {"generation", generation_}, {"outcome", OutcomeToJson(outcome)}};
  Send(done);
  WaitUntil([this] { return decision_.has_value(); });
  if (!decision_) {
    JobDecision alone;
    alone.exit_code = outcome.exit_code != 0 ? outcome.exit_code : 1;
    alone.root_cause = outcome.root_cause;
    alone.other_failures = outcome.other_failures;
    alone.reason = "lost " + Coordinator() + ": " + lost_.value_or("?");
    log::Error("ending without node 0's decision: {}", alone.reason);
    return alone;
  }
  JobDecision decision = *decision_;
  const std::vector<std::string>& excluded = decision.excluded_hosts;
  if (std::find(excluded.begin(), excluded.end(), settings_.self.host) != excluded.end()) {
    decision.restart = false;  // the others go on without this node (run_workers ends it with exit code 5)
    return decision;
  }
  if (!decision.restart) {
    if (decision.exit_code != 0) log::Error("the job ends with exit code {}: {}", decision.exit_code, decision.reason);
    return decision;
  }
  if (decision.membership_changed) {
    log::Warn("the job restarts on {} node{} ({}); waiting for its start", decision.next_nnodes,
              decision.next_nnodes == 1 ? "" : "s", decision.reason);
  } else {
    log::Warn("node 0 restarts the job (restart {} of {}); waiting for its start", decision.restarts,
              settings_.max_restarts);
  }
  int next = generation_ + 1;
  WaitUntil([&] { return (start_generation_ && *start_generation_ >= next) || (decision_ && !decision_->restart); });
  if (decision_ && !decision_->restart) return *decision_;
  if (!start_generation_ || *start_generation_ < next) {
    JobDecision alone = decision;
    alone.restart = false;
    alone.exit_code = decision.exit_code != 0 ? decision.exit_code : 1;
    alone.reason = "lost " + Coordinator() + " before the restart: " + lost_.value_or("?");
    log::Error("{}", alone.reason);
    return alone;
  }
  generation_ = *start_generation_;
  layout_ = next_layout_;
  decision_.reset();
  stop_reason_.reset();
  stop_takes_stacks_ = false;
  return decision;
}

}  // namespace primus::job
