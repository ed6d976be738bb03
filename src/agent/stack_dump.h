// Python stacks of a hung worker, taken before it is killed: the one piece of
// evidence a hang leaves. Uses `py-spy dump --pid` when py-spy is on PATH
// (bounded by a timeout, so a stuck dump cannot stall the teardown), and says
// plainly that no stack tool was found otherwise.
#pragma once

#include <sys/types.h>

#include <string>

namespace primus::agent {

struct StackDump {
  bool tool_found = false;
  std::string text;  // the tool's output, or why there is none
};

StackDump CollectStacks(pid_t pid, double timeout_s = 20);

}  // namespace primus::agent
