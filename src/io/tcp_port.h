// The rendezvous port: picked free for single-node runs (users hit "errno 98
// Address already in use" on fixed 29500 with torchrun), or checked before
// anything starts when given, so a busy port fails in milliseconds with its
// number named instead of as a worker traceback minutes later.
#pragma once

#include "util/error.h"

namespace primus::io {

// A TCP port that nothing listens on now (the kernel's choice for port 0).
// Another process may still take it before rank 0 binds: the window is the
// workers' start-up, as with torchrun --standalone.
Result<int> PickFreePort();

// UnavailableError naming `port` when a listener could not bind it on all
// interfaces the way torch's TCPStore does (SO_REUSEADDR, so a port in
// TIME_WAIT after a restart counts as free).
Status CheckPortFree(int port);

}  // namespace primus::io
