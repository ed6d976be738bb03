// For tests only: the path of a fixture under src/config/testdata/.
#pragma once

#include <string>
#include <string_view>

namespace primus::config {

inline std::string TestDataPath(std::string_view name) {
  return std::string(PRIMUS_SOURCE_DIR) + "/src/config/testdata/" + std::string(name);
}

}  // namespace primus::config
