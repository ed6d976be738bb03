#include "tasks/job_target_args.h"

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

}  // namespace primus::tasks
