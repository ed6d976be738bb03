// The side of the job link on every node but node 0: connects to node 0's
// control channel (retrying until the join timeout), introduces itself with
// the job token, then follows node 0's orders — start (with this node's rank
// and the node count of the generation), stop, restart, exit — and reports
// its own failures and outcomes. Losing node 0 (the connection
// drops, or no heartbeat for heartbeat_timeout) stops the local workers and
// ends this agent. See job_link.h.
#pragma once

#include <memory>

#include "io/message_socket.h"
#include "job/open_link.h"

namespace primus::job {

class JobMember : public agent::JobLink {
 public:
  JobMember(const JobLinkSettings& settings, agent::LaunchHandles& handles);
  ~JobMember() override;

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
  bool coordinates() const override { return false; }
  void SendTelemetry(const Json& sample) override;
  agent::JobDecision EndGeneration(const agent::NodeOutcome& outcome) override;

 private:
  std::string Coordinator() const;  // "node 0 at host:port"
  Status Connect(agent::SteadyTime deadline, int* signal);
  void HandleMessages();
  void OnMessage(const Json& message);
  void LoseCoordinator(std::string why);
  void Send(const Json& message);
  // Pumps events until `done()` or the coordinator is lost; a terminating
  // signal is reported to node 0 (once) and waiting goes on.
  void WaitUntil(const std::function<bool()>& done);

  JobLinkSettings settings_;
  agent::LaunchHandles& handles_;
  std::unique_ptr<io::MessageConnection> connection_;
  Json hello_;                           // as sent: the auth is bound to it
  std::string own_nonce_;
  bool coordinator_proven_ = false;      // node 0 answered with a valid challenge
  std::optional<std::string> impostor_;  // what listens there could not prove it is node 0: why
  std::optional<std::string> unproven_refusal_;  // a refusal before any proof (an older node 0?): said, not obeyed
  agent::SteadyTime last_seen_{}, last_sent_{};
  int generation_ = 0;
  agent::GenerationLayout layout_;              // from the last start order
  agent::GenerationLayout next_layout_;         // of a start not yet taken up
  bool welcomed_ = false;
  bool standby_ = false;                 // welcomed while the job runs at its maximum
  std::optional<int> start_generation_;   // the last start order
  std::optional<std::string> refused_;    // node 0 refused this node or the job
  std::optional<std::string> lost_;       // node 0 is gone: why
  std::optional<std::string> stop_reason_;
  bool stop_takes_stacks_ = false;  // node 0's stop is for a hang
  std::optional<agent::JobDecision> decision_;   // of the current generation
  int agent_signal_ = 0;
};

}  // namespace primus::job
