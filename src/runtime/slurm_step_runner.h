// Runs srun in the foreground and returns the job's exit status as the user
// should see it.
//
// srun's own status is the highest of its tasks': when one node's agent
// fails with 7 and srun (--kill-on-bad-exit) terminates the others, srun
// exits 143 (the SIGTERM it sent them). The root cause is the first task end
// srun reports on its stderr, "srun: error: node2: task 1: Exited with exit
// code 7", so that code is returned. srun's stderr passes through us line by
// line for this; its stdout is left alone.
//
// srun runs in our process group, so a terminal's Ctrl-C reaches it
// directly and srun's own handling stays (one Ctrl-C: status, two: abort).
// Signals another process sends to primus-cli (kill, slurmstepd at scancel)
// are forwarded to srun.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace primus::runtime {

// One "srun: error: <node>: task(s) <ids>: <how>" line.
struct SrunTaskEnd {
  std::string node;
  std::string tasks;       // "1", "0-1"
  int exit_code = -1;      // "Exited with exit code N"; -1 when it ended otherwise
  std::string how;         // the text after the task ids: "Terminated", "Exited with exit code 7"
};

std::optional<SrunTaskEnd> ParseSrunTaskEnd(std::string_view line);

// srun's status, unless srun failed and the first task end it reported was
// a non-zero exit code: then that code.
int RootCauseStatus(int srun_status, const std::vector<SrunTaskEnd>& ends);

// Runs `argv` (argv[0] is "srun", found on PATH) with this process's
// environment plus `extra_env`. An Error only when srun cannot be started.
// `ends`: where srun's reports of its tasks' ends go, when wanted.
Result<int> RunSrunStep(const std::vector<std::string>& argv, const std::map<std::string, std::string>& extra_env,
                        std::vector<SrunTaskEnd>* ends = nullptr);

}  // namespace primus::runtime
