// The batch script `primus-cli slurm sbatch` writes and submits. Unlike the
// public Primus script (whose body starts the launcher on the first node
// only), its body starts one node agent on every node of the allocation:
//
//   #!/bin/bash
//   #SBATCH --job-name=run
//   #SBATCH --nodes=2
//   #SBATCH --output=/work/output/run_%j/logs/slurm-%j.out
//   # Written by primus-cli 0.1.0 for: primus-cli slurm sbatch -N 2 -- direct -- run ...
//   # ...
//   exec /usr/bin/primus-cli slurm srun -- direct -- run ...
//
// The body runs `primus-cli slurm srun` rather than srun itself so that the
// job ends with the failing rank's own exit code (srun alone reports the
// SIGTERM it sent to the other nodes: slurm_step_runner.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/error.h"

namespace primus::runtime {

// Nothing in it is executable text made from user input: every argument of
// the body is quoted by ShellQuote (one line, exact), comment lines have
// their control characters escaped, and a directive (one #SBATCH line, read
// by sbatch, not bash) may hold none.
struct BatchScript {
  // One #SBATCH line each, already joined: "--nodes=2", "--mem 4G".
  std::vector<std::string> directives;
  std::vector<std::string> comment_lines;  // without the leading "# "
  std::vector<std::string> command;        // the body's command, exec'd
};

std::string RenderBatchScript(const BatchScript& script);

// Pass-through sbatch flags as directives: each flag starts one, the values
// that follow it join it ("--mem", "4G" -> "--mem 4G"), shell-quoted where
// needed (sbatch reads quotes in #SBATCH lines). A value with no flag before
// it is a UsageError naming `action` ("srun" checks its flags the same way:
// a leading word would become srun's command), and so is a control
// character in any of them (CheckDirectiveText).
Result<std::vector<std::string>> DirectivesFromFlags(const std::vector<std::string>& flags,
                                                     const std::string& action = "sbatch");

// A UsageError naming `action` when `text` (a flag or value bound for a
// #SBATCH line) holds a control character: a line break would end the
// directive and start a command.
Status CheckDirectiveText(const std::string& text, const std::string& action = "sbatch");

// Whether `flags` (as the user wrote them) set one of these options, long
// ("--output", "--output=x") or short ("-o", "-ox").
bool HasFlag(const std::vector<std::string>& flags, const std::string& long_name, const std::string& short_name);
// The value the last of those options gives ("--output=x", "--output x", "-ox",
// "-o x"); nullopt when none does.
std::optional<std::string> FlagValue(const std::vector<std::string>& flags, const std::string& long_name,
                                     const std::string& short_name);

// Slurm's file name pattern (--output/--error) of a batch job's output, as
// sbatch expands it: %j the job id, %A the array's master id (the job id
// here), %a the array index (4294967294 outside an array, as Slurm writes
// it), %J "<job id>.batch", %x the job name, %u the user, %N the node that
// runs the batch script (its BatchHost), %n and %t 0 (the batch script is
// node 0 and task 0), %s "batch", %% a percent sign, \\ nothing (no
// expansion at all); a number between % and the letter pads with zeros
// (%5j). nullopt when the pattern needs what is not known yet (%N before
// the job started: `batch_host` empty) or holds a letter Slurm does not
// expand.
struct JobFileNames {
  std::string job_id, job_name, user;
  std::string batch_host;  // "" until the job runs
};
std::optional<std::string> ExpandJobFilePattern(const std::string& pattern, const JobFileNames& names);

}  // namespace primus::runtime
