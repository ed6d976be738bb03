#include "runtime/container_process.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/event_poller.h"
#include "io/signal_channel.h"
#include "io/spawn.h"
#include "io/subprocess.h"
#include "io/unique_fd.h"
#include "util/clock.h"
#include "util/environment.h"
#include "util/log.h"

namespace primus::runtime {
namespace {

constexpr size_t kTailBytes = 64 * 1024;
constexpr double kKillAfterRemoveS = 10;

// The engine's client (docker/podman run): its own process group, SIGTERM
// when we die, our original signal mask, stdin from /dev/null, stderr into
// `stderr_fd`.
Result<pid_t> StartClient(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                          const sigset_t& mask, int stderr_fd) {
  io::UniqueFd null_fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!null_fd.valid()) return UnavailableError(std::string("cannot open /dev/null: ") + std::strerror(errno));
  io::SpawnRequest request;
  request.executable = argv[0];
  request.argv = argv;
  request.environment = env;
  request.descriptors = {{null_fd.get(), 0}, {stderr_fd, 2}};
  request.signal_mask = &mask;
  request.death_signal = SIGTERM;
  auto child = io::SpawnProcess(request);
  if (!child.ok()) {
    Error error = child.error();
    error.hint = "check that the container engine is installed and executable";
    return error;
  }
  return child->pid;
}

class ClientWatch {
 public:
  // `poller` holds the signal channel (kSignalsTag) and `stderr_fd`
  // (kStderrTag); the watch takes the descriptor out and closes it.
  ClientWatch(const ContainerRun& run, pid_t pid, io::SignalChannel* signals, io::EventPoller* poller,
              io::UniqueFd stderr_fd)
      : run_(run), pid_(pid), signals_(signals), poller_(poller), stderr_fd_(std::move(stderr_fd)) {}

  static constexpr uint64_t kSignalsTag = 0;
  static constexpr uint64_t kStderrTag = 1;

  ContainerExit Wait() {
    double drain_until = 0;
    while (true) {
      double now = MonotonicSeconds();
      if (exited_ && (!stderr_fd_.valid() || now >= drain_until)) break;
      if (!exited_) Deadlines(now);
      int wait_ms = exited_ ? static_cast<int>((drain_until - now) * 1000) + 1 : NextWaitMs(now);
      for (const epoll_event& event : poller_->Wait(wait_ms)) {
        if (event.data.u64 == kSignalsTag) {
          while (auto info = signals_->Read()) OnSignal(static_cast<int>(info->ssi_signo));
        } else if (stderr_fd_.valid()) {
          ReadStderr();
        }
      }
      if (!exited_ && Reap()) drain_until = MonotonicSeconds() + 0.2;  // what is still in the pipe
    }
    CloseStderr();
    return result_;
  }

 private:
  bool Reap() {
    int status = 0;
    pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done != pid_) return false;
    exited_ = true;
    result_.exit_code = io::ShellStatus(status);
    return true;
  }

  void ReadStderr() {
    char buffer[65536];
    ssize_t n = read(stderr_fd_.get(), buffer, sizeof(buffer));
    if (n > 0) {
      io::WriteAll(2, buffer, static_cast<size_t>(n));
      result_.stderr_tail.append(buffer, static_cast<size_t>(n));
      if (result_.stderr_tail.size() > kTailBytes) {
        result_.stderr_tail.erase(0, result_.stderr_tail.size() - kTailBytes);
      }
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      CloseStderr();
    }
  }

  void CloseStderr() {
    if (!stderr_fd_.valid()) return;
    poller_->Remove(stderr_fd_.get());
    stderr_fd_.Reset();
  }

  void OnSignal(int signal) {
    if (signal == SIGCHLD || exited_) return;
    if (signal != SIGINT && signal != SIGTERM && signal != SIGHUP) {
      kill(pid_, signal);  // SIGUSR1/2: the engine proxies them too
      return;
    }
    if (result_.stop_signal == 0) {
      result_.stop_signal = signal;
      log::Info("{}: stopping container {} (removed if still running in {:g} s)", io::SignalName(signal),
                run_.container_name, run_.stop_grace_s);
      kill(pid_, signal);
      remove_at_ = MonotonicSeconds() + run_.stop_grace_s;
    } else if (!result_.removed) {
      log::Warn("{} again: removing container {} now", io::SignalName(signal), run_.container_name);
      remove_at_ = MonotonicSeconds();
      forced_ = true;
    }
  }

  void Deadlines(double now) {
    if (remove_at_ > 0 && now >= remove_at_ && !result_.removed) {
      if (!forced_) {
        log::Warn("container {} did not stop within {:g} s: removing it", run_.container_name, run_.stop_grace_s);
      }
      RemoveContainer(run_.argv[0], run_.container_name);
      result_.removed = true;
      remove_at_ = 0;
      kill_at_ = MonotonicSeconds() + kKillAfterRemoveS;
    }
    if (kill_at_ > 0 && now >= kill_at_) {
      kill(pid_, SIGKILL);
      kill_at_ = 0;
    }
  }

  int NextWaitMs(double now) const {
    double next = 0;
    for (double at : {remove_at_, kill_at_}) {
      if (at > 0 && (next == 0 || at < next)) next = at;
    }
    // SIGCHLD may have been consumed with others: look again now and then.
    double wait = next > 0 ? std::min(next - now, 0.5) : 0.5;
    return std::max(0, static_cast<int>(wait * 1000) + 1);
  }

  const ContainerRun& run_;
  pid_t pid_;
  io::SignalChannel* signals_;
  io::EventPoller* poller_;
  io::UniqueFd stderr_fd_;
  bool exited_ = false;
  bool forced_ = false;  // a second signal: remove without waiting
  double remove_at_ = 0;
  double kill_at_ = 0;
  ContainerExit result_;
};

}  // namespace

bool RemoveContainer(const std::string& engine_executable, const std::string& name) {
  std::vector<std::string> argv = {engine_executable, "rm", "-f"};
  if (engine_executable.ends_with("podman")) argv.insert(argv.end(), {"-t", "0"});
  argv.push_back(name);
  CommandOptions options;
  options.timeout_s = 60;
  auto result = RunCommand(argv, options);
  if (!result.ok()) {
    log::Warn("cannot remove container {}: {}", name, result.error().message);
    return false;
  }
  log::Debug("{} rm -f {}: exit {} {}", engine_executable, name, result->exit_code, result->Tail(2));
  return result->exit_code == 0;
}

Result<ContainerExit> RunContainer(const ContainerRun& run) {
  auto signals = io::SignalChannel::Open();
  if (!signals.ok()) return signals.error();
  Environment env = ProcessEnvironment();
  for (const auto& [name, value] : run.env_additions) env[name] = value;

  io::PipeEnds err;
  if (!io::MakePipe(&err)) return UnavailableError(std::string("cannot create a pipe: ") + std::strerror(errno));
  auto poller = io::EventPoller::Create();
  if (!poller.ok()) return poller.error();
  if (Status added = poller->Add((*signals)->fd(), ClientWatch::kSignalsTag); !added.ok()) return added.error();
  if (Status added = poller->Add(err.read.get(), ClientWatch::kStderrTag); !added.ok()) return added.error();
  auto pid = StartClient(run.argv, EnvironmentEntries(env), (*signals)->original_mask(), err.write.get());
  err.write.Reset();
  if (!pid.ok()) return pid.error();
  ClientWatch watch(run, *pid, signals->get(), &*poller, std::move(err.read));
  ContainerExit exit = watch.Wait();
  return exit;
}

}  // namespace primus::runtime
