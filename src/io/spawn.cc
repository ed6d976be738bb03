#include "io/spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace primus::io {
namespace {

constexpr size_t kMaxDescriptors = 16;

// Everything the child needs, prepared by the parent: the child only reads
// it, and writes `error`/`failed_step` when a step fails.
struct ChildContext {
  const char* path;
  char* const* argv;
  char* const* envp;
  const char* cwd;  // null: ours
  int descriptors[kMaxDescriptors][2];
  size_t descriptor_count;
  int to_default[NSIG];  // signals ignored here that the child gets at their default
  size_t to_default_count;
  sigset_t mask;
  bool own_group;
  int death_signal;
  const unsigned long* cpu_mask;  // null: keep our affinity
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
// system calls only, no allocation, no locks. (Without CLONE_SIGHAND the
// child's signal dispositions are its own.)
int ChildMain(void* argument) {
  auto* context = static_cast<ChildContext*>(argument);
  if (context->own_group && setpgid(0, 0) != 0) FailChild(context, "setpgid");
  if (context->death_signal != 0) {
    if (prctl(PR_SET_PDEATHSIG, context->death_signal) != 0) FailChild(context, "prctl(PR_SET_PDEATHSIG)");
    // The parent may have died between clone and prctl: then nobody would signal us.
    if (getppid() != context->parent_pid) _exit(127);
  }
  // Every descriptor of ours closes at exec (Linux 5.11+; older kernels
  // keep the ones not marked close-on-exec, which ours all are).
  syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
  for (size_t i = 0; i < context->descriptor_count; ++i) {
    int source = context->descriptors[i][0], target = context->descriptors[i][1];
    if (source == target) {
      if (fcntl(target, F_SETFD, 0) != 0) FailChild(context, "fcntl");
    } else if (dup2(source, target) < 0) {
      FailChild(context, "dup2");
    }
  }
  if (context->cwd != nullptr && chdir(context->cwd) != 0) FailChild(context, "chdir");
  if (context->cpu_mask != nullptr &&
      syscall(SYS_sched_setaffinity, 0, context->cpu_mask_bytes, context->cpu_mask) != 0) {
    FailChild(context, "sched_setaffinity");
  }
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (size_t i = 0; i < context->to_default_count; ++i) sigaction(context->to_default[i], &default_action, nullptr);
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

Result<SpawnedProcess> SpawnProcess(const SpawnRequest& request) {
  if (request.argv.empty() || request.executable.empty()) return UsageError("no program to start");
  if (request.descriptors.size() > kMaxDescriptors) return UsageError("too many descriptors for one child");
  for (const auto& [ours, theirs] : request.descriptors) {
    if (ours < 0 || theirs < 0) return UsageError("cannot start " + request.executable + ": a descriptor to map is not open");
  }
  std::vector<char*> argv = PointerArray(request.argv);
  std::vector<char*> envp = PointerArray(request.environment);
  std::vector<unsigned long> cpu_mask = CpuMask(request.cpus);
  if (!request.cpus.empty() && cpu_mask.empty()) {
    return UsageError("cannot bind " + request.executable + ": no valid CPU number given");
  }

  ChildContext context{};
  context.path = request.executable.c_str();
  context.argv = argv.data();
  context.envp = envp.data();
  context.cwd = request.cwd.empty() ? nullptr : request.cwd.c_str();
  for (const auto& [ours, theirs] : request.descriptors) {
    context.descriptors[context.descriptor_count][0] = ours;
    context.descriptors[context.descriptor_count][1] = theirs;
    ++context.descriptor_count;
  }
  // Handlers reset themselves at exec; what we ignore would not.
  for (int signal = 1; signal < NSIG; ++signal) {
    if (signal == SIGKILL || signal == SIGSTOP) continue;
    if (std::find(request.kept_signals.begin(), request.kept_signals.end(), signal) != request.kept_signals.end()) {
      continue;
    }
    struct sigaction current {};
    if (sigaction(signal, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) {
      context.to_default[context.to_default_count++] = signal;
    }
  }
  if (request.signal_mask != nullptr) context.mask = *request.signal_mask;
  else sigemptyset(&context.mask);
  context.own_group = request.group == ProcessGroup::kOwn;
  context.death_signal = request.death_signal;
  context.cpu_mask = cpu_mask.empty() ? nullptr : cpu_mask.data();
  context.cpu_mask_bytes = cpu_mask.size() * sizeof(unsigned long);
  context.parent_pid = getpid();

  // The child runs on this stack while we sleep (CLONE_VFORK).
  alignas(64) static thread_local char child_stack[32 * 1024];
  pid_t pid = clone(ChildMain, child_stack + sizeof(child_stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &context);
  if (pid < 0) {
    return UnavailableError("cannot start " + request.executable + ": clone: " + std::strerror(errno),
                            "the process or memory limit may be reached (ulimit -u)");
  }
  if (context.error != 0) {
    WaitForExit(pid);
    return UnavailableError("cannot start " + request.executable + ": " + context.failed_step + ": " +
                            std::strerror(context.error));
  }
  SpawnedProcess child;
  child.pid = pid;
  child.pidfd = OpenPidfd(pid);
  return child;
}

int ShellStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return -1;
}

int WaitForExit(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return ShellStatus(status);
}

UniqueFd OpenPidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  long fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd >= 0) {
    ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
    return UniqueFd(static_cast<int>(fd));
  }
#else
  (void)pid;
#endif
  return UniqueFd();
}


bool SignalThroughPidfd(int pidfd, int signal) {
#ifdef SYS_pidfd_send_signal
  return ::syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0) == 0;
#else
  (void)pidfd;
  (void)signal;
  return false;
#endif
}

}  // namespace primus::io
