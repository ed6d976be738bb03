#include "agent/process_spawner.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

namespace primus::agent {
namespace {

// Everything the child needs, prepared by the parent: the child only reads
// it, and writes `error`/`failed_step` when a step fails.
struct ChildContext {
  const char* path;
  char* const* argv;
  char* const* envp;
  int fds[3];
  sigset_t mask;
  bool own_process_group;
  bool die_with_parent;
  bool close_other_fds;
  const unsigned long* cpu_mask;  // null: keep the agent's affinity
  size_t cpu_mask_bytes;
  pid_t parent_pid;
  int error;
  const char* failed_step;
};

[[noreturn]] void FailChild(ChildContext* context, const char* step) {
  context->error = errno != 0 ? errno : EINVAL;
  context->failed_step = step;
  _exit(127);
}

// Runs in the child, sharing the parent's memory while the parent sleeps:
// system calls only, no allocation, no locks.
int ChildMain(void* argument) {
  auto* context = static_cast<ChildContext*>(argument);
  if (context->own_process_group && setpgid(0, 0) != 0) FailChild(context, "setpgid");
  if (context->die_with_parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) FailChild(context, "prctl(PR_SET_PDEATHSIG)");
    // The agent may have died between clone and prctl: then nobody would kill us.
    if (getppid() != context->parent_pid) _exit(127);
  }
  for (int target = 0; target < 3; ++target) {
    int source = context->fds[target];
    if (source < 0) continue;
    if (source == target) {
      if (fcntl(target, F_SETFD, 0) != 0) FailChild(context, "fcntl");
    } else if (dup2(source, target) < 0) {
      FailChild(context, "dup2");
    }
  }
  if (context->close_other_fds) syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
  if (context->cpu_mask != nullptr &&
      syscall(SYS_sched_setaffinity, 0, context->cpu_mask_bytes, context->cpu_mask) != 0) {
    FailChild(context, "sched_setaffinity");
  }
  if (sigprocmask(SIG_SETMASK, &context->mask, nullptr) != 0) FailChild(context, "sigprocmask");
  execve(context->path, context->argv, context->envp);
  FailChild(context, "execve");
}

std::vector<char*> PointerArray(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (const std::string& text : strings) pointers.push_back(const_cast<char*>(text.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

// The kernel's affinity mask: bit c of word c / bits-per-word is CPU c.
std::vector<unsigned long> CpuMask(const std::vector<int>& cpus) {
  constexpr int kBits = 8 * sizeof(unsigned long);
  std::vector<unsigned long> mask;
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= kMaxCpus) continue;
    size_t word = static_cast<size_t>(cpu / kBits);
    if (mask.size() <= word) mask.resize(word + 1, 0);
    mask[word] |= 1UL << (cpu % kBits);
  }
  return mask;
}

}  // namespace

Result<pid_t> SpawnProcess(const SpawnRequest& request) {
  if (request.argv.empty()) return UsageError("cannot start a process without argv");
  std::vector<char*> argv = PointerArray(request.argv);
  std::vector<char*> envp = PointerArray(request.env);
  std::vector<unsigned long> cpu_mask = CpuMask(request.cpus);
  if (!request.cpus.empty() && cpu_mask.empty()) {
    return UsageError("cannot bind " + request.executable + ": no valid CPU number given");
  }

  ChildContext context{};
  context.path = request.executable.c_str();
  context.argv = argv.data();
  context.envp = envp.data();
  context.fds[0] = request.stdin_fd;
  context.fds[1] = request.stdout_fd;
  context.fds[2] = request.stderr_fd;
  if (request.signal_mask != nullptr) context.mask = *request.signal_mask;
  else sigemptyset(&context.mask);
  context.own_process_group = request.own_process_group;
  context.die_with_parent = request.die_with_parent;
  context.close_other_fds = request.close_other_fds;
  context.cpu_mask = cpu_mask.empty() ? nullptr : cpu_mask.data();
  context.cpu_mask_bytes = cpu_mask.size() * sizeof(unsigned long);
  context.parent_pid = getpid();

  // The child runs on this stack while we sleep (CLONE_VFORK).
  alignas(64) static thread_local char child_stack[32 * 1024];
  pid_t pid = clone(ChildMain, child_stack + sizeof(child_stack), CLONE_VM | CLONE_VFORK | SIGCHLD,
                    &context);
  if (pid < 0) {
    return EnvironmentError("cannot start " + request.executable + ": clone: " + std::strerror(errno),
                            "the process or memory limit may be reached (ulimit -u)");
  }
  if (context.error != 0) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return EnvironmentError("cannot start " + request.executable + ": " + context.failed_step + ": " +
                            std::strerror(context.error));
  }
  return pid;
}

}  // namespace primus::agent
