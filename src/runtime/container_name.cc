#include "runtime/container_name.h"


#include "util/random.h"

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

std::string RandomSuffix() { return RandomHex(3); }

}  // namespace primus::runtime
