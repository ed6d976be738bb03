// Node 0's side of the job link: serves the control channel, admits the
// nodes of this job (token, consistency), starts every generation, spreads a
// stop the moment any node reports a failure or goes silent, and decides at
// the end of each generation for the whole job. See job_link.h.
//
// With fixed node ranks (static rendezvous) a node's slot is its rank. When
// the coordinator hands ranks out (c10d, etcd-v2) slots are kept in the
// order nodes joined; each generation numbers the live ones from 0 (this
// node) up to the job's maximum, and the rest wait as standbys.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "io/message_socket.h"
#include "job/open_link.h"
#include "agent/log_limiter.h"

namespace primus::job {

class JobCoordinator : public agent::JobLink {
 public:
  // Binds the control port (an UnavailableError when it is taken).
  // `port_in_use`, when given, is set when the port was taken (rather than
  // some other failure): with c10d another agent coordinates then.
  static Result<std::unique_ptr<JobCoordinator>> Open(const JobLinkSettings& settings, agent::LaunchHandles& handles,
                                                      bool* port_in_use = nullptr);
  ~JobCoordinator() override;

  Result<int> Join() override;
  int generation() const override { return generation_; }
  const agent::GenerationLayout& layout() const override { return layout_; }
  void OnEvent(uint64_t tag) override;
  std::optional<agent::SteadyTime> NextDeadline() const override;
  void OnDeadline(agent::SteadyTime now) override;
  std::optional<std::string> stop_reason() const override { return stop_reason_; }
  bool stop_takes_stacks() const override { return stop_takes_stacks_; }
  void ReportLocalFailure(const agent::WorkerFailure& failure) override;
  void ReportLocalSignal(int signal) override;
  bool coordinates() const override { return true; }
  agent::JobDecision EndGeneration(const agent::NodeOutcome& outcome) override;

 private:
  // Its tags in the agent's event loop: the listener, each peer's slot, each
  // pending connection's id.
  static constexpr uint64_t kListenerTag = agent::kFirstLinkTag;
  static constexpr uint64_t kFirstPeerTag = agent::kFirstLinkTag + 1;
  static constexpr uint64_t kFirstPendingTag = agent::kFirstLinkTag + (uint64_t{1} << 24);
  static constexpr double kHelloTimeoutS = 10;  // a connection that does not prove itself by then is dropped
  // Connections waiting to prove themselves, at most; past it the oldest is
  // dropped (a node says hello and answers the challenge at once, so it is
  // never the oldest for long). With io::kMaxHelloBytes each, strangers can
  // make node 0 hold about 1 MiB.
  static constexpr size_t kMaxPendingConnections = 64;

  struct Peer {
    std::unique_ptr<io::MessageConnection> connection;  // null until joined, and after it is lost
    NodeIdentity node;
    bool joined = false;
    bool active = false;  // one of the nodes of the running generation
    std::string lost;  // why the node was lost; empty while it is fine
    agent::SteadyTime last_seen{}, last_sent{};
    std::optional<agent::NodeOutcome> outcome;  // of the current generation
  };
  // A connection that has not proved itself yet: it said nothing, or said
  // hello and was sent a challenge.
  struct Pending {
    std::unique_ptr<io::MessageConnection> connection;
    agent::SteadyTime since{};
    std::optional<Json> hello;  // once received
    NodeIdentity node;
    std::string member_nonce;
    std::string own_nonce;
  };

  JobCoordinator(const JobLinkSettings& settings, agent::LaunchHandles& handles, io::UniqueFd listener);

  bool AssignsRanks() const { return settings_.self.rendezvous != agent::kStaticRendezvous; }
  int maximum() const { return settings_.self.nnodes; }
  int minimum() const { return settings_.self.Minimum(); }
  int LiveNodes() const;  // joined and not lost, this node included
  Result<int> JoinFixed(agent::SteadyTime deadline);
  Result<int> JoinElastic(agent::SteadyTime deadline);
  // Numbers the nodes of the next generation, picks its master port and
  // sends each node its start.
  Status StartGeneration();
  void AcceptAll();
  void HandlePending(uint64_t id);
  void DropPending(std::map<uint64_t, Pending>::iterator it, const std::string& why, bool quiet);
  // The hello (a challenge goes back) and then the auth (the node joins).
  void Introduce(uint64_t id, std::vector<Json>& messages);
  void Admit(Pending pending, const std::vector<Json>& after_auth);
  void HandlePeer(int slot);
  void OnPeerMessage(Peer& peer, const Json& message);
  void LosePeer(Peer& peer, std::string why);
  // take_stacks: the stop is for a hang; every node takes its workers' stacks first.
  void StopEveryone(const std::string& reason, bool take_stacks = false);
  void Send(Peer& peer, const Json& message);
  void Broadcast(const Json& message);
  void RefuseEveryone(const std::string& reason);
  std::vector<int> MissingRanks() const;
  agent::JobDecision Decide(const std::vector<int>& never_reported);
  // direct.exclude_bad_nodes: the node found bad (the hang's culprit, or the
  // root cause's node failing again) leaves the job: an elastic job goes on
  // without it at once; with spare nodes the job ends for the launcher
  // above to start it again without that host (decision.excluded_hosts).
  void ExcludeBadNode(agent::JobDecision& decision, const std::optional<analyze::HangVerdict>& hang);
  // A hang: every node's ranks' places (their reports), judged together; nullopt when none sent any.
  std::optional<analyze::HangVerdict> JudgeJobHang() const;
  // With a hang's verdict: its culprit as the root cause, the banner's
  // "waiting on:" lines, decision.hang_verdict for hang_verdict.txt.
  void PrintBanner(agent::JobDecision& decision, const std::optional<analyze::HangVerdict>& hang) const;
  bool SleepForBackoff(double seconds);
  // The restart `decided` on does not happen: every node ends with `exit_code`.
  agent::JobDecision CallOffRestart(agent::JobDecision decided, int exit_code, const std::string& why, int generation);
  void ReleaseStandbys(const std::string& why);
  std::string TooFewNodes() const;  // "only 1 node left, fewer than the minimum of 2"

  JobLinkSettings settings_;
  agent::LaunchHandles& handles_;
  io::UniqueFd listener_;
  std::vector<Peer> peers_;  // index = node rank; [0] is this node and has no connection
  std::map<uint64_t, Pending> pending_;  // connections that have not proved themselves yet (bounded)
  agent::SteadyTime next_keep_alive_{};
  agent::LogLimiter stranger_log_{5, 10};       // refused and dropped connections
  uint64_t next_pending_id_ = 0;
  int generation_ = 0;
  agent::GenerationLayout layout_;
  int restarts_ = 0;
  int membership_changes_ = 0;
  std::string scale_up_;                      // a node joined the running job: who
  bool started_ = false;
  std::optional<std::string> refusal_;        // an inconsistent job: why
  std::optional<std::string> stop_reason_;    // set once per generation
  bool stop_takes_stacks_ = false;
  std::string last_failed_host_;                     // the previous generation's root cause's host
  std::map<std::string, std::string> excluded_hosts_;  // host -> why: refused if it joins again
  std::vector<agent::WorkerFailure> reported_failures_;  // failure messages of this generation
  int agent_signal_ = 0;                      // a node's agent was signalled: no restart
  bool fatal_ = false;                        // a node could not start its workers: no restart
};

}  // namespace primus::job
