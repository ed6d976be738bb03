#include "runtime/container_name.h"

#include <sys/random.h>

#include <chrono>
#include <cstdint>

#include <fmt/format.h>

namespace primus::runtime {
namespace {

std::string Sanitize(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                   c == '.' || c == '-';
    if (!allowed) c = '_';
  }
  return out;
}

}  // namespace

std::string ContainerName(std::string_view job_id, int node_rank, std::string_view suffix) {
  std::string name = "primus-";
  if (!job_id.empty()) name += Sanitize(job_id) + "-";
  name += "n" + std::to_string(node_rank) + "-" + Sanitize(suffix);
  return name;
}

std::string RandomSuffix() {
  uint32_t bits = 0;
  if (getrandom(&bits, sizeof(bits), 0) != static_cast<ssize_t>(sizeof(bits))) {
    bits = static_cast<uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  return fmt::format("{:06x}", bits & 0xffffff);
}

}  // namespace primus::runtime
