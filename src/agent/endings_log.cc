#include "agent/endings_log.h"

#include <fmt/format.h>

#include "agent/failure_report.h"
#include "io/signal_channel.h"
#include "util/files.h"

namespace primus::agent {

std::string FormatEndings(const std::vector<WorkerEnding>& endings) {
  std::string text;
  for (const WorkerEnding& ending : endings) {
    std::string stamp = FormatTimestamp(ending.ended_at);
    std::string who = fmt::format("(local rank {}, pid {})", ending.local_rank, ending.pid);
    if (ending.hung) {
      text += fmt::format("{} E rank {}: hung: no output and no heartbeat for {:g} s; stopped by the agent {}\n", stamp,
                          ending.rank, ending.hang_timeout_s, who);
    } else if (ending.stuck_at_exit) {
      text += fmt::format("{} E rank {}: stuck at exit: silent for {:g} s after another rank exited 0 (the work was "
                          "done); stopped by the agent ({}) {}\n",
                          stamp, ending.rank, ending.exit_grace_s,
                          ending.signal != 0 ? io::SignalName(ending.signal) : "exited when asked", who);
    } else if (ending.stopped_by_agent) {
      text += fmt::format("{} O rank {}: stopped by the agent ({}) {}{}\n", stamp, ending.rank,
                          ending.signal != 0 ? io::SignalName(ending.signal) : "exited when asked", who,
                          ending.stop_reason.empty() ? "" : ": " + ending.stop_reason);
    } else if (ending.exit_code == 0) {
      text += fmt::format("{} O rank {}: exited 0 {}\n", stamp, ending.rank, who);
    } else {
      text += fmt::format("{} E rank {}: ended with {} {}\n", stamp, ending.rank,
                          DescribeEnding(ending.exit_code, ending.signal), who);
    }
  }
  return text;
}

Status WriteEndingsLog(const std::string& path, const std::vector<WorkerEnding>& endings) {
  return WriteFileAtomic(path, FormatEndings(endings));
}

Status AppendNodeExclusion(const std::string& path, const std::string& host, const std::string& why, double when) {
  auto before = ReadRegularFile(path, 64 << 20);
  std::string text = before.ok() ? *before : "";
  text += fmt::format("{} E node {}: excluded from the job: {}\n", FormatTimestamp(when), host, why);
  return WriteFileAtomic(path, text);
}

}  // namespace primus::agent
