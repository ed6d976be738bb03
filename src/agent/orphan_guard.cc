#include "agent/orphan_guard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

namespace primus::agent {
namespace {

enum GuardOp : int32_t { kWatchGroup = 1, kForgetGroups = 2, kDisarm = 3 };
struct GuardMessage {
  int32_t op;
  int32_t value;
};

constexpr int kMaxGroups = 4096;
constexpr size_t kMaxToken = 128;

struct linux_dirent64 {
  ino64_t d_ino;
  off64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

// Parses a decimal pid; 0 when `name` is not one.
pid_t ParsePid(const char* name) {
  pid_t pid = 0;
  for (; *name != '\0'; ++name) {
    if (*name < '0' || *name > '9') return 0;
    pid = pid * 10 + (*name - '0');
  }
  return pid;
}

void FormatPath(char* out, pid_t pid, const char* leaf) {
  char digits[16];
  int length = 0;
  do {
    digits[length++] = static_cast<char>('0' + pid % 10);
    pid /= 10;
  } while (pid > 0);
  const char* head = "/proc/";
  while (*head) *out++ = *head++;
  while (length > 0) *out++ = digits[--length];
  *out++ = '/';
  while (*leaf) *out++ = *leaf++;
  *out = '\0';
}

// True when the NUL-separated environment block holds `entry` whole.
bool EnvironmentHolds(const char* block, size_t size, const char* entry, size_t length) {
  size_t start = 0;
  while (start < size) {
    const char* end = static_cast<const char*>(memchr(block + start, '\0', size - start));
    size_t item = end ? static_cast<size_t>(end - (block + start)) : size - start;
    if (item == length && memcmp(block + start, entry, length) == 0) return true;
    start += item + 1;
  }
  return false;
}

void SleepMs(long milliseconds) {
  timespec pause{0, milliseconds * 1000000L};
  nanosleep(&pause, nullptr);
}

[[noreturn]] void GuardMain(int channel, const char* token_entry, size_t token_length) {
  setpgid(0, 0);
  prctl(PR_SET_NAME, "primus-guard");
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2, SIGTSTP, SIGTTIN, SIGTTOU}) {
    ::signal(signal, SIG_IGN);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // Keep only stderr (for the one line we print) and the channel.
  if (channel != 3) {
    dup2(channel, 3);
    channel = 3;
  }
  syscall(SYS_close_range, 4U, ~0U, 0U);
  int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd >= 0) {
    dup2(null_fd, 0);
    dup2(null_fd, 1);
    close(null_fd);
  }

  static pid_t groups[kMaxGroups];
  int group_count = 0;
  static GuardMessage messages[64];
  while (true) {
    ssize_t n = read(channel, messages, sizeof(messages));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the agent is gone
    for (size_t i = 0; i < static_cast<size_t>(n) / sizeof(GuardMessage); ++i) {
      switch (messages[i].op) {
        case kWatchGroup:
          if (group_count < kMaxGroups) groups[group_count++] = messages[i].value;
          break;
        case kForgetGroups: group_count = 0; break;
        case kDisarm: _exit(0);
      }
    }
  }

  int killed = 0;
  for (int i = 0; i < group_count; ++i) {
    if (groups[i] > 1 && kill(-groups[i], SIGKILL) == 0) ++killed;
  }
  // Processes that left the groups (setsid daemons) still carry the token.
  // Repeat: one may fork while we scan.
  for (int round = 0; round < 50; ++round) {
    int found = KillProcessesCarrying(token_entry, token_length);
    killed += found;
    if (found == 0) break;
    SleepMs(2);
  }
  if (killed > 0) {
    static const char kMessage[] =
        "[primus-guard] the agent exited without stopping its workers; killed them and their children\n";
    ssize_t ignored = write(2, kMessage, sizeof(kMessage) - 1);
    (void)ignored;
  }
  _exit(0);
}

}  // namespace

int KillProcessesCarrying(const char* token_entry, size_t token_length) {
  static char entries[16384];
  static char environment[256 * 1024];
  int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc < 0) return 0;
  pid_t self = getpid();
  int killed = 0;
  while (true) {
    long bytes = syscall(SYS_getdents64, proc, entries, sizeof(entries));
    if (bytes <= 0) break;
    for (long offset = 0; offset < bytes;) {
      auto* entry = reinterpret_cast<linux_dirent64*>(entries + offset);
      offset += entry->d_reclen;
      pid_t pid = ParsePid(entry->d_name);
      if (pid <= 1 || pid == self) continue;
      char path[64];
      FormatPath(path, pid, "environ");
      int fd = open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      size_t size = 0;
      while (size < sizeof(environment)) {
        ssize_t n = read(fd, environment + size, sizeof(environment) - size);
        if (n <= 0) break;
        size += static_cast<size_t>(n);
      }
      close(fd);
      if (EnvironmentHolds(environment, size, token_entry, token_length) && kill(pid, SIGKILL) == 0) {
        ++killed;
      }
    }
  }
  close(proc);
  return killed;
}

Result<std::unique_ptr<OrphanGuard>> OrphanGuard::Start(std::string_view token_entry) {
  if (token_entry.empty() || token_entry.size() >= kMaxToken) {
    return UsageError("orphan guard token must be 1.." + std::to_string(kMaxToken - 1) + " bytes");
  }
  char token[kMaxToken] = {};
  std::memcpy(token, token_entry.data(), token_entry.size());
  size_t token_length = token_entry.size();

  io::PipeEnds channel;
  if (!io::MakePipe(&channel)) {
    return UnavailableError(std::string("cannot create the orphan guard's pipe: ") + std::strerror(errno));
  }
  pid_t guard = fork();
  if (guard < 0) {
    return UnavailableError(std::string("cannot fork the orphan guard: ") + std::strerror(errno));
  }
  if (guard == 0) GuardMain(channel.read.get(), token, token_length);
  std::unique_ptr<OrphanGuard> result(new OrphanGuard());
  result->channel_ = std::move(channel.write);
  result->pid_ = guard;
  return result;
}

OrphanGuard::~OrphanGuard() {
  Send(kDisarm, 0);
  channel_.Reset();
  if (exited_) return;
  int status;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

void OrphanGuard::WatchGroup(pid_t process_group) { Send(kWatchGroup, process_group); }
void OrphanGuard::ForgetGroups() { Send(kForgetGroups, 0); }

void OrphanGuard::Send(int op, int value) {
  if (!channel_.valid()) return;
  GuardMessage message{op, value};
  // 8 bytes: below PIPE_BUF, so the write is atomic. A dead guard gives
  // EPIPE (SIGPIPE is blocked by the agent); nothing else to do about it.
  io::WriteAll(channel_.get(), reinterpret_cast<const char*>(&message), sizeof(message));
}

}  // namespace primus::agent
