// Node 0's side of the handshake (job_coordinator.h): connections accepted,
// each proving it holds the job token (control_protocol.h) before it may
// join, and the joining node checked against the job.
#include "job/job_coordinator.h"

#include "util/log.h"
#include "util/strings.h"

namespace primus::job {

using agent::SteadyClock;
using agent::kJobTokenVariable;

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
  if (auto excluded = excluded_hosts_.find(node.host); excluded != excluded_hosts_.end()) {
    log::Warn("control channel: refused {} from {}: its host was excluded from the job ({})", node.Describe(),
              connection.peer(), excluded->second);
    refuse("this host was excluded from the job: " + excluded->second);
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

}  // namespace primus::job
