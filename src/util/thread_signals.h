// A helper thread of a process whose signals are read elsewhere (a
// SignalChannel in io/, the agent's loop) calls BlockAllSignalsInThisThread
// first: every signal stays blocked in it, so none is delivered to it
// instead of to the thread that handles them.
#pragma once

namespace primus {

void BlockAllSignalsInThisThread();

}  // namespace primus
