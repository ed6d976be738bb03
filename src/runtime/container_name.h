// The name of the container one launch starts: primus-<job>-n<rank>-<random>,
// e.g. primus-4711-n0-3fa9c2 (no job part outside a scheduler's job). The
// job id and node rank say whose it is in `podman ps`; the random suffix
// makes it unique even for two launches of the same job and node, so that
// cleanup by this name can only ever reach this launch's own container.
#pragma once

#include <string>
#include <string_view>

namespace primus::runtime {

// Pure: the name from its parts. Characters a container name may not hold
// (anything outside [A-Za-z0-9_.-]) become '_'.
std::string ContainerName(std::string_view job_id, int node_rank, std::string_view suffix);

// Six random hex digits (getrandom).
std::string RandomSuffix();

}  // namespace primus::runtime
