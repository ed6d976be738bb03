#include "job/job_coordinator.h"

#include <signal.h>

#include <algorithm>
#include <cmath>

#include "agent/failure_report.h"
#include "io/tcp_port.h"
#include "io/signal_channel.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus::job {

using agent::BannerInput;
using agent::ChooseRootCause;
using agent::DescribeEnding;
using agent::FailedBefore;
using agent::FormatFailureBanner;
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

namespace {

constexpr uint64_t kListenerTag = kFirstLinkTag;
constexpr uint64_t kFirstPeerTag = kFirstLinkTag + 1;
constexpr uint64_t kFirstPendingTag = kFirstLinkTag + (uint64_t{1} << 24);
constexpr double kHelloTimeoutS = 10;  // a connection that does not prove itself by then is dropped
// Connections waiting to prove themselves, at most; past it the oldest is
// dropped (a node says hello and answers the challenge at once, so it is
// never the oldest for long). With io::kMaxHelloBytes each, strangers can
// make node 0 hold about 1 MiB.
constexpr size_t kMaxPendingConnections = 64;

std::string RankNames(const std::vector<int>& ranks) {
  std::vector<std::string> names;
  for (int rank : ranks) names.push_back(std::to_string(rank));
  return primus::Join(names, ", ");
}

}  // namespace

Result<std::unique_ptr<JobCoordinator>> JobCoordinator::Open(const JobLinkSettings& settings,
                                                             LaunchHandles& handles, bool* port_in_use) {
  auto listener = io::ListenForNodes(settings.control_port, port_in_use);
  if (!listener) return listener.error();
  std::unique_ptr<JobCoordinator> coordinator(new JobCoordinator(settings, handles, std::move(*listener)));
  if (Status status = handles.poller().Add(coordinator->listener_.get(), kListenerTag); !status) {
    return status.error();
  }
  return coordinator;
}

JobCoordinator::JobCoordinator(const JobLinkSettings& settings, LaunchHandles& handles, io::UniqueFd listener)
    : settings_(settings), handles_(handles), listener_(std::move(listener)) {
  // Fixed ranks: a slot per rank. Handed-out ranks: slots as nodes join.
  peers_.resize(AssignsRanks() ? 1 : static_cast<size_t>(settings_.self.nnodes));
  peers_[0].node = settings_.self;
  peers_[0].node.node_rank = 0;
  peers_[0].joined = true;
  generation_ = settings_.restarts_before;
  restarts_ = settings_.restarts_before;
}

JobCoordinator::~JobCoordinator() {
  for (auto& [id, pending] : pending_) handles_.poller().Remove(pending.connection->fd());
  for (Peer& peer : peers_) {
    if (peer.connection) handles_.poller().Remove(peer.connection->fd());
  }
  handles_.poller().Remove(listener_.get());
}

Result<int> JobCoordinator::Join() {
  SteadyTime deadline = SteadyClock::now() + Seconds(settings_.join_timeout_s);
  auto joined = AssignsRanks() ? JoinElastic(deadline) : JoinFixed(deadline);
  if (!joined || *joined != 0) return joined;
  started_ = true;
  if (size_t unlogged = stranger_log_.TakeSuppressed()) {
    log::Warn("control channel: {} more refused or dropped connections were not logged", unlogged);
  }
  if (Status status = StartGeneration(); !status) {
    RefuseEveryone(status.error().message);
    return status.error();
  }
  return 0;
}

Result<int> JobCoordinator::JoinFixed(SteadyTime deadline) {
  log::Info("node 0 of {}: control channel on port {}; waiting for {} node{} to join", settings_.self.nnodes,
            settings_.control_port, settings_.self.nnodes - 1, settings_.self.nnodes == 2 ? "" : "s");
  while (!refusal_ && !MissingRanks().empty() && SteadyClock::now() < deadline) {
    int signal = PumpLinkEvents(handles_, *this, deadline);
    if (signal != 0) {
      RefuseEveryone("node 0 received " + io::SignalName(signal) + " before the job started");
      return signal;
    }
  }
  if (refusal_) {
    RefuseEveryone("inconsistent job: " + *refusal_);
    return UnavailableError("refusing to start an inconsistent job: " + *refusal_,
                            "start every node with the same primus-cli, --nnodes and --nproc-per-node, and "
                            "its own --node-rank");
  }
  std::vector<int> missing = MissingRanks();
  if (!missing.empty()) {
    std::string text = std::string(missing.size() == 1 ? "node " : "nodes ") + RankNames(missing) +
                       " did not join within " + fmt::format("{:g}", settings_.join_timeout_s) + " s";
    RefuseEveryone(text);
    return UnavailableError(
        text, fmt::format("start primus-cli on every node with --nnodes {} --master-addr {} and the same "
                          "{}; check that port {} of this host is reachable from them (firewall, address)",
                          settings_.self.nnodes, settings_.master_addr, kJobTokenVariable,
                          settings_.control_port));
  }
  log::Info("all {} nodes joined", settings_.self.nnodes);
  return 0;
}

// torchrun's dynamic rendezvous: the job starts once the minimum joined and
// the last call passed (at once when the maximum joined).
Result<int> JobCoordinator::JoinElastic(SteadyTime deadline) {
  std::string count = minimum() == maximum() ? std::to_string(maximum())
                                             : fmt::format("{} to {}", minimum(), maximum());
  log::Info("{} rendezvous for {} nodes: this node coordinates, control channel on port {}; waiting for {} more",
            settings_.self.rendezvous, count, settings_.control_port, minimum() - 1);
  std::optional<SteadyTime> last_call;
  while (LiveNodes() < maximum()) {
    SteadyTime now = SteadyClock::now();
    if (LiveNodes() >= minimum()) {
      if (!last_call) {
        last_call = now + Seconds(settings_.last_call_timeout_s);
        if (minimum() < maximum()) {
          log::Info("{} of at most {} nodes joined; last call for more: {:g} s", LiveNodes(), maximum(),
                    settings_.last_call_timeout_s);
        }
      }
      if (now >= *last_call) break;
    } else if (now >= deadline) {
      break;
    }
    SteadyTime until = last_call && LiveNodes() >= minimum() ? *last_call : deadline;
    int signal = PumpLinkEvents(handles_, *this, until);
    if (signal != 0) {
      RefuseEveryone("the coordinator received " + io::SignalName(signal) + " before the job started");
      return signal;
    }
  }
  if (LiveNodes() < minimum()) {
    std::string text = fmt::format("only {} of at least {} nodes joined within {:g} s", LiveNodes(), minimum(),
                                   settings_.join_timeout_s);
    RefuseEveryone(text);
    return UnavailableError(
        text, fmt::format("start the other nodes with the same --nnodes and --rdzv-endpoint {}:{} (and the same "
                          "{}); check that port {} of this host is reachable from them, or raise join_timeout",
                          settings_.master_addr, settings_.control_port, kJobTokenVariable, settings_.control_port));
  }
  return 0;
}

int JobCoordinator::LiveNodes() const {
  return static_cast<int>(
      std::count_if(peers_.begin(), peers_.end(), [](const Peer& peer) { return peer.joined && peer.lost.empty(); }));
}

Status JobCoordinator::StartGeneration() {
  std::vector<std::string> names;
  int nodes = 0;
  for (Peer& peer : peers_) {
    bool live = peer.joined && peer.lost.empty();
    peer.active = live && nodes < maximum();
    if (!peer.active) continue;
    peer.node.node_rank = nodes++;
    names.push_back(peer.node.Describe());
  }
  layout_.node_rank = 0;
  layout_.nnodes = nodes;
  layout_.master_addr = settings_.master_addr;
  layout_.master_port = settings_.master_port;
  layout_.run_id = settings_.run_id;
  if (layout_.master_port == 0) {
    auto port = io::PickFreePort();
    if (!port) return port.error();
    layout_.master_port = *port;
  }
  if (AssignsRanks()) {
    log::Info("starting generation {} with {} node{}: {}; master {}:{}", generation_, nodes, nodes == 1 ? "" : "s",
              primus::Join(names, ", "), layout_.master_addr, layout_.master_port);
  } else {
    log::Info("starting generation {}", generation_);
  }
  for (size_t slot = 1; slot < peers_.size(); ++slot) {
    Peer& peer = peers_[slot];
    if (!peer.active) continue;
    GenerationLayout layout = layout_;
    layout.node_rank = peer.node.node_rank;
    Send(peer, StartMessage(generation_, layout));
  }
  return Status::Ok();
}

std::vector<int> JobCoordinator::MissingRanks() const {
  std::vector<int> missing;
  for (size_t rank = 1; rank < peers_.size(); ++rank) {
    if (!peers_[rank].joined) missing.push_back(static_cast<int>(rank));
  }
  return missing;
}

void JobCoordinator::OnEvent(uint64_t tag) {
  if (tag == kListenerTag) {
    AcceptAll();
  } else if (tag >= kFirstPendingTag) {
    HandlePending(tag - kFirstPendingTag);
  } else if (tag >= kFirstPeerTag) {
    HandlePeer(static_cast<int>(tag - kFirstPeerTag));
  }
}

void JobCoordinator::AcceptAll() {
  while (true) {
    std::string address;
    io::UniqueFd fd = io::AcceptNode(listener_.get(), &address);
    if (!fd.valid()) return;
    if (pending_.size() >= kMaxPendingConnections) {
      DropPending(pending_.begin(),
                  fmt::format("{} connections were waiting to introduce themselves; dropped the oldest",
                              kMaxPendingConnections),
                  false);
    }
    uint64_t id = next_pending_id_++;
    Pending pending;
    pending.connection = std::make_unique<io::MessageConnection>(std::move(fd), address, io::kMaxHelloBytes);
    pending.since = SteadyClock::now();
    if (!handles_.poller().Add(pending.connection->fd(), kFirstPendingTag + id)) continue;
    pending_.emplace(id, std::move(pending));
  }
}

void JobCoordinator::DropPending(std::map<uint64_t, Pending>::iterator it, const std::string& why, bool quiet) {
  if (!quiet) {
    if (auto suffix = stranger_log_.Admit(SteadyClock::now())) {
      log::Warn("control channel: dropped a connection from {}: {}{}", it->second.connection->peer(), why, *suffix);
    }
  } else {
    log::Debug("control channel: {} closed without a word", it->second.connection->peer());
  }
  handles_.poller().Remove(it->second.connection->fd());
  pending_.erase(it);
}

void JobCoordinator::HandlePending(uint64_t id) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  std::vector<Json> messages;
  bool closed = it->second.connection->Receive(&messages) == io::MessageConnection::ReadResult::kClosed;
  if (!messages.empty()) {
    Introduce(id, messages);
    if (!pending_.count(id)) return;  // it joined, or was refused
  }
  if (closed) {
    // A probe that connects and closes is not worth a warning; garbage and
    // oversized lines are, and so is a node that said hello but did not prove
    // itself (it found that this node 0 holds another token).
    it = pending_.find(id);
    std::string why = it->second.connection->error();
    bool probe = it->second.hello && json_fields::Bool(*it->second.hello, "probe").value_or(false);
    if (it->second.hello && why == "connection closed" && !probe) {
      why = it->second.node.Describe() + " left without proving that it holds the job token (" + kJobTokenVariable +
            " differs between the nodes?)";
    }
    DropPending(it, why, why == "connection closed");  // a probe (etcd's fence check) is quiet too
  }
}

void JobCoordinator::Introduce(uint64_t id, std::vector<Json>& messages) {
  Pending& pending = pending_.at(id);
  io::MessageConnection& connection = *pending.connection;
  auto refuse = [&](const std::string& reason) {
    connection.Send(Json{{"type", "refuse"}, {"reason", reason}});
    handles_.poller().Remove(connection.fd());
    pending_.erase(id);
  };
  size_t next = 0;
  if (!pending.hello) {
    const Json& hello = messages[next++];
    if (auto problem = ParseHello(hello, &pending.node, &pending.member_nonce)) {
      if (auto suffix = stranger_log_.Admit(SteadyClock::now())) {
        log::Warn("control channel: dropped a connection from {}: {}{}", connection.peer(), *problem, *suffix);
      }
      refuse(*problem);
      return;
    }
    pending.hello = hello;
    pending.own_nonce = NewNonce();
    if (pending.node.host.empty()) pending.node.host = connection.peer();
    if (!connection.Send(ChallengeMessage(settings_.token, pending.member_nonce, pending.own_nonce))) {
      DropPending(pending_.find(id), "cannot send the challenge: " + connection.error(), false);
      return;
    }
  }
  // A heartbeat of an agent that sends them early is no auth: skip it.
  while (next < messages.size() && MessageType(messages[next]) == "heartbeat") ++next;
  if (next >= messages.size()) return;  // the auth is still to come
  if (!CheckAuth(messages[next], settings_.token, pending.member_nonce, pending.own_nonce, *pending.hello)) {
    if (auto suffix = stranger_log_.Admit(SteadyClock::now())) {
      log::Warn("control channel: refused {} from {}: wrong job token ({} differs; every node needs the same "
                "value){}",
                pending.node.Describe(), connection.peer(), kJobTokenVariable, *suffix);
    }
    refuse(std::string("wrong job token: ") + kJobTokenVariable + " differs from node 0's");
    return;
  }
  Pending proven = std::move(pending);
  pending_.erase(id);
  handles_.poller().Remove(proven.connection->fd());
  Admit(std::move(proven), std::vector<Json>(messages.begin() + static_cast<long>(next) + 1, messages.end()));
}

void JobCoordinator::Admit(Pending pending, const std::vector<Json>& after_auth) {
  io::MessageConnection& connection = *pending.connection;
  auto refuse = [&](const std::string& reason) { connection.Send(Json{{"type", "refuse"}, {"reason", reason}}); };
  const NodeIdentity& node = pending.node;
  if (started_ && !AssignsRanks()) {
    log::Warn("control channel: refused {} from {}: the job already started", node.Describe(), connection.peer());
    refuse("the job already started without this node");
    return;
  }
  if (auto problem = Inconsistency(settings_.self, node)) {
    log::Error("control channel: {} from {} does not fit this job: {}", node.Describe(), connection.peer(), *problem);
    refuse("inconsistent job: " + *problem);
    // With handed-out ranks the job goes on without the misfit.
    if (!AssignsRanks()) refusal_ = *problem;
    return;
  }
  if (AssignsRanks()) {
    if (peers_.size() >= (uint64_t{1} << 23)) {
      refuse("too many nodes have joined this job");
      return;
    }
    peers_.emplace_back();
  }
  size_t slot = AssignsRanks() ? peers_.size() - 1 : static_cast<size_t>(node.node_rank);
  Peer& peer = peers_[slot];
  if (peer.joined) {
    std::string problem = "node rank " + std::to_string(node.node_rank) + " claimed by both " + peer.node.host +
                          " (" + peer.connection->peer() + ") and " + node.host + " (" + connection.peer() + ")";
    log::Error("control channel: {}", problem);
    refuse("inconsistent job: " + problem);
    refusal_ = problem;
    return;
  }
  peer.connection = std::move(pending.connection);
  peer.connection->set_max_message_bytes(io::kMaxMessageBytes);
  peer.node = node;
  peer.joined = true;
  peer.last_seen = SteadyClock::now();
  if (!handles_.poller().Add(peer.connection->fd(), kFirstPeerTag + static_cast<uint64_t>(slot))) {
    LosePeer(peer, "cannot watch its connection");
    return;
  }
  int active = static_cast<int>(std::count_if(peers_.begin(), peers_.end(), [](const Peer& p) { return p.active; }));
  bool standby = started_ && active >= maximum();
  Send(peer, Json{{"type", "welcome"}, {"standby", standby}});
  if (!AssignsRanks()) {
    int joined = settings_.self.nnodes - static_cast<int>(MissingRanks().size());
    log::Info("{} joined from {} ({} of {})", node.Describe(), peer.connection->peer(), joined, settings_.self.nnodes);
  } else if (!started_) {
    log::Info("{} joined from {} ({} node{} here; the job runs on {})", node.Describe(), peer.connection->peer(),
              LiveNodes(), LiveNodes() == 1 ? "" : "s",
              minimum() == maximum() ? std::to_string(maximum())
                                     : std::to_string(minimum()) + " to " + std::to_string(maximum()));
  } else if (standby) {
    log::Info("{} joined from {}; the job already runs on its maximum of {} nodes, so it waits as a standby",
              node.Describe(), peer.connection->peer(), maximum());
  } else {
    // torchrun's policy: a node waiting to join restarts the job at once.
    scale_up_ = node.Describe();
    log::Warn("{} joined the running job from {}: restarting every node at {} nodes", node.Describe(),
              peer.connection->peer(), active + 1);
    StopEveryone(node.Describe() + " joined: scaling up to " + std::to_string(active + 1) + " nodes");
  }
  // Messages that came right behind the auth.
  for (const Json& message : after_auth) OnPeerMessage(peer, message);
}

void JobCoordinator::HandlePeer(int slot) {
  if (slot <= 0 || slot >= static_cast<int>(peers_.size())) return;
  Peer& peer = peers_[static_cast<size_t>(slot)];
  if (!peer.connection) return;
  std::vector<Json> messages;
  bool closed = peer.connection->Receive(&messages) == io::MessageConnection::ReadResult::kClosed;
  peer.last_seen = SteadyClock::now();
  for (const Json& message : messages) OnPeerMessage(peer, message);
  if (closed && peer.connection) LosePeer(peer, peer.connection->error());
}

void JobCoordinator::OnPeerMessage(Peer& peer, const Json& message) {
  std::string type = MessageType(message);
  if (type == "heartbeat") return;
  if (started_ && !peer.active) return;  // a standby has nothing to report
  int generation = MessageGeneration(message);
  if (generation != generation_) {
    log::Debug("control channel: ignored a stale {} of generation {} from {}", type, generation, peer.node.Describe());
    return;
  }
  if (type == "telemetry") {
    if (settings_.on_telemetry) settings_.on_telemetry(json_fields::Object(message, "sample"));
  } else if (type == "failure") {
    if (message.contains("signal")) {
      int signal = json_fields::IntegerIn(message, "signal", 1, 64).value_or(SIGTERM);
      if (agent_signal_ == 0) agent_signal_ = signal;
      StopEveryone(peer.node.Describe() + "'s agent received " + io::SignalName(signal));
      return;
    }
    if (json_fields::Bool(message, "fatal").value_or(false)) fatal_ = true;
    WorkerFailure failure = FailureFromJson(json_fields::Object(message, "failure"));
    reported_failures_.push_back(failure);
    StopEveryone(fmt::format("rank {} on {} failed with {}", failure.rank, peer.node.Describe(),
                             failure.hung ? "a hang" : DescribeEnding(failure.exit_code, failure.signal)));
  } else if (type == "done") {
    peer.outcome = OutcomeFromJson(json_fields::Object(message, "outcome"));
    if (peer.outcome->agent_signal != 0 && agent_signal_ == 0) agent_signal_ = peer.outcome->agent_signal;
    if (json_fields::Bool(message, "fatal").value_or(false)) fatal_ = true;
  }
}

void JobCoordinator::LosePeer(Peer& peer, std::string why) {
  if (peer.connection) {
    handles_.poller().Remove(peer.connection->fd());
    peer.connection.reset();
  }
  if (!started_) {
    // Before the start a node may come back (its agent restarted).
    if (peer.joined) log::Warn("{} left before the job started ({}); waiting for it again", peer.node.Describe(), why);
    peer.joined = false;
    return;
  }
  if (!peer.active) {
    if (peer.lost.empty()) log::Warn("standby {} left: {}", peer.node.Describe(), why);
    if (peer.lost.empty()) peer.lost = why;
    if (scale_up_ == peer.node.Describe()) scale_up_.clear();
    return;
  }
  if (!peer.lost.empty()) return;
  if (peer.outcome && !stop_reason_) {
    // It reported and left: a normal end on its side.
    peer.lost = "left after reporting";
    return;
  }
  peer.lost = why;
  log::Error("lost {}: {}", peer.node.Describe(), why);
  StopEveryone("lost " + peer.node.Describe() + ": " + why);
}

void JobCoordinator::StopEveryone(const std::string& reason) {
  if (stop_reason_) return;
  stop_reason_ = reason;
  log::Warn("stopping every node's workers: {}", reason);
  Json stop{{"type", "stop"}, {"generation", generation_}, {"reason", reason}};
  for (size_t slot = 1; slot < peers_.size(); ++slot) {
    // Before the start every joined node is told; after it, the running ones (not standbys).
    if (!started_ || peers_[slot].active) Send(peers_[slot], stop);
  }
}

void JobCoordinator::ReportLocalFailure(const WorkerFailure& failure) {
  reported_failures_.push_back(failure);
  StopEveryone(fmt::format("rank {} on {} failed with {}", failure.rank, settings_.self.Describe(),
                           failure.hung ? "a hang" : DescribeEnding(failure.exit_code, failure.signal)));
}

void JobCoordinator::ReportLocalSignal(int signal) {
  if (agent_signal_ == 0) agent_signal_ = signal;
  StopEveryone("node 0's agent received " + io::SignalName(signal));
}

void JobCoordinator::Send(Peer& peer, const Json& message) {
  if (!peer.connection) return;
  if (!peer.connection->Send(message)) {
    std::string why = peer.connection->error();
    LosePeer(peer, why);
    return;
  }
  peer.last_sent = SteadyClock::now();
}

void JobCoordinator::Broadcast(const Json& message) {
  for (size_t rank = 1; rank < peers_.size(); ++rank) Send(peers_[rank], message);
}

void JobCoordinator::RefuseEveryone(const std::string& reason) {
  Broadcast(Json{{"type", "refuse"}, {"reason", reason}});
}

std::optional<SteadyTime> JobCoordinator::NextDeadline() const {
  std::optional<SteadyTime> next;
  auto consider = [&next](SteadyTime time) {
    if (!next || time < *next) next = time;
  };
  for (size_t rank = 1; rank < peers_.size(); ++rank) {
    const Peer& peer = peers_[rank];
    if (!peer.connection) continue;
    consider(peer.last_sent + Seconds(settings_.heartbeat_interval_s));
    if (started_) consider(peer.last_seen + Seconds(settings_.heartbeat_timeout_s));
  }
  for (const auto& [id, pending] : pending_) consider(pending.since + Seconds(kHelloTimeoutS));
  if (settings_.keep_alive) consider(next_keep_alive_);
  return next;
}

void JobCoordinator::OnDeadline(SteadyTime now) {
  if (settings_.keep_alive && now >= next_keep_alive_) {
    settings_.keep_alive();
    next_keep_alive_ = SteadyClock::now() + Seconds(settings_.keep_alive_interval_s);
  }
  for (size_t rank = 1; rank < peers_.size(); ++rank) {
    Peer& peer = peers_[rank];
    if (!peer.connection) continue;
    if (started_ && now >= peer.last_seen + Seconds(settings_.heartbeat_timeout_s)) {
      LosePeer(peer, fmt::format("no heartbeat for {:g} s", settings_.heartbeat_timeout_s));
      continue;
    }
    if (now >= peer.last_sent + Seconds(settings_.heartbeat_interval_s)) Send(peer, Json{{"type", "heartbeat"}});
  }
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (now >= it->second.since + Seconds(kHelloTimeoutS)) {
      auto next = std::next(it);
      DropPending(it, fmt::format("no hello within {:g} s", kHelloTimeoutS), false);
      it = next;
    } else {
      ++it;
    }
  }
}

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
  auto barrier_end = [this, start = SteadyClock::now()] {
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
    log::Error("exit barrier: {} never reported the end of generation {} (waited {:g} s)", primus::Join(names, ", "),
               generation_, settings_.exit_barrier_timeout_s);
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
  if (decision.root_cause && !decision.membership_changed) PrintBanner(decision);
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
        stuck.push_back(fmt::format("rank{} {} on {}", ranks.size() == 1 ? "" : "s", RankNames(ranks),
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

void JobCoordinator::PrintBanner(const JobDecision& decision) const {
  BannerInput banner;
  banner.root_cause = *decision.root_cause;
  banner.other_failures = decision.other_failures;
  log::Error("job failed (generation {} of {} nodes): root cause rank {} on host {}\n{}", generation_,
             layout_.nnodes, decision.root_cause->rank, decision.root_cause->host,
             FormatFailureBanner(banner));
}

}  // namespace primus::job
