#include "io/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

#include "io/event_poller.h"
#include "io/spawn.h"
#include "io/unique_fd.h"
#include "util/clock.h"
#include "util/environment.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus {
namespace {

std::vector<std::string> BuildEnvironment(const CommandOptions& options) {
  Environment merged;
  if (!options.clear_env) merged = ProcessEnvironment();
  for (const auto& [name, value] : options.env) {
    if (value) merged[name] = *value;
    else merged.erase(name);
  }
  return EnvironmentEntries(merged);
}

// Appends data to a bounded capture, keeping the tail.
void Capture(std::string* sink, const char* data, size_t size, size_t limit) {
  sink->append(data, size);
  if (sink->size() > limit) sink->erase(0, sink->size() - limit);
}

// One read of the command's stdout or stderr into `sink` and, line by line,
// options.on_line; false once the stream ended (it is then out of `poller`
// and closed, its last partial line handed on).
bool ReadStream(bool is_err, io::UniqueFd* stream, io::EventPoller& poller, const CommandOptions& options,
                std::string* sink, std::string* partial) {
  char buffer[65536];
  ssize_t n = read(stream->get(), buffer, sizeof(buffer));
  if (n > 0) {
    Capture(sink, buffer, static_cast<size_t>(n), options.capture_limit);
    if (options.on_line) {
      partial->append(buffer, static_cast<size_t>(n));
      size_t newline;
      while ((newline = partial->find('\n')) != std::string::npos) {
        options.on_line(is_err, partial->substr(0, newline));
        partial->erase(0, newline + 1);
      }
    }
    return true;
  }
  if (n < 0 && errno == EINTR) return true;
  poller.Remove(stream->get());
  stream->Reset();
  if (options.on_line && !partial->empty()) options.on_line(is_err, *partial);
  return false;
}

}  // namespace

std::string CommandResult::Tail(size_t lines) const {
  std::string all = out;
  if (!all.empty() && all.back() != '\n' && !err.empty()) all += '\n';
  all += err;
  std::vector<std::string> split = Split(all, '\n');
  if (!split.empty() && split.back().empty()) split.pop_back();
  size_t from = split.size() > lines ? split.size() - lines : 0;
  return Join(std::vector<std::string>(split.begin() + static_cast<long>(from), split.end()), "\n");
}

Result<CommandResult> RunCommand(const std::vector<std::string>& argv, const CommandOptions& options) {
  if (argv.empty()) return UsageError("no command to run");
  std::string executable = FindExecutable(argv[0]);
  if (executable.empty()) {
    return UnavailableError("command not found: " + argv[0],
                            argv[0].find('/') == std::string::npos ? "install it or add its directory to PATH"
                                                                   : "check the path and that the file is executable");
  }

  io::PipeEnds in, out, err;
  if (!io::MakePipe(&in) || !io::MakePipe(&out) || !io::MakePipe(&err)) {
    return UnavailableError(std::string("cannot create pipes: ") + std::strerror(errno));
  }
  // The loop: stdout (tag 0), stderr (tag 1), stop_fd (kStopTag) until it fires.
  constexpr uint64_t kStopTag = 2;
  auto poller = io::EventPoller::Create();
  if (!poller.ok()) return poller.error();
  if (!poller->Add(out.read.get(), 0).ok() || !poller->Add(err.read.get(), 1).ok()) {
    return UnavailableError(std::string("cannot watch the command's output: ") + std::strerror(errno));
  }
  bool watching_stop = options.stop_fd >= 0 && poller->Add(options.stop_fd, kStopTag).ok();
  io::SpawnRequest request;
  request.executable = executable;
  request.argv = argv;
  request.environment = BuildEnvironment(options);
  request.cwd = options.cwd;
  // Its own process group, so a timeout takes its children too.
  request.group = io::ProcessGroup::kOwn;
  request.descriptors = {{in.read.get(), 0}, {out.write.get(), 1}, {err.write.get(), 2}};
  double started = MonotonicSeconds();
  auto child = io::SpawnProcess(request);
  in.read.Reset();
  out.write.Reset();
  err.write.Reset();
  if (!child.ok()) return child.error();
  pid_t pid = child->pid;

  // stdin: write what we have (small: hook protocol input), then close.
  if (!options.stdin_data.empty()) {
    signal(SIGPIPE, SIG_IGN);
    io::WriteAll(in.write.get(), options.stdin_data.data(), options.stdin_data.size());
  }
  in.write.Reset();

  CommandResult result;
  std::string partial[2];
  std::string* sinks[2] = {&result.out, &result.err};
  io::UniqueFd* streams[2] = {&out.read, &err.read};
  int open_streams = 2;
  double deadline = options.timeout_s > 0 ? MonotonicSeconds() + options.timeout_s : 0;
  double kill_at = 0;
  auto terminate = [&](double now) {
    kill(-pid, SIGTERM);
    kill_at = now + options.kill_grace_s;
    if (watching_stop) poller->Remove(options.stop_fd);
    watching_stop = false;
  };
  while (open_streams > 0) {
    int wait_ms = -1;
    double now = MonotonicSeconds();
    if (deadline > 0 && !result.timed_out && !result.stopped) {
      if (now >= deadline) {
        result.timed_out = true;
        terminate(now);
      } else {
        wait_ms = static_cast<int>((deadline - now) * 1000) + 1;
      }
    }
    if (kill_at > 0) {
      if (now >= kill_at) {
        kill(-pid, SIGKILL);
        kill_at = 0;
      } else {
        wait_ms = static_cast<int>((kill_at - now) * 1000) + 1;
      }
    }
    for (const epoll_event& event : poller->Wait(wait_ms)) {
      if (event.data.u64 == kStopTag) {
        if (!watching_stop) continue;
        result.stopped = true;
        terminate(MonotonicSeconds());
        continue;
      }
      int i = static_cast<int>(event.data.u64);
      if (streams[i]->valid() && !ReadStream(i == 1, streams[i], *poller, options, sinks[i], &partial[i])) {
        --open_streams;
      }
    }
  }
  result.exit_code = io::WaitForExit(pid);
  // Whatever the command left in its group is ours to end.
  kill(-pid, SIGKILL);
  result.seconds = MonotonicSeconds() - started;
  return result;
}

}  // namespace primus
