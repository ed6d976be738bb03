// A task's hooks and patches (hooks/hook_runner.h), found and run the same
// way for every task that starts work: train, run, benchmark and preflight.
// Hooks are looked for, in this order, in:
//   the built-in directory, .primus/hooks (the project's), runner/helpers/hooks
//   (the public Primus scripts' layout), each --hooks-dir, then the task's own
//   (train: the experiment's hooks.dirs);
// in each: global/, <task>/, <task>/<subtask>/. --patch scripts run first.
// train runs them itself (its hooks see the experiment); the others run them
// here before their work: an env. line sets the variable for this process and
// so for everything it starts (never over a variable already set), an
// extra.k=v line adds --k v to the task's arguments (run: to the command).
// A task that starts nothing (analyze, monitor, info) refuses --patch and
// --hooks-dir rather than ignore them.
#pragma once

#include <string>
#include <vector>

#include "hooks/hook_runner.h"
#include "util/error.h"

namespace primus::config {
class LauncherConfig;
}

namespace primus::tasks {

struct TaskScripts {
  std::vector<hooks::Script> patches;
  std::vector<hooks::Script> hooks;
  bool empty() const { return patches.empty() && hooks.empty(); }
  std::vector<hooks::Script> InOrder() const;  // patches, then hooks
};

// The hook directories for a task, in the order above; `more` last.
std::vector<std::string> HookDirectories(const config::LauncherConfig& launcher, const std::vector<std::string>& more = {});

Result<TaskScripts> FindTaskScripts(const config::LauncherConfig& launcher, const std::string& task,
                                    const std::string& subtask, const std::vector<std::string>& more_dirs = {});

// "scripts that would run (none runs under --dry-run):" and one line each, or "(none)".
std::string DescribeTaskScripts(const TaskScripts& scripts);

// Whether `task` runs hooks and patches (train, run, benchmark, preflight).
bool TaskTakesScripts(const std::string& task);

// For run, benchmark and preflight: finds the task's scripts and, unless
// `dry_run` (then it lists them on stdout), runs them; returns the task's
// arguments with the hooks' extra ones added. Any other task given --patch or
// --hooks-dir is a usage error naming them.
Result<std::vector<std::string>> RunTaskScripts(const config::LauncherConfig& launcher, const std::string& task,
                                                std::vector<std::string> args, bool dry_run);

}  // namespace primus::tasks
