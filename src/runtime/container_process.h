// Runs the engine client (`podman run ...`) for one launch and makes sure
// the container it starts ends with the launch.
//
// The client runs in a process group of its own, so a terminal's Ctrl-C
// reaches only us and is forwarded exactly once: SIGINT, SIGTERM and SIGHUP
// go to the client, which proxies them to the container's primus-cli (the
// node agent, which stops its workers within direct.term_timeout). If the
// container has not ended `stop_grace_s` later, or a second signal comes,
// it is removed by the name this launch gave it (`rm -f NAME`), never by a
// wider selection. The client dies with us (PR_SET_PDEATHSIG SIGTERM), so
// even a SIGKILLed primus-cli still stops its container through the proxy.
//
// The client's stdout is ours (the workers' output streams straight
// through); its stderr passes through us unchanged, keeping a tail for
// ExplainEngineFailure and ExplainLoaderFailure.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "util/error.h"

namespace primus::runtime {

struct ContainerRun {
  std::vector<std::string> argv;                      // argv[0]: the engine client's path
  std::map<std::string, std::string> env_additions;   // on top of this process's environment
  std::string container_name;
  double stop_grace_s = 40;                           // after a forwarded signal, before rm -f
};

struct ContainerExit {
  int exit_code = 0;        // the client's (the container's) exit code, 128+N for signal N
  int stop_signal = 0;      // the first SIGINT/SIGTERM/SIGHUP we forwarded, 0 if none
  bool removed = false;     // we removed the container ourselves (rm -f by name)
  std::string stderr_tail;  // the last 64 KiB of the client's stderr
};

// Error only when the client cannot be started.
Result<ContainerExit> RunContainer(const ContainerRun& run);

// `<engine> rm -f NAME` (podman: with no stop grace, ours is over): stops
// and removes exactly that container. True when one was removed; a name no
// container holds is not an error.
bool RemoveContainer(const std::string& engine_executable, const std::string& name);

}  // namespace primus::runtime
