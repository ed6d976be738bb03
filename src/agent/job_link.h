// What a node agent sees of the other nodes of its job. A single-node launch
// has no link; with nnodes > 1, node 0's agent holds a JobCoordinator and
// every other agent a JobMember, joined by the control channel
// (control_protocol.h). The link makes the agents act as one job:
//   - Join: a start barrier; no worker starts until every node joined (an
//     elastic job: at least its minimum, and the last call passed), and a
//     job whose nodes disagree (version, nnodes, nproc, node rank) is refused.
//   - while the workers run, the supervisor forwards the link's epoll events
//     and deadlines to it, reports its first local failure, and stops its
//     workers when the link asks (a failure elsewhere, a lost node);
//   - EndGeneration: an exit barrier; node 0 gathers every node's outcome,
//     picks the root cause across nodes, prints the banner, and decides for
//     everyone: restart together (a new generation) or exit with one code.
//   - elastic jobs (min_nnodes < nnodes, ranks handed out by the coordinator):
//     a lost node, or a node that joins the running job, ends the generation
//     at once; the next one starts with the nodes there are, renumbered, if
//     at least min_nnodes remain (layout() says this node's place).
#pragma once

#include <functional>

#include <nlohmann/json.hpp>
#include <memory>
#include <optional>
#include <string>

#include "agent/launch_handles.h"
#include "agent/control_protocol.h"
#include "agent/deadline_timer.h"
#include "util/error.h"

namespace primus::agent {

struct JobLinkSettings {
  NodeIdentity self;
  std::string token;        // PRIMUS_JOB_TOKEN; "" when unset (then every node must lack it)
  std::string master_addr;  // node 0, as the user or the scheduler gave it
  int control_port = 0;
  int master_port = 0;      // the workers' MASTER_PORT; 0: the coordinator picks one for each generation
  std::string run_id;       // this node's TORCHELASTIC_RUN_ID; the coordinator's is the job's
  double last_call_timeout_s = 30;  // elastic: once min_nnodes joined, how long more may join before the start
  // Decided before the link opens (etcd-v2 elected it): whether this agent
  // coordinates. Unset: node rank 0 (static) or the endpoint's host (c10d).
  std::optional<bool> coordinates;
  // Called by the coordinator every keep_alive_interval_s while the job runs
  // (etcd-v2: the refresh of its key); none when unset.
  std::function<void()> keep_alive;
  double keep_alive_interval_s = 0;
  double join_timeout_s = 300;
  double exit_barrier_timeout_s = 30;
  double heartbeat_interval_s = 1;
  double heartbeat_timeout_s = 10;
  double term_timeout_s = 30;  // how long a stopping node may take, on top of the exit barrier
  int max_restarts = 0;
  int restarts_before = 0;     // restarts a scheduler already made (SLURM_RESTART_COUNT)
  double restart_backoff_s = 1;
  double max_restart_backoff_s = 30;
  // The coordinator hands each member's telemetry sample (docs/monitor.md) here.
  std::function<void(const nlohmann::json&)> on_telemetry;
};

class JobLink {
 public:
  virtual ~JobLink() = default;

  // Blocks, handling signals, until every node joined and generation() may
  // start: 0, or the terminating signal that interrupted the wait. An Error
  // (code 4) for a refused, inconsistent or incomplete job.
  virtual Result<int> Join() = 0;
  // The generation now running (TORCHELASTIC_RESTART_COUNT of its workers).
  virtual int generation() const = 0;
  // This node's place in it: node rank, node count, the workers' master.
  virtual const GenerationLayout& layout() const = 0;

  // While the supervisor runs: events of tags >= kFirstLinkTag, and deadlines.
  virtual void OnEvent(uint64_t tag) = 0;
  virtual std::optional<SteadyTime> NextDeadline() const = 0;
  virtual void OnDeadline(SteadyTime now) = 0;
  // Set when the job wants this node's workers stopped; says why.
  virtual std::optional<std::string> stop_reason() const = 0;
  // The supervisor's first local failure (a worker failed or hung), or the
  // agent's own terminating signal: the other nodes stop at once.
  virtual void ReportLocalFailure(const WorkerFailure& failure) = 0;
  virtual void ReportLocalSignal(int signal) = 0;
  // Whether this agent coordinates the job (node 0's side of the channel).
  virtual bool coordinates() const = 0;
  // This node's telemetry sample: a member sends it to node 0, the
  // coordinator (which has it already) does nothing.
  virtual void SendTelemetry(const nlohmann::json& sample) { (void)sample; }

  // After the local workers ended: the exit barrier and the job's decision.
  // On a restart it returns once the next generation may start.
  virtual JobDecision EndGeneration(const NodeOutcome& outcome) = 0;
};

// Node 0 binds its control port here, so a busy port fails before anything
// starts. With the c10d rendezvous the agent coordinates when the endpoint
// (master_addr) is an address of this host and it binds the port first; the
// others join it, as torchrun's agents do.
Result<std::unique_ptr<JobLink>> OpenJobLink(const JobLinkSettings& settings, LaunchHandles& handles);

// Whether what listens at host:port is a coordinator holding `token`: it
// answers a hello with a challenge whose proof is right (the handshake of
// control_protocol.h), within `timeout_s`. The probe's hello says it is one,
// so node 0 drops it without a warning; nothing of the token is sent.
bool CoordinatorProvesItself(const std::string& host, int port, const std::string& token, double timeout_s = 3);

// Waits for the runtime's next events until `until` (nullopt: no limit but the
// link's own deadline) and dispatches them to `link`: its tags, the timer (the
// earlier of `until` and link.NextDeadline()), SIGCHLD (strays reaped). Returns
// a terminating signal (SIGINT/SIGTERM/SIGHUP) that arrived, else 0.
int PumpLinkEvents(LaunchHandles& handles, JobLink& link, std::optional<SteadyTime> until);

}  // namespace primus::agent
