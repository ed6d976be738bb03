#include "runtime/slurm_step_runner.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "io/event_poller.h"
#include "io/signal_channel.h"
#include "io/spawn.h"
#include "io/unique_fd.h"
#include "util/environment.h"
#include "util/files.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus::runtime {
namespace {

constexpr std::string_view kErrorPrefix = "srun: error: ";
constexpr std::string_view kExited = "Exited with exit code ";

// What we forward to srun: srun passes them on to the tasks (SIGINT twice
// within a second cancels the step, as srun's own users expect).
constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

bool Forwarded(int signal) {
  for (int forwarded : kForwardedSignals) {
    if (forwarded == signal) return true;
  }
  return false;
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

namespace {

// Until srun closes its stderr: its lines to ours, the task endings it
// reports kept, and our forwarded signals passed on to it. `poller` holds
// srun's stderr (tag 0) and the channel (tag 1).
std::vector<SrunTaskEnd> WatchSrun(io::EventPoller& poller, io::SignalChannel& channel, int srun_stderr, pid_t pid) {
  std::vector<SrunTaskEnd> ends;
  std::string partial;
  char buffer[8192];
  while (true) {
    for (const epoll_event& event : poller.Wait(-1)) {
      if (event.data.u64 == 1) {
        while (std::optional<signalfd_siginfo> info = channel.Read()) {
          // Signals the kernel generates (a terminal's Ctrl-C, hangup) reach
          // srun in our process group by themselves; forwarding them would
          // double them.
          if (info->ssi_code > 0 || !Forwarded(static_cast<int>(info->ssi_signo))) continue;
          ::kill(pid, static_cast<int>(info->ssi_signo));
        }
        continue;
      }
      ssize_t n = ::read(srun_stderr, buffer, sizeof(buffer));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return ends;
      io::WriteAll(2, buffer, static_cast<size_t>(n));
      partial.append(buffer, static_cast<size_t>(n));
      size_t newline;
      while ((newline = partial.find('\n')) != std::string::npos) {
        if (auto end = ParseSrunTaskEnd(std::string_view(partial).substr(0, newline))) ends.push_back(*end);
        partial.erase(0, newline + 1);
      }
      if (partial.size() > 65536) partial.clear();  // not a line srun wrote about a task
    }
  }
}

}  // namespace

Result<int> RunSrunStep(const std::vector<std::string>& argv, const std::map<std::string, std::string>& extra_env,
                        std::vector<SrunTaskEnd>* ends_out) {
  if (argv.empty()) return UsageError("no srun command to run");
  std::string executable = FindExecutable(argv[0]);
  if (executable.empty()) {
    return UnavailableError(argv[0] + " not found on PATH: this host is not a Slurm client",
                            "run on a Slurm login node (or install the Slurm client: apt install slurm-client); "
                            "without Slurm, run primus-cli direct --nnodes N --node-rank R --master-addr A on each node");
  }
  std::map<std::string, std::string> environment = ProcessEnvironment();
  for (const auto& [name, value] : extra_env) environment[name] = value;
  io::PipeEnds err;
  if (!io::MakePipe(&err)) {
    return UnavailableError(std::string("cannot create a pipe for srun's output: ") + std::strerror(errno));
  }
  // Our signals arrive as events from before srun starts (one in between is
  // passed on once it runs) to after it ended.
  auto channel = io::SignalChannel::Open({SIGQUIT});
  if (!channel.ok()) return channel.error();
  io::SpawnRequest request;
  request.executable = executable;
  request.argv = argv;
  request.environment = EnvironmentEntries(environment);
  request.group = io::ProcessGroup::kCallers;  // a terminal's Ctrl-C reaches srun as it reaches us
  request.descriptors = {{err.write.get(), 2}};
  request.signal_mask = &(*channel)->original_mask();
  for (int signal : kForwardedSignals) {
    if ((*channel)->WasIgnored(signal)) request.kept_signals.push_back(signal);  // nohup's SIGHUP
  }
  auto poller = io::EventPoller::Create();
  if (!poller.ok()) return poller.error();
  if (Status added = poller->Add(err.read.get(), 0); !added.ok()) return added.error();
  if (Status added = poller->Add((*channel)->fd(), 1); !added.ok()) return added.error();
  auto child = io::SpawnProcess(request);
  err.write.Reset();
  if (!child.ok()) return child.error();
  pid_t pid = child->pid;

  std::vector<SrunTaskEnd> ends = WatchSrun(*poller, **channel, err.read.get(), pid);
  err.read.Reset();
  int srun_status = io::WaitForExit(pid);
  // srun has ended: what is queued now is read here, not delivered (and
  // fatal) when the channel closes.
  (*channel)->ReadStopSignal();
  int reported = RootCauseStatus(srun_status, ends);
  if (reported != srun_status) {
    log::Info("first failure: {} task {} exited with {}; srun then stopped the other nodes (srun's status {})",
              ends.front().node, ends.front().tasks, reported, srun_status);
  }
  if (ends_out != nullptr) *ends_out = ends;
  return reported;
}

}  // namespace primus::runtime
