#include "runtime/ssh_session.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>

#include "io/event_poller.h"
#include "io/signal_channel.h"
#include "io/spawn.h"
#include "io/unique_fd.h"
#include "util/files.h"
#include "util/log.h"
#include "util/environment.h"


namespace primus::runtime {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point After(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

struct Child {
  const SshSession* session = nullptr;
  pid_t pid = -1;
  io::UniqueFd in, out, err;
  std::string out_partial, err_partial;
  std::optional<int> status;
  std::string last_err_line;
};

// Whole lines of `data` to `fd`, each with `prefix`; the rest stays in `partial`.
void EmitLines(Child* child, bool is_err, std::string_view data, bool flush) {
  std::string& partial = is_err ? child->err_partial : child->out_partial;
  partial.append(data);
  std::string prefix = is_err ? "[" + child->session->host + "] " : "";
  std::string out;
  size_t start = 0, newline;
  while ((newline = partial.find('\n', start)) != std::string::npos) {
    std::string_view line(partial.data() + start, newline - start);
    out += prefix;
    out.append(line);
    out.push_back('\n');
    if (is_err && !line.empty()) child->last_err_line = std::string(line);
    start = newline + 1;
  }
  partial.erase(0, start);
  if ((flush && !partial.empty()) || partial.size() > 65536) {
    out += prefix + partial + "\n";
    if (is_err) child->last_err_line = partial;
    partial.clear();
  }
  if (!out.empty()) io::WriteAll(is_err ? STDERR_FILENO : STDOUT_FILENO, out.data(), out.size());
}

// A child's stdout or stderr in the event loop (tag 0 is the signal channel).
uint64_t StreamTag(size_t child, bool is_err) { return 1 + 2 * static_cast<uint64_t>(child) + (is_err ? 1 : 0); }

Result<pid_t> Spawn(const std::vector<std::string>& argv, int in, int out, int err, const sigset_t& mask) {
  std::string executable = FindExecutable(argv.front());
  if (executable.empty()) {
    return UnavailableError(argv.front() + " not found on PATH", "install the OpenSSH client: apt install openssh-client");
  }
  io::SpawnRequest request;
  request.executable = executable;
  request.argv = argv;
  request.environment = EnvironmentEntries(ProcessEnvironment());
  request.group = io::ProcessGroup::kOwn;  // Ctrl-C is ours to handle
  request.descriptors = {{in, 0}, {out, 1}, {err, 2}};
  request.signal_mask = &mask;
  auto child = io::SpawnProcess(request);
  if (!child.ok()) return child.error();
  return child->pid;
}

}  // namespace

int JobExitCode(const std::vector<int>& statuses, int signal) {
  if (signal != 0) return 128 + signal;
  for (int status : statuses) {
    if (status != 255 && status >= 0) return status;
  }
  return 255;
}

namespace {

// The ssh clients of one job and the loop that watches them: their output
// to our console, our signals, their ends, and the deadlines that follow a
// stop, a lost session or node 0's end.
class SessionGroup {
 public:
  SessionGroup(const std::vector<SshSession>& sessions, const SessionOptions& options)
      : sessions_(sessions), options_(options), children_(sessions.size()) {}

  // Opens the signal channel and the event loop, then starts every client
  // and hands it the token; on a failure the ones started are stopped.
  Status Start() {
    auto channel = io::SignalChannel::Open();
    if (!channel.ok()) return channel.error();
    channel_ = std::move(*channel);
    auto poller = io::EventPoller::Create();
    if (!poller.ok()) return poller.error();
    poller_.emplace(std::move(*poller));
    if (Status added = poller_->Add(channel_->fd(), kSignalsTag); !added.ok()) return added.error();
    for (size_t i = 0; i < sessions_.size(); ++i) {
      if (Status started = StartChild(i); !started.ok()) {
        for (Child& child : children_) {
          if (child.pid > 0) ::kill(child.pid, SIGTERM);
          child.in.Reset(), child.out.Reset(), child.err.Reset();
        }
        for (Child& child : children_) {
          if (child.pid > 0) ::waitpid(child.pid, nullptr, 0);
        }
        return started;
      }
    }
    return Status::Ok();
  }

  // Runs until every client ended and its output was read; the job's exit code.
  int Run() {
    while (running() > 0 || std::any_of(children_.begin(), children_.end(),
                                        [](const Child& c) { return c.out.valid() || c.err.valid(); })) {
      const std::vector<epoll_event>& events = poller_->Wait(running() > 0 ? WaitMs() : 200);
      bool signalled = false;
      for (const epoll_event& event : events) {
        if (event.data.u64 == kSignalsTag) {
          signalled = true;
        } else {
          ReadStream(event.data.u64);
        }
      }
      if (events.empty() && running() == 0) {
        // Every ssh ended; a grandchild (a ProxyCommand) may hold the pipes open.
        for (Child& child : children_) EmitLines(&child, false, {}, true), EmitLines(&child, true, {}, true),
                                       CloseStream(&child.out), CloseStream(&child.err);
      }
      if (signalled) ReadSignals();
      ReapChildren();
      Deadlines();
    }
    statuses_.clear();
    for (const Child& child : children_) statuses_.push_back(child.status.value_or(255));
    return JobExitCode(statuses_, stop_signal_);
  }

 public:
  const std::vector<int>& statuses() const { return statuses_; }

 private:
  static constexpr uint64_t kSignalsTag = 0;
  std::vector<int> statuses_;  // each session's exit status, once Run ended
  // A lost session: the agents stop the job among themselves (the lost
  // node's agent had a hangup, or is lost to node 0); the other stdins are
  // closed only if the job is still running this much later (before every
  // node joined, node 0 would otherwise wait out its join timeout). Closing
  // them at once would cut sessions whose agents are reporting the job's end.
  static constexpr double kLostSessionStopDelayS = 3;

  Status StartChild(size_t i) {
    Child& child = children_[i];
    child.session = &sessions_[i];
    io::PipeEnds in, out, err;
    if (!io::MakePipe(&in) || !io::MakePipe(&out) || !io::MakePipe(&err)) {
      return UnavailableError(std::string("cannot create pipes for ssh: ") + std::strerror(errno));
    }
    Result<pid_t> pid = Spawn(sessions_[i].argv, in.read.get(), out.write.get(), err.write.get(),
                              channel_->original_mask());
    if (!pid.ok()) return pid.error();
    child.pid = *pid;
    child.in = std::move(in.write);
    child.out = std::move(out.read);
    child.err = std::move(err.read);
    std::string token_line = options_.token + "\n";
    io::WriteAll(child.in.get(), token_line.data(), token_line.size());  // far below a pipe's buffer: never blocks
    (void)poller_->Add(child.out.get(), StreamTag(i, false));
    (void)poller_->Add(child.err.get(), StreamTag(i, true));
    return Status::Ok();
  }

  size_t running() const {
    size_t n = 0;
    for (const Child& child : children_) n += !child.status.has_value();
    return n;
  }

  // Up to a second, less when a deadline comes sooner.
  int WaitMs() const {
    int timeout_ms = 1000;
    if (stop_pending_) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(stop_at_ - Clock::now()).count();
      timeout_ms = static_cast<int>(std::clamp<int64_t>(left, 0, timeout_ms));
    }
    if (kill_at_) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*kill_at_ - Clock::now()).count();
      timeout_ms = static_cast<int>(std::clamp<int64_t>(left, 0, 1000));
    }
    return timeout_ms;
  }

  void CloseStream(io::UniqueFd* fd) {
    if (!fd->valid()) return;
    poller_->Remove(fd->get());
    fd->Reset();
  }

  void ReadStream(uint64_t tag) {
    Child* child = &children_[(tag - 1) / 2];
    bool is_err = (tag - 1) % 2 == 1;
    io::UniqueFd* fd = is_err ? &child->err : &child->out;
    if (!fd->valid()) return;
    char buffer[65536];
    ssize_t n = ::read(fd->get(), buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) return;
    if (n <= 0) {
      EmitLines(child, is_err, {}, true);
      CloseStream(fd);
    } else {
      EmitLines(child, is_err, std::string_view(buffer, static_cast<size_t>(n)), false);
    }
  }

  // The first SIGINT/SIGTERM/SIGHUP closes every session's input (the
  // agents stop their workers); the second ends the sessions.
  void ReadSignals() {
    while (auto info = channel_->Read()) {
      int signal = static_cast<int>(info->ssi_signo);
      if (signal == SIGCHLD) continue;  // reaped below
      if (signal != SIGINT && signal != SIGTERM && signal != SIGHUP) continue;
      if (stop_signal_ == 0) {
        stop_signal_ = signal;
        log::Warn("{}: stopping the workers on every host (again to end the ssh sessions at once)",
                  io::SignalName(signal));
        StopAll();
        kill_at_ = After(options_.stop_grace_s);
      } else {
        TerminateAll("stopped again");
      }
    }
  }

  void ReapChildren() {
    for (size_t i = 0; i < children_.size(); ++i) {
      Child& child = children_[i];
      if (child.status) continue;
      int status = 0;
      pid_t done = ::waitpid(child.pid, &status, WNOHANG);
      if (done != child.pid) continue;
      child.status = io::ShellStatus(status);
      child.in.Reset();
      log::Debug("[{}] ssh exited with {}", child.session->host, *child.status);
      if (*child.status == 255 && !terminated_ && stop_signal_ == 0) OnLostSession(child);
      if (i == 0 && running() > 0 && !kill_at_) kill_at_ = After(options_.finish_grace_s);
    }
  }

  void OnLostSession(const Child& child) {
    std::string why = child.last_err_line;
    while (!why.empty() && (why.back() == '\r' || why.back() == ' ')) why.pop_back();
    log::Error("[{}] the ssh session ended with ssh's own failure (exit 255){}: the job stops on every host",
               child.session->host, why.empty() ? "" : ": " + why);
    if (!lost_session_) {
      stop_pending_ = true;
      stop_at_ = After(kLostSessionStopDelayS);
      kill_at_ = After(kLostSessionStopDelayS + options_.stop_grace_s);
    }
    lost_session_ = true;
  }

  void Deadlines() {
    if (stop_pending_ && Clock::now() >= stop_at_) {
      stop_pending_ = false;
      if (running() > 0 && stop_signal_ == 0) {
        log::Warn("the job still runs {:g} s after a lost ssh session: closing every session's input",
                  kLostSessionStopDelayS);
        StopAll();
      }
    }
    if (kill_at_ && Clock::now() >= *kill_at_ && running() > 0 && !terminated_) {
      TerminateAll(stop_signal_ ? "still running after the stop grace" : "still running after node 0 ended");
    }
    if (terminated_ && !sigkill_at_) sigkill_at_ = Clock::now() + std::chrono::seconds(5);
    if (sigkill_at_ && Clock::now() >= *sigkill_at_) {
      for (Child& child : children_) {
        if (!child.status) ::kill(child.pid, SIGKILL);
      }
      sigkill_at_ = Clock::now() + std::chrono::hours(1);
    }
  }

  void StopAll() {
    for (Child& child : children_) child.in.Reset();
  }

  void TerminateAll(const char* why) {
    if (terminated_) return;
    terminated_ = true;
    for (Child& child : children_) {
      if (!child.status) {
        log::Warn("[{}] {}: ending its ssh session", child.session->host, why);
        ::kill(child.pid, SIGTERM);
      }
    }
  }

  const std::vector<SshSession>& sessions_;
  const SessionOptions& options_;
  std::unique_ptr<io::SignalChannel> channel_;
  std::optional<io::EventPoller> poller_;  // our signals (kSignalsTag), every child's stdout and stderr (StreamTag)
  std::vector<Child> children_;
  int stop_signal_ = 0;
  std::optional<Clock::time_point> kill_at_;  // ssh clients still running then are terminated
  bool terminated_ = false;
  bool lost_session_ = false;
  bool stop_pending_ = false;
  Clock::time_point stop_at_{};
  std::optional<Clock::time_point> sigkill_at_;  // then SIGKILL
};

}  // namespace

Result<int> RunSessions(const std::vector<SshSession>& sessions, const SessionOptions& options,
                        std::vector<int>* statuses) {
  SessionGroup group(sessions, options);
  if (Status started = group.Start(); !started.ok()) return started.error();
  int code = group.Run();
  if (statuses != nullptr) *statuses = group.statuses();
  return code;
}

}  // namespace primus::runtime
