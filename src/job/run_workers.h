// The node agent's entry point: starts one worker per local rank with the
// torchrun environment contract, supervises them until they all end, restarts
// them all (up to max_restarts, with capped exponential backoff) when one
// fails or hangs, and leaves no process behind — not even when the agent
// itself is SIGKILLed (see agent/orphan_guard.h). With nnodes > 1 it opens
// the node's link to the job first (open_link.h) and the nodes start, fail,
// restart and end together; one node's supervision is agent/supervisor.h's.
//
// Run it from the thread that owns the process's signals (the main thread of
// a single-threaded CLI): it blocks SIGCHLD/SIGINT/SIGTERM/SIGHUP/SIGUSR1/
// SIGUSR2 while it runs, reaps every child of the process, and restores the
// signal mask and subreaper setting on return.
#pragma once

#include <memory>

#include "agent/launch_plan.h"
#include "agent/launch_spec.h"
#include "agent/worker_env.h"
#include "telemetry/telemetry_hub.h"
#include "util/error.h"

namespace primus::job {

// An Error only for what prevents launching: a bad spec (code 2), a missing
// executable, a busy port, an unwritable log directory, exec failure (code 4).
// Everything after the workers started is in RunResult::exit_code.
//
// Telemetry (spec.telemetry_interval_s > 0, docs/monitor.md): RunWorkers owns
// a telemetry::TelemetryHub for the launch (MakeTelemetryHub below); the
// supervisor feeds it, node 0 writes <log_dir>/telemetry/, and its JobView()
// and NodeView() are what a metrics endpoint serves.
Result<agent::RunResult> RunWorkers(const agent::LaunchSpec& spec);

// The launch's hub: the host's GPUs (spec.host, or detected now), the job's
// network interface (the NCCL/GLOO_SOCKET_IFNAME the workers get), and
// writes_files for a single-node job (a multi-node job's coordinator is known
// once the link is open). Null when telemetry is off.
std::unique_ptr<telemetry::TelemetryHub> MakeTelemetryHub(const agent::LaunchPlan& plan, const agent::WorkerEnvironment& workers);

}  // namespace primus::job
