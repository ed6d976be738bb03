#include "runtime/slurm_job_watch.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>

#include "io/signal_channel.h"
#include "io/subprocess.h"
#include "util/files.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus::runtime {
namespace {

// Waits `seconds` or until SIGINT, SIGTERM or SIGHUP arrives on `channel`;
// the signal, or 0 when none came. Other signals (a child's SIGCHLD) do not
// end the wait.
int WaitForInterrupt(io::SignalChannel& channel, double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (true) {
    if (int signal = channel.ReadStopSignal(); signal != 0) return signal;
    auto left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return 0;
    pollfd watch{channel.fd(), POLLIN, 0};
    ::poll(&watch, 1, static_cast<int>(left * 1000) + 1);
  }
}

// Copies what a file gains to stdout; the file may not exist yet.
class LogFollower {
 public:
  explicit LogFollower(std::string path) : path_(std::move(path)) {}
  ~LogFollower() {
    if (fd_ >= 0) ::close(fd_);
  }
  LogFollower(const LogFollower&) = delete;
  LogFollower& operator=(const LogFollower&) = delete;
  // Starts following `path` (one that was not known at the start).
  void Follow(std::string path) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    path_ = std::move(path);
  }

  void CopyNew() {
    if (path_.empty()) return;
    if (fd_ < 0) fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return;
    char buffer[65536];
    while (true) {
      ssize_t n = ::read(fd_, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      for (ssize_t done = 0; done < n;) {
        ssize_t written = ::write(1, buffer + done, static_cast<size_t>(n - done));
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return;
        done += written;
      }
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// Slurm's client commands answer in milliseconds; 30 s means the controller is gone.
CommandOptions Bounded() {
  CommandOptions options;
  options.timeout_s = 30;
  return options;
}

// "Key=value" from `scontrol show job` text, or nullopt.
std::optional<std::string> Field(std::string_view text, std::string_view key) {
  std::string needle = std::string(key) + "=";
  size_t at = 0;
  while ((at = text.find(needle, at)) != std::string_view::npos) {
    if (at == 0 || text[at - 1] == ' ' || text[at - 1] == '\n') {
      size_t start = at + needle.size();
      size_t end = text.find_first_of(" \n", start);
      return std::string(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    }
    at += needle.size();
  }
  return std::nullopt;
}

// "7:0" -> code 7, signal 0.
bool ParseExitPair(std::string_view text, JobEnd* end) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) return false;
  std::optional<int64_t> code = ParseInt(text.substr(0, colon));
  std::optional<int64_t> signal = ParseInt(text.substr(colon + 1));
  if (!code || !signal) return false;
  end->exit_code = static_cast<int>(*code);
  end->signal = static_cast<int>(*signal);
  return true;
}

Result<JobEnd> ReadJobEnd(const std::string& job_id) {
  auto shown = RunCommand({"scontrol", "show", "job", job_id}, Bounded());
  if (shown.ok() && shown->exit_code == 0) {
    if (Result<JobEnd> end = ParseScontrolJob(shown->out); end.ok()) return end;
  }
  if (!FindExecutable("sacct").empty()) {
    auto accounted = RunCommand({"sacct", "-n", "-X", "-P", "-o", "State,ExitCode", "-j", job_id}, Bounded());
    if (accounted.ok() && accounted->exit_code == 0) {
      if (Result<JobEnd> end = ParseSacctLine(accounted->out); end.ok()) return end;
    }
  }
  return UnavailableError("job " + job_id + " has ended, but neither scontrol nor sacct knows its exit code any more",
                          "the controller forgets finished jobs after MinJobAge; look at the job's log for the result");
}

}  // namespace

Result<JobEnd> ParseScontrolJob(std::string_view text) {
  std::optional<std::string> state = Field(text, "JobState");
  std::optional<std::string> exit = Field(text, "ExitCode");
  JobEnd end;
  if (!state || !exit || !ParseExitPair(*exit, &end)) {
    return UnavailableError("scontrol show job printed no JobState= and ExitCode= fields");
  }
  end.state = *state;
  return end;
}

Result<JobEnd> ParseSacctLine(std::string_view text) {
  std::string_view line = Trim(text.substr(0, text.find('\n')));
  size_t bar = line.find('|');
  JobEnd end;
  if (bar == std::string_view::npos || !ParseExitPair(line.substr(bar + 1), &end)) {
    return UnavailableError("sacct printed no State|ExitCode line");
  }
  std::string_view state = line.substr(0, bar);
  end.state = std::string(state.substr(0, state.find(' ')));  // "CANCELLED by 0"
  return end;
}

bool IsFinalJobState(std::string_view state) {
  for (std::string_view final_state : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
                                       "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "SPECIAL_EXIT"}) {
    if (state == final_state) return true;
  }
  return false;
}

int JobExitStatus(const JobEnd& end) {
  if (end.signal != 0) return 128 + end.signal;
  if (end.exit_code == 0 && end.state != "COMPLETED") return static_cast<int>(ExitCode::kTaskFailed);
  return end.exit_code;
}

namespace {

// How following one job ended.
struct Followed {
  int status = 0;
  int cancelled_by = 0;  // the signal that cancelled it, or 0
};

Result<Followed> FollowOneJob(const FollowOptions& options, const std::string& id, io::SignalChannel& channel) {
  std::string first_path = options.log_path ? options.log_path(id, "") : "";
  LogFollower log(first_path);
  int interrupted_by = 0;
  int cancelled_by = 0;
  int failed_polls = 0;
  std::string last_state;
  bool log_resolved = !first_path.empty() || !options.log_path;
  while (true) {
    if (interrupted_by != 0 && cancelled_by == 0) {
      cancelled_by = interrupted_by;
      log::Warn("interrupted: cancelling job {}", id);
      auto cancel = RunCommand({"scancel", id}, Bounded());
      if (!cancel.ok()) return cancel.error();
      if (cancel->exit_code != 0) log::Warn("scancel {} failed: {}", id, cancel->Tail(3));
    }
    auto queued = RunCommand({"squeue", "-h", "-j", id, "-o", "%T"}, Bounded());
    if (!queued.ok()) return queued.error();
    log.CopyNew();
    if (queued->exit_code != 0) {
      // Once the controller has forgotten the job, squeue calls its id invalid.
      if (queued->err.find("Invalid job id") != std::string::npos) break;
      if (++failed_polls >= 20) {
        return UnavailableError("squeue -j " + id + " keeps failing: " + queued->Tail(3),
                                "is the Slurm controller reachable? the job itself may still be running");
      }
    } else {
      failed_polls = 0;
      std::string state(Trim(queued->out));
      if (state.empty()) {
        // Gone from the queue. A job being requeued can drop out of squeue
        // for a moment: only a final state in scontrol ends the wait.
        Result<JobEnd> end = ReadJobEnd(id);
        if (!end.ok() || IsFinalJobState(end->state) || cancelled_by != 0) break;
        state = end->state;
      }
      if (state != last_state) log::Info("job {}: {}", id, state);
      last_state = state;
      if (state == "RUNNING" && !log_resolved) {
        auto host = RunCommand({"squeue", "-h", "-j", id, "-o", "%B"}, Bounded());
        std::string batch_host = host.ok() && host->exit_code == 0 ? std::string(Trim(host->out)) : "";
        if (!batch_host.empty() && batch_host.find_first_of("/ \n") == std::string::npos) {
          log_resolved = true;
          std::string path = options.log_path(id, batch_host);
          if (!path.empty()) {
            log.Follow(path);
            log::Info("job {} runs its script on {}: following {}", id, batch_host, path);
          }
        }
      }
    }
    if (int signal = WaitForInterrupt(channel, options.poll_s); signal != 0 && interrupted_by == 0) {
      interrupted_by = signal;
    }
  }
  log.CopyNew();
  Result<JobEnd> end = ReadJobEnd(id);
  if (cancelled_by != 0) return Followed{128 + cancelled_by, cancelled_by};
  if (!end.ok()) return end.error();
  int status = JobExitStatus(*end);
  log::Info("job {} ended: {} (exit code {}:{}), exit status {}", id, end->state, end->exit_code, end->signal, status);
  return Followed{status, 0};
}

}  // namespace

Result<int> FollowJob(const FollowOptions& options) {
  // Our signals as events: a Ctrl-C while we wait cancels the job.
  auto channel = io::SignalChannel::Open();
  if (!channel.ok()) return channel.error();
  std::string id = options.job_id;
  while (true) {
    Result<Followed> followed = FollowOneJob(options, id, **channel);
    // The job has ended: a Ctrl-C queued now is read here, not delivered (and
    // fatal) when the channel closes.
    int late_signal = (*channel)->ReadStopSignal();
    if (!followed.ok()) return followed.error();
    std::optional<std::string> next = options.continued_as ? options.continued_as(id) : std::nullopt;
    if (!next) return followed->status;
    if (followed->cancelled_by != 0 || late_signal != 0) {
      log::Warn("cancelling job {} too: job {} had submitted it to go on", *next, id);
      auto cancel = RunCommand({"scancel", *next}, Bounded());
      if (!cancel.ok() || cancel->exit_code != 0) log::Warn("scancel {} failed", *next);
      return followed->cancelled_by != 0 ? followed->status : 128 + late_signal;
    }
    log::Info("job {} goes on as job {}: following it", id, *next);
    id = *next;
  }
}

}  // namespace primus::runtime
