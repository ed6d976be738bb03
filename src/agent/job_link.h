// What a node agent sees of the other nodes of its job: the interface the
// supervisor drives, and the shapes of a generation's start and end. A
// single-node launch has no link; with nnodes > 1 the job layer (src/job/)
// gives node 0's agent a JobCoordinator and every other agent a JobMember,
// joined by the control channel (job/control_protocol.h). The link makes the agents act as one job:
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

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/deadline_timer.h"
#include "agent/launch_spec.h"
#include "analyze/hang_culprit.h"
#include "util/error.h"

namespace primus::agent {

// A node's place in one generation of the job, sent in each start message.
// In a fixed-size job it never changes; in an elastic one node ranks are
// renumbered and nnodes changes as nodes are lost and join.
struct GenerationLayout {
  int node_rank = 0;
  int nnodes = 1;
  std::string master_addr;  // the workers' MASTER_ADDR and MASTER_PORT
  int master_port = 0;
  std::string run_id;       // the coordinator's: one TORCHELASTIC_RUN_ID for the job ("" keeps the node's own)
  // Every node's address by node rank, as the coordinator sees it (its own:
  // master_addr); empty from a coordinator that does not send it.
  std::vector<std::string> node_hosts;
};

// The end of one generation on one node, as its agent reports it.
struct NodeOutcome {
  int exit_code = 0;
  int agent_signal = 0;
  bool stopped_by_job = false;
  std::vector<int> stuck_at_exit;  // ranks stopped after the exit grace, their work done
  std::optional<WorkerFailure> root_cause;
  std::vector<WorkerFailure> other_failures;
  // After a hang anywhere in the job: where each of this node's ranks was
  // (its stacks and flight records, analyze/hang_culprit.h), for node 0 to
  // judge the whole job.
  std::vector<analyze::RankPlace> hang_places;
};

// Node 0's verdict on a generation, the same for every node.
struct JobDecision {
  bool restart = false;
  int exit_code = 0;
  int restarts = 0;         // restarts of the whole job so far (including this one when restart)
  bool membership_changed = false;  // an elastic restart: a node was lost or joined (not counted in restarts)
  int next_nnodes = 0;      // the nodes of the next generation, when restart
  std::string reason;       // why the job ends or restarts, for the log
  std::optional<WorkerFailure> root_cause;
  std::vector<WorkerFailure> other_failures;
  // Node 0 only (not sent): its judgement of a hang from every node's
  // places, as FormatVerdict writes it; "" when there was no hang.
  std::string hang_verdict;
  // direct.exclude_bad_nodes: the host found bad, which leaves the job (its
  // agent exits 5), and why; empty when none was.
  std::vector<std::string> excluded_hosts;
  std::string exclusion_reason;
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
  // The stop is for a hang: take the workers' stacks first (they are the
  // evidence of who the job waits for).
  virtual bool stop_takes_stacks() const { return false; }
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

}  // namespace primus::agent
