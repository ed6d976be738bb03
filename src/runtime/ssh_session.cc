#include "runtime/ssh_session.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
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

Result<int> RunSessions(const std::vector<SshSession>& sessions, const SessionOptions& options) {
  auto channel = io::SignalChannel::Open();
  if (!channel.ok()) return channel.error();
  const sigset_t& mask = (*channel)->original_mask();

  // The event loop: our signals (tag 0) and every child's stdout and stderr
  // (StreamTag), each taken out before it is closed.
  auto poller = io::EventPoller::Create();
  if (!poller.ok()) return poller.error();
  if (Status added = poller->Add((*channel)->fd(), 0); !added.ok()) return added.error();
  auto close_stream = [&](io::UniqueFd* fd) {
    if (!fd->valid()) return;
    poller->Remove(fd->get());
    fd->Reset();
  };

  std::vector<Child> children(sessions.size());
  for (size_t i = 0; i < sessions.size(); ++i) {
    Child& child = children[i];
    child.session = &sessions[i];
    io::PipeEnds in, out, err;
    if (!io::MakePipe(&in) || !io::MakePipe(&out) || !io::MakePipe(&err)) {
      return UnavailableError(std::string("cannot create pipes for ssh: ") + std::strerror(errno));
    }
    Result<pid_t> pid = Spawn(sessions[i].argv, in.read.get(), out.write.get(), err.write.get(), mask);
    child.in = std::move(in.write);
    child.out = std::move(out.read);
    child.err = std::move(err.read);
    if (!pid.ok()) {
      for (Child& started : children) {
        if (started.pid > 0) ::kill(started.pid, SIGTERM);
        started.in.Reset(), started.out.Reset(), started.err.Reset();
      }
      for (Child& started : children) {
        if (started.pid > 0) ::waitpid(started.pid, nullptr, 0);
      }
      return pid.error();
    }
    child.pid = *pid;
    std::string token_line = options.token + "\n";
    io::WriteAll(child.in.get(), token_line.data(), token_line.size());  // far below a pipe's buffer: never blocks
    (void)poller->Add(child.out.get(), StreamTag(i, false));
    (void)poller->Add(child.err.get(), StreamTag(i, true));
  }

  int stop_signal = 0;
  std::optional<Clock::time_point> kill_at;  // ssh clients still running then are terminated
  bool terminated = false;
  bool lost_session = false;
  // A lost session: the agents stop the job among themselves (the lost
  // node's agent had a hangup, or is lost to node 0); the other stdins are
  // closed only if the job is still running this much later (before every
  // node joined, node 0 would otherwise wait out its join timeout). Closing
  // them at once would cut sessions whose agents are reporting the job's end.
  constexpr double kLostSessionStopDelayS = 3;
  bool stop_pending = false;
  Clock::time_point stop_at{};
  std::optional<Clock::time_point> sigkill_at;  // then SIGKILL
  auto running = [&] {
    size_t n = 0;
    for (const Child& child : children) n += !child.status.has_value();
    return n;
  };
  auto terminate_all = [&](const char* why) {
    if (terminated) return;
    terminated = true;
    for (Child& child : children) {
      if (!child.status) {
        log::Warn("[{}] {}: ending its ssh session", child.session->host, why);
        ::kill(child.pid, SIGTERM);
      }
    }
  };
  auto stop_all = [&] {
    for (Child& child : children) child.in.Reset();
  };

  while (running() > 0 || std::any_of(children.begin(), children.end(),
                                       [](const Child& c) { return c.out.valid() || c.err.valid(); })) {
    int timeout_ms = 1000;
    if (stop_pending) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(stop_at - Clock::now()).count();
      timeout_ms = static_cast<int>(std::clamp<int64_t>(left, 0, timeout_ms));
    }
    if (kill_at) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*kill_at - Clock::now()).count();
      timeout_ms = static_cast<int>(std::clamp<int64_t>(left, 0, 1000));
    }
    const std::vector<epoll_event>& events = poller->Wait(running() > 0 ? timeout_ms : 200);
    bool signalled = false;
    char buffer[65536];
    for (const epoll_event& event : events) {
      if (event.data.u64 == 0) {
        signalled = true;
        continue;
      }
      Child* child = &children[(event.data.u64 - 1) / 2];
      bool is_err = (event.data.u64 - 1) % 2 == 1;
      io::UniqueFd* fd = is_err ? &child->err : &child->out;
      if (!fd->valid()) continue;
      ssize_t n = ::read(fd->get(), buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        EmitLines(child, is_err, {}, true);
        close_stream(fd);
      } else {
        EmitLines(child, is_err, std::string_view(buffer, static_cast<size_t>(n)), false);
      }
    }
    if (events.empty() && running() == 0) {
      // Every ssh ended; a grandchild (a ProxyCommand) may hold the pipes open.
      for (Child& child : children) EmitLines(&child, false, {}, true), EmitLines(&child, true, {}, true),
                                    close_stream(&child.out), close_stream(&child.err);
    }
    if (signalled) {
      while (auto info = (*channel)->Read()) {
        int signal = static_cast<int>(info->ssi_signo);
        if (signal == SIGCHLD) continue;  // reaped below
        if (signal != SIGINT && signal != SIGTERM && signal != SIGHUP) continue;
        if (stop_signal == 0) {
          stop_signal = signal;
          log::Warn("{}: stopping the workers on every host (again to end the ssh sessions at once)",
                    io::SignalName(signal));
          stop_all();
          kill_at = After(options.stop_grace_s);
        } else {
          terminate_all("stopped again");
        }
      }
    }
    for (size_t i = 0; i < children.size(); ++i) {
      Child& child = children[i];
      if (child.status) continue;
      int status = 0;
      pid_t done = ::waitpid(child.pid, &status, WNOHANG);
      if (done != child.pid) continue;
      child.status = io::ShellStatus(status);
      child.in.Reset();
      log::Debug("[{}] ssh exited with {}", child.session->host, *child.status);
      if (*child.status == 255 && !terminated && stop_signal == 0) {
        std::string why = child.last_err_line;
        while (!why.empty() && (why.back() == '\r' || why.back() == ' ')) why.pop_back();
        log::Error("[{}] the ssh session ended with ssh's own failure (exit 255){}: the job stops on every host",
                   child.session->host, why.empty() ? "" : ": " + why);
        if (!lost_session) {
          stop_pending = true;
          stop_at = After(kLostSessionStopDelayS);
          kill_at = After(kLostSessionStopDelayS + options.stop_grace_s);
        }
        lost_session = true;
      }
      if (i == 0 && running() > 0 && !kill_at) {
        kill_at = After(options.finish_grace_s);
      }
    }
    if (stop_pending && Clock::now() >= stop_at) {
      stop_pending = false;
      if (running() > 0 && stop_signal == 0) {
        log::Warn("the job still runs {:g} s after a lost ssh session: closing every session's input",
                  kLostSessionStopDelayS);
        stop_all();
      }
    }
    if (kill_at && Clock::now() >= *kill_at && running() > 0 && !terminated) {
      terminate_all(stop_signal ? "still running after the stop grace" : "still running after node 0 ended");
    }
    if (terminated && !sigkill_at) sigkill_at = Clock::now() + std::chrono::seconds(5);
    if (sigkill_at && Clock::now() >= *sigkill_at) {
      for (Child& child : children) {
        if (!child.status) ::kill(child.pid, SIGKILL);
      }
      sigkill_at = Clock::now() + std::chrono::hours(1);
    }
  }
  std::vector<int> statuses;
  for (const Child& child : children) statuses.push_back(child.status.value_or(255));
  return JobExitCode(statuses, stop_signal);
}

}  // namespace primus::runtime
