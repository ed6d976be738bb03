// Opening a node's link to the rest of its job (agent/job_link.h): node 0's
// agent coordinates (job_coordinator.h), every other agent is a member
// (job_member.h); what both need to know, the proof that a port holds a
// coordinator of this job, and the event pump they wait in.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "agent/job_link.h"
#include "agent/launch_handles.h"
#include "job/control_protocol.h"
#include "util/error.h"

namespace primus::job {

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
  bool exclude_bad_nodes = false;  // LaunchSpec::exclude_bad_nodes
  int spare_nodes = 0;             // nodes the launcher above can start this job on instead of a bad one
  int restarts_before = 0;     // restarts a scheduler already made (SLURM_RESTART_COUNT)
  double restart_backoff_s = 1;
  double max_restart_backoff_s = 30;
  // The coordinator hands each member's telemetry sample (docs/monitor.md) here.
  std::function<void(const nlohmann::json&)> on_telemetry;
};

// Node 0 binds its control port here, so a busy port fails before anything
// starts. With the c10d rendezvous the agent coordinates when the endpoint
// (master_addr) is an address of this host and it binds the port first; the
// others join it, as torchrun's agents do.
Result<std::unique_ptr<agent::JobLink>> OpenJobLink(const JobLinkSettings& settings, agent::LaunchHandles& handles);

// Whether what listens at host:port is a coordinator holding `token`: it
// answers a hello with a challenge whose proof is right (the handshake of
// control_protocol.h), within `timeout_s`. The probe's hello says it is one,
// so node 0 drops it without a warning; nothing of the token is sent.
bool CoordinatorProvesItself(const std::string& host, int port, const std::string& token, double timeout_s = 3);

// Waits for the runtime's next events until `until` (nullopt: no limit but the
// link's own deadline) and dispatches them to `link`: its tags, the timer (the
// earlier of `until` and link.NextDeadline()), SIGCHLD (strays reaped). Returns
// a terminating signal (SIGINT/SIGTERM/SIGHUP) that arrived, else 0.
int PumpLinkEvents(agent::LaunchHandles& handles, agent::JobLink& link, std::optional<agent::SteadyTime> until);

}  // namespace primus::job
