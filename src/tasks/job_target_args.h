// The arguments of a task that works on one job (monitor, stacks, stop,
// logs): its options, before or after the job, and at most one TARGET (as
// monitor/job_source.h reads it; none: monitor/job_list.h chooses).
#pragma once

#include <string>
#include <vector>

#include "util/error.h"
#include "util/option_parser.h"

namespace primus::tasks {

struct JobTargetArgs {
  std::vector<ParsedOption> options;  // in the order written
  std::string target;                 // "" when none was given
};

// A UsageError for an unknown option (with a suggestion, naming `task`) or
// a second TARGET; `example` is the hint then ("e.g. primus-cli stop RUN_ID").
Result<JobTargetArgs> ParseJobTargetArgs(const std::vector<std::string>& args, const std::vector<OptionSpec>& table,
                                         const std::string& task, const std::string& example);

// What a TARGET may be, for shell completion: the run ids of this user's
// jobs on this host, the running ones first (`running_only`: only those),
// at most 50.
std::vector<std::string> JobTargetWords(bool running_only);

}  // namespace primus::tasks
