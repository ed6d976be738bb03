#include "platform/host_info.h"

namespace primus::platform {

const NetInterface* HostInfo::FindInterface(const std::string& name) const {
  for (const NetInterface& interface : interfaces) {
    if (interface.name == name) return &interface;
  }
  return nullptr;
}

const NumaNode* HostInfo::FindNumaNode(int id) const {
  for (const NumaNode& node : numa_nodes) {
    if (node.id == id) return &node;
  }
  return nullptr;
}

}  // namespace primus::platform
