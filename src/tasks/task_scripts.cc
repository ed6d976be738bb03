#include "tasks/task_scripts.h"

#include <cstdlib>
#include <iostream>

#include "config/launcher_config.h"
#include "util/log.h"
#include "util/strings.h"

namespace primus::tasks {
namespace {

// Where the public Primus scripts keep their hooks, relative to the current directory.
constexpr const char* kPrimusHooksDirectory = "runner/helpers/hooks";

}  // namespace

std::vector<hooks::Script> TaskScripts::InOrder() const {
  std::vector<hooks::Script> scripts = patches;
  scripts.insert(scripts.end(), hooks.begin(), hooks.end());
  return scripts;
}

std::vector<std::string> HookDirectories(const config::LauncherConfig& launcher, const std::vector<std::string>& more) {
  std::vector<std::string> dirs;
  if (std::string builtin = hooks::BuiltinHooksDirectory(); !builtin.empty()) dirs.push_back(builtin);
  dirs.push_back(".primus/hooks");
  dirs.push_back(kPrimusHooksDirectory);
  for (const std::string& dir : launcher.GetStringList("direct.hooks_dir")) dirs.push_back(dir);
  dirs.insert(dirs.end(), more.begin(), more.end());
  return dirs;
}

Result<TaskScripts> FindTaskScripts(const config::LauncherConfig& launcher, const std::string& task,
                                    const std::string& subtask, const std::vector<std::string>& more_dirs) {
  TaskScripts scripts;
  auto found = hooks::FindHooks({HookDirectories(launcher, more_dirs), task, subtask, {kPrimusHooksDirectory}});
  if (!found.ok()) return found.error();
  scripts.hooks = std::move(*found);
  auto patches = hooks::PreparePatches(launcher.GetStringList("direct.patch"));
  if (!patches.ok()) return patches.error();
  scripts.patches = std::move(*patches);
  return scripts;
}

std::string DescribeTaskScripts(const TaskScripts& scripts) {
  return "scripts that would run (none runs under --dry-run):\n" +
         (scripts.empty() ? std::string("  (none)\n") : hooks::DescribeScripts(scripts.InOrder()));
}

bool TaskTakesScripts(const std::string& task) {
  return task == "train" || task == "run" || task == "benchmark" || task == "preflight";
}

Result<std::vector<std::string>> RunTaskScripts(const config::LauncherConfig& launcher, const std::string& task,
                                                std::vector<std::string> args, bool dry_run) {
  if (!TaskTakesScripts(task)) {
    std::vector<std::string> given;
    if (!launcher.GetStringList("direct.patch").empty()) given.push_back("--patch");
    if (!launcher.GetStringList("direct.hooks_dir").empty()) given.push_back("--hooks-dir");
    if (given.empty()) return args;
    return UsageError(Join(given, " and ") + (given.size() == 1 ? " applies" : " apply") +
                          " to train, run, benchmark and preflight, not to '" + task + "'",
                      "leave them out for '" + task + "', which starts nothing to prepare for");
  }
  // A subtask is the first argument when it is a word (benchmark gemm); run's is its command, not a subtask.
  std::string subtask = task != "run" && !args.empty() && !args[0].starts_with("-") ? args[0] : "";
  // `benchmark worker ...` is what the benchmark's own workers run: its
  // launcher ran the scripts already.
  if (task == "benchmark" && subtask == "worker") return args;
  auto scripts = FindTaskScripts(launcher, task, subtask);
  if (!scripts.ok()) return scripts.error();
  if (dry_run) {
    std::cout << DescribeTaskScripts(*scripts);
    return args;
  }
  if (scripts->empty()) return args;
  hooks::HookContext context;
  context.node_rank = static_cast<int>(launcher.GetInt("direct.node_rank"));
  context.args = {task};
  context.args.insert(context.args.end(), args.begin(), args.end());
  context.env = {{"PRIMUS_TASK", task},
                 {"PRIMUS_SUBTASK", subtask},
                 {"NODE_RANK", std::to_string(context.node_rank)},
                 {"NNODES", std::to_string(launcher.GetInt("direct.nnodes"))}};
  auto outcome = hooks::RunScripts(scripts->InOrder(), context);
  if (!outcome.ok()) return outcome.error();
  for (const auto& [name, value] : outcome->env) {
    if (const char* set = std::getenv(name.c_str()); set != nullptr && value != set) {
      log::Warn("a hook sets {}, which is already set here: the value set here is kept", name);
      continue;
    }
    ::setenv(name.c_str(), value.c_str(), 0);
  }
  if (!outcome->extra_args.empty()) {
    log::Info("the hooks add to the {}: {}", task == "run" ? "command" : task + " arguments", ShellJoin(outcome->extra_args));
    args.insert(args.end(), outcome->extra_args.begin(), outcome->extra_args.end());
  }
  return args;
}

}  // namespace primus::tasks
