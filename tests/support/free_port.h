// Test support: TCP ports nobody listens on right now, for tests that start
// servers (agents, stores, daemons). The port is released again before it is
// returned, so another process could take it: good enough on a test machine.
#pragma once

namespace primus::testing {

// A port the kernel picks on the IPv6 wildcard (so IPv4 too); 0 when none.
int FreePort();

// A port P such that P and P+1 (an agent's control channel) are both free;
// 0 when none was found.
int FreePortPair();

}  // namespace primus::testing
