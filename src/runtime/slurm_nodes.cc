#include "runtime/slurm_nodes.h"

#include <cstdint>
#include <optional>
#include <string>

#include "util/strings.h"

namespace primus::runtime {
namespace {

constexpr int64_t kMaxNodes = 1 << 18;  // docs/configuration.md, "Limits"

std::optional<int64_t> Count(std::string_view text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  std::optional<int64_t> value = ParseInt(text);
  if (!value || *value < 1 || *value > kMaxNodes) return std::nullopt;
  return value;
}

}  // namespace

Result<std::string> SlurmNodeCount(std::string_view text, std::string_view where) {
  std::string value(Trim(text));
  if (value.empty() || value == "0") return std::string();
  auto bad = [&](const std::string& why) {
    return ConfigError(std::string(where) + ": slurm.nodes '" + std::string(text) + "' " + why,
                       "give a node count (-N 4) or a range Slurm may choose from (-N 2-4), from 1 to 262144");
  };
  size_t dash = value.find('-');
  if (dash == std::string::npos) {
    if (!Count(value)) return bad("is not a number of nodes");
    return value;
  }
  std::optional<int64_t> low = Count(value.substr(0, dash)), high = Count(value.substr(dash + 1));
  if (!low || !high) return bad("is not a range MIN-MAX of node counts");
  if (*low > *high) return bad("asks for at least " + std::to_string(*low) + " but at most " + std::to_string(*high));
  return std::to_string(*low) + "-" + std::to_string(*high);
}

}  // namespace primus::runtime
