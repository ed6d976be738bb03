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

using agent::DescribeEnding;
using agent::GenerationLayout;
using agent::LaunchHandles;
using agent::Seconds;
using agent::SteadyClock;
using agent::SteadyTime;
using agent::WorkerFailure;
using agent::kJobTokenVariable;

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
    std::string text = std::string(missing.size() == 1 ? "node " : "nodes ") + JoinNumbers(missing, ", ") +
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
  // Each node's address as this node sees it ("10.0.0.2" of "10.0.0.2:44934").
  layout_.node_hosts.assign(static_cast<size_t>(nodes), settings_.master_addr.empty() ? "127.0.0.1"
                                                                                       : settings_.master_addr);
  for (size_t slot = 1; slot < peers_.size(); ++slot) {
    const Peer& peer = peers_[slot];
    if (!peer.active || peer.connection == nullptr) continue;
    std::string address = peer.connection->peer();
    size_t colon = address.rfind(':');
    if (colon != std::string::npos) address.resize(colon);
    if (address.size() > 2 && address.front() == '[' && address.back() == ']') address = address.substr(1, address.size() - 2);
    layout_.node_hosts[static_cast<size_t>(peer.node.node_rank)] = address;
  }
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
                             failure.hung ? "a hang" : DescribeEnding(failure.exit_code, failure.signal)),
                 failure.hung);
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

void JobCoordinator::StopEveryone(const std::string& reason, bool take_stacks) {
  if (stop_reason_) return;
  stop_reason_ = reason;
  stop_takes_stacks_ = take_stacks;
  log::Warn("stopping every node's workers: {}{}", reason, take_stacks ? " (each node takes their stacks first)" : "");
  Json stop{{"type", "stop"}, {"generation", generation_}, {"reason", reason}};
  if (take_stacks) stop["stacks"] = true;
  for (size_t slot = 1; slot < peers_.size(); ++slot) {
    // Before the start every joined node is told; after it, the running ones (not standbys).
    if (!started_ || peers_[slot].active) Send(peers_[slot], stop);
  }
}

void JobCoordinator::ReportLocalFailure(const WorkerFailure& failure) {
  reported_failures_.push_back(failure);
  StopEveryone(fmt::format("rank {} on {} failed with {}", failure.rank, settings_.self.Describe(),
                           failure.hung ? "a hang" : DescribeEnding(failure.exit_code, failure.signal)),
               failure.hung);
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

}  // namespace primus::job
