// The pinned upstream archives of ../shared/upstream/ (its README lists
// them), unpacked for a test: the one place C++ tests read them from (the
// Python tools use tests/tools/upstream.py). A test whose archive is absent
// skips, naming it.
#pragma once

#include <string>

#include "util/error.h"

namespace primus::testing {

// ../shared/upstream/<name> beside the source tree.
std::string UpstreamArchive(const std::string& name);

// Unpacks archive `name` into `into`; its top directory
// ("<into>/primus-fd1eeabb"), or an error naming the archive when it is
// absent or cannot be unpacked.
Result<std::string> UnpackUpstream(const std::string& name, const std::string& into);

}  // namespace primus::testing
