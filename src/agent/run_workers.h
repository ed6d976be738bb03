// The node agent's entry point: starts one worker per local rank with the
// torchrun environment contract, supervises them until they all end, restarts
// them all (up to max_restarts, with capped exponential backoff) when one
// fails or hangs, and leaves no process behind — not even when the agent
// itself is SIGKILLed (see orphan_guard.h).
//
// Run it from the thread that owns the process's signals (the main thread of
// a single-threaded CLI): it blocks SIGCHLD/SIGINT/SIGTERM/SIGHUP/SIGUSR1/
// SIGUSR2 while it runs, reaps every child of the process, and restores the
// signal mask and subreaper setting on return.
#pragma once

#include "agent/launch_spec.h"
#include "util/error.h"

namespace primus::agent {

// An Error only for what prevents launching: a bad spec (code 2), a missing
// executable, a busy port, an unwritable log directory, exec failure (code 4).
// Everything after the workers started is in RunResult::exit_code.
Result<RunResult> RunWorkers(const LaunchSpec& spec);

}  // namespace primus::agent
