#include "io/spawn.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace primus::io {
namespace {

// pidfd_open(2), where the kernel and headers have it.
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

}  // namespace

Result<SpawnedProcess> SpawnProcess(const SpawnRequest& request) {
  if (request.argv.empty() || request.executable.empty()) return UsageError("no program to start");
  std::vector<std::string> argv_copy = request.argv, env_copy = request.environment;
  std::vector<char*> args, envp;
  for (std::string& text : argv_copy) args.push_back(text.data());
  args.push_back(nullptr);
  for (std::string& text : env_copy) envp.push_back(text.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (const auto& [ours, theirs] : request.descriptors) posix_spawn_file_actions_adddup2(&actions, ours, theirs);
  if (!request.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, request.cwd.c_str());

  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t mask, defaults;
  if (request.signal_mask != nullptr) mask = *request.signal_mask;
  else sigemptyset(&mask);
  sigfillset(&defaults);
  for (int signal : request.ignored_signals) sigdelset(&defaults, signal);
  posix_spawnattr_setsigmask(&attributes, &mask);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (request.group == ProcessGroup::kOwn) {
    posix_spawnattr_setpgroup(&attributes, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  posix_spawnattr_setflags(&attributes, flags);

  SpawnedProcess child;
  int rc = posix_spawn(&child.pid, request.executable.c_str(), &actions, &attributes, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) return EnvironmentError("cannot start " + request.argv[0] + ": " + std::strerror(rc));
  child.pidfd = OpenPidfd(child.pid);
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

}  // namespace primus::io
