#include "agent/stack_dump.h"

#include "util/files.h"
#include "util/subprocess.h"

namespace primus::agent {

StackDump CollectStacks(pid_t pid, double timeout_s) {
  StackDump dump;
  if (FindExecutable("py-spy").empty()) {
    dump.text = "no stack tool found: py-spy is not on PATH (pip install py-spy) - no stacks collected";
    return dump;
  }
  dump.tool_found = true;
  CommandOptions options;
  options.timeout_s = timeout_s;
  options.capture_limit = 1 << 20;
  auto result = RunCommand({"py-spy", "dump", "--pid", std::to_string(pid)}, options);
  if (!result.ok()) {
    dump.text = result.error().message;
    return dump;
  }
  dump.text = result->out;
  if (!result->err.empty()) dump.text += (dump.text.empty() ? "" : "\n") + result->err;
  if (result->timed_out) dump.text += "\n(py-spy did not finish within " + std::to_string(static_cast<int>(timeout_s)) + " s)";
  return dump;
}

}  // namespace primus::agent
