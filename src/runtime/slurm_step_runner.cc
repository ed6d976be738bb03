#include "runtime/slurm_step_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/files.h"
#include "util/log.h"
#include "util/environment.h"
#include "util/strings.h"

namespace primus::runtime {
namespace {

constexpr std::string_view kErrorPrefix = "srun: error: ";
constexpr std::string_view kExited = "Exited with exit code ";

volatile sig_atomic_t g_srun_pid = 0;
volatile sig_atomic_t g_pending_signal = 0;  // arrived before srun was started

void ForwardToSrun(int signal, siginfo_t* info, void*) {
  // Signals the kernel generates (a terminal's Ctrl-C, hangup) reach srun in
  // our process group by themselves; forwarding them would double them.
  if (info != nullptr && info->si_code > 0) return;
  pid_t pid = g_srun_pid;
  if (pid > 0) ::kill(pid, signal);
  else g_pending_signal = signal;
}

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

// Installs the forwarding handlers for as long as it lives: from before srun
// starts (a signal in between is passed on once it runs) to after it ended.
class SignalForwarding {
 public:
  SignalForwarding() {
    g_srun_pid = 0;
    g_pending_signal = 0;
    struct sigaction action = {};
    action.sa_sigaction = ForwardToSrun;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < std::size(kForwardedSignals); ++i) sigaction(kForwardedSignals[i], &action, &previous_[i]);
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &previous_pipe_);
  }
  ~SignalForwarding() {
    for (size_t i = 0; i < std::size(kForwardedSignals); ++i) sigaction(kForwardedSignals[i], &previous_[i], nullptr);
    sigaction(SIGPIPE, &previous_pipe_, nullptr);
    g_srun_pid = 0;
  }
  void Started(pid_t pid) {
    g_srun_pid = pid;
    if (int pending = g_pending_signal; pending != 0) ::kill(pid, pending);
  }
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

 private:
  struct sigaction previous_[std::size(kForwardedSignals)];
  struct sigaction previous_pipe_;
};

void WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

}  // namespace

std::optional<SrunTaskEnd> ParseSrunTaskEnd(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (!line.starts_with(kErrorPrefix)) return std::nullopt;
  line.remove_prefix(kErrorPrefix.size());
  size_t node_end = line.find(": task");
  if (node_end == std::string_view::npos || node_end == 0) return std::nullopt;
  SrunTaskEnd end;
  end.node = std::string(line.substr(0, node_end));
  std::string_view rest = line.substr(node_end + 2);
  if (rest.starts_with("tasks ")) rest.remove_prefix(6);
  else if (rest.starts_with("task ")) rest.remove_prefix(5);
  else return std::nullopt;
  size_t ids_end = rest.find(": ");
  if (ids_end == std::string_view::npos || ids_end == 0) return std::nullopt;
  end.tasks = std::string(rest.substr(0, ids_end));
  if (end.tasks.find_first_not_of("0123456789,-") != std::string::npos) return std::nullopt;
  end.how = std::string(rest.substr(ids_end + 2));
  if (std::string_view(end.how).starts_with(kExited)) {
    std::optional<int64_t> code = ParseInt(std::string_view(end.how).substr(kExited.size()));
    if (!code || *code < 0 || *code > 255) return std::nullopt;
    end.exit_code = static_cast<int>(*code);
  }
  return end;
}

int RootCauseStatus(int srun_status, const std::vector<SrunTaskEnd>& ends) {
  if (srun_status == 0 || ends.empty()) return srun_status;
  const SrunTaskEnd& first = ends.front();
  return first.exit_code > 0 ? first.exit_code : srun_status;
}

Result<int> RunSrunStep(const std::vector<std::string>& argv, const std::map<std::string, std::string>& extra_env) {
  if (argv.empty()) return UsageError("no srun command to run");
  std::string executable = FindExecutable(argv[0]);
  if (executable.empty()) {
    return EnvironmentError(argv[0] + " not found on PATH: this host is not a Slurm client",
                            "run on a Slurm login node (or install the Slurm client: apt install slurm-client); "
                            "without Slurm, run primus-cli direct --nnodes N --node-rank R --master-addr A on each node");
  }
  std::map<std::string, std::string> environment = ProcessEnvironment();
  for (const auto& [name, value] : extra_env) environment[name] = value;
  std::vector<std::string> env_strings;
  for (const auto& [name, value] : environment) env_strings.push_back(name + "=" + value);
  std::vector<char*> envp, args;
  for (std::string& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (std::string& arg : argv_copy) args.push_back(arg.data());
  args.push_back(nullptr);

  int err_pipe[2];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    return EnvironmentError(std::string("cannot create a pipe for srun's output: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  SignalForwarding forwarding;
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, executable.c_str(), &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(err_pipe[1]);
  if (spawned != 0) {
    ::close(err_pipe[0]);
    return EnvironmentError("cannot start " + executable + ": " + std::strerror(spawned));
  }

  forwarding.Started(pid);
  std::vector<SrunTaskEnd> ends;
  std::string partial;
  char buffer[8192];
  while (true) {
    ssize_t n = ::read(err_pipe[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    WriteAll(2, buffer, static_cast<size_t>(n));
    partial.append(buffer, static_cast<size_t>(n));
    size_t newline;
    while ((newline = partial.find('\n')) != std::string::npos) {
      if (auto end = ParseSrunTaskEnd(std::string_view(partial).substr(0, newline))) ends.push_back(*end);
      partial.erase(0, newline + 1);
    }
    if (partial.size() > 65536) partial.clear();  // not a line srun wrote about a task
  }
  ::close(err_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  int srun_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  int reported = RootCauseStatus(srun_status, ends);
  if (reported != srun_status) {
    log::Info("first failure: {} task {} exited with {}; srun then stopped the other nodes (srun's status {})",
              ends.front().node, ends.front().tasks, reported, srun_status);
  }
  return reported;
}

}  // namespace primus::runtime
