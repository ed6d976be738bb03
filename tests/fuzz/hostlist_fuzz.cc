// Fuzz target: Slurm host-list expressions (util/hostlist), as they come in
// SLURM_JOB_NODELIST. Parsing, counting and indexing must stay cheap however
// many hosts the list names; full expansion agrees with indexing.
//
// Input: the expression.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "util/hostlist.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string expression(reinterpret_cast<const char*>(data), size);
  primus::Result<primus::Hostlist> list = primus::Hostlist::Parse(expression);
  primus::Result<std::vector<std::string>> hosts = primus::ExpandHostlist(expression);
  primus::Result<std::string> first = primus::FirstHost(expression);
  if (!list.ok()) {
    if (hosts.ok() || first.ok() || list.error().message.empty()) std::abort();
    return 0;
  }
  if (list->empty() != !first.ok()) std::abort();
  if (!list->empty()) {
    if (*first != list->Host(0)) std::abort();
    (void)list->Host(list->size() - 1);
    (void)list->Host(list->size() / 2);
  }
  if (list->size() > primus::kMaxExpandedHosts) {
    if (hosts.ok()) std::abort();
    return 0;
  }
  if (!hosts.ok() || hosts->size() != list->size()) std::abort();
  for (size_t i = 0; i < hosts->size() && i < 64; ++i) {
    if ((*hosts)[i] != list->Host(i)) std::abort();
  }
  return 0;
}
