// Test support: questions about processes on this machine, asked through
// /proc: is a pid alive (a zombie is not), and which live processes a test
// started (they carry PRIMUS_TEST_MARKER=<marker> in their environment,
// whichever node or job started them).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace primus::testing {

// Alive and not a zombie (exited, not reaped yet).
bool ProcessAlive(pid_t pid);

// Live processes (zombies left out) other than this one whose environment
// holds PRIMUS_TEST_MARKER=<marker>; with `comm`, only those of that name.
std::vector<pid_t> ProcessesWithMarker(const std::string& marker, const std::string& comm = "");

}  // namespace primus::testing
