// Test helper: the roots of a checked-in host fixture tree
// (tests/fixtures/hosts/<name>, written by make_fixtures.py there).
#pragma once

#include <string>

#include "platform/roots.h"

namespace primus::platform {

inline std::string FixtureDir(const std::string& host) {
  return std::string(PRIMUS_SOURCE_DIR) + "/tests/fixtures/hosts/" + host;
}

inline Roots FixtureRoots(const std::string& host) { return Roots::UnderDirectory(FixtureDir(host)); }

}  // namespace primus::platform
