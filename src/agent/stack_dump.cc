#include "agent/stack_dump.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "agent/process_spawner.h"
#include "agent/unique_fd.h"
#include "util/files.h"

extern char** environ;

namespace primus::agent {

StackDump CollectStacks(pid_t pid, double timeout_s) {
  StackDump dump;
  std::string tool = FindExecutable("py-spy");
  if (tool.empty()) {
    dump.text = "no stack tool found: py-spy is not on PATH (pip install py-spy) - no stacks collected";
    return dump;
  }
  dump.tool_found = true;
  PipeEnds output;
  if (!MakePipe(&output)) {
    dump.text = "cannot create a pipe for py-spy";
    return dump;
  }
  SpawnRequest request;
  request.executable = tool;
  request.argv = {"py-spy", "dump", "--pid", std::to_string(pid)};
  for (char** entry = environ; *entry != nullptr; ++entry) request.env.emplace_back(*entry);
  request.stdout_fd = output.write.get();
  request.stderr_fd = output.write.get();
  auto child = SpawnProcess(request);
  output.write.Reset();
  if (!child.ok()) {
    dump.text = child.error().message;
    return dump;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  char buffer[16384];
  bool timed_out = false;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd waiter{output.read.get(), POLLIN, 0};
    int ready = ::poll(&waiter, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    ssize_t n = ::read(output.read.get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (dump.text.size() < (1 << 20)) dump.text.append(buffer, static_cast<size_t>(n));
  }
  if (timed_out) {
    ::kill(-*child, SIGKILL);
    dump.text += "\n(py-spy did not finish within " + std::to_string(static_cast<int>(timeout_s)) + " s)";
  }
  int status;
  while (waitpid(*child, &status, 0) < 0 && errno == EINTR) {
  }
  return dump;
}

}  // namespace primus::agent
