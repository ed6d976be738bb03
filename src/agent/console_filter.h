// Which worker streams reach the agent's console; the log files keep every
// line whatever is decided here. A stream is shown when its global rank
// passes --ranks-filter, its local rank passes --local-ranks-filter (the
// same local ranks on every node, as torchrun means it), and the stream is
// not redirected (--redirects) unless it is also teed (--tee).
#pragma once

#include "agent/launch_spec.h"

namespace primus::agent {

// `stream` is kStdoutStream or kStderrStream (stream_selection.h).
bool OnConsole(const LaunchSpec& spec, int rank, int local_rank, int stream);

}  // namespace primus::agent
