#include "tasks/job_target_args.h"

#include "monitor/job_list.h"
#include "util/clock.h"
#include "util/strings.h"

namespace primus::tasks {

Result<JobTargetArgs> ParseJobTargetArgs(const std::vector<std::string>& args, const std::vector<OptionSpec>& table,
                                         const std::string& task, const std::string& example) {
  JobTargetArgs parsed;
  std::vector<std::string> targets;
  size_t at = 0;
  while (at < args.size()) {
    auto options = ParseOptions(args, at, {&table}, UnknownOptionPolicy::kReject, task);
    if (!options.ok()) return options.error();
    parsed.options.insert(parsed.options.end(), options->options.begin(), options->options.end());
    at = options->next;
    if (at < args.size()) targets.push_back(args[at++]);
  }
  if (targets.size() > 1) {
    return UsageError(task + " takes one TARGET, not " + std::to_string(targets.size()) + " (" + ShellJoin(targets) + ")",
                      example);
  }
  if (!targets.empty()) parsed.target = targets.front();
  return parsed;
}

std::vector<std::string> JobTargetWords(bool running_only) {
  constexpr size_t kMaxWords = 50;
  std::vector<monitor::JobEntry> jobs = monitor::ListJobs(monitor::SearchPlaces::FromEnvironment(), WallSeconds());
  std::vector<std::string> words;
  for (bool running : {true, false}) {
    if (!running && running_only) break;
    for (const monitor::JobEntry& job : jobs) {
      if (job.running == running && !job.run_id.empty() && words.size() < kMaxWords) words.push_back(job.run_id);
    }
  }
  return words;
}

}  // namespace primus::tasks
