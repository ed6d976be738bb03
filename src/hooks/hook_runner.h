// Hooks and patches: the small scripts that run before a task (prepare a
// dataset, check the environment, apply a hotfix), compatible with the public
// Primus protocol so existing scripts keep working:
//
//   hooks:   <dir>/global/NN_name, <dir>/<task>/NN_name, <dir>/<task>/<subtask>/NN_name
//            from the built-in, project (.primus/hooks) and --hooks-dir directories,
//            each directory's files in lexical order. Non-zero exit aborts the launch.
//   patches: --patch FILE, in the order given. Exit 0 applied, 2 skipped, else abort.
//
// A script's stdout lines `env.K=V` set K for the workers (and later hooks),
// `extra.k=v` add `--k v` to the task's arguments; other lines are shown.
// A hook whose name contains ".once." or whose first lines say
// `# primus: run-once` runs on node 0 only. `# primus: timeout=SECONDS` sets
// its timeout (default 300 s). Under --dry-run the plan lists them; none runs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "util/error.h"

namespace primus::hooks {

struct Script {
  enum class Kind { kHook, kPatch };
  Kind kind = Kind::kHook;
  std::string path;
  std::vector<std::string> argv;  // how it is run (interpreter for non-executable .sh/.py)
  bool run_once = false;
  double timeout_s = 300;
};

// The built-in hooks beside the binary: <prefix>/share/primus/hooks for an
// installed bin/primus-cli, or the repository's hooks/ for build/primus-cli.
// "" when neither exists.
std::string BuiltinHooksDirectory();

// The Python hook API (python/primus_hooks.py) beside the binary:
// <prefix>/share/primus-cli/python installed, the repository's python/ for
// build/primus-cli; "" when neither exists. RunScripts puts it first on
// every script's PYTHONPATH, and sets PRIMUS_HOOK_KIND (hook or patch).
std::string PythonApiDirectory();

// `relative` (a file of that directory: "megatron_option_table.py",
// "primus_stacks/sitecustomize.py") when it is there; "" otherwise.
std::string PythonApiFile(const std::string& relative);

// The example trainer (examples/gpt: train.py and its modules) beside the
// binary: <prefix>/share/primus-cli/examples/gpt installed, the repository's
// examples/gpt for build/primus-cli; "" when neither exists. `init` names it.
std::string ExampleTrainerDirectory();

struct HookQuery {
  std::vector<std::string> directories;  // searched in this order
  std::string task;
  std::string subtask;
  // Directories in the public Primus runner's layout (runner/helpers/hooks):
  // their own *.sh and *.py files are its global hooks (other files there are
  // not hooks: Primus's runner skips them too), before global/.
  std::vector<std::string> primus_layout;
};

// Hooks that apply to a task, in execution order. Unreadable directories are
// skipped; a file that cannot be run (not executable, unknown type) is a
// ConfigError naming it, so a typo never silently drops a hook.
Result<std::vector<Script>> FindHooks(const HookQuery& query);
// --patch FILE values, checked to exist.
Result<std::vector<Script>> PreparePatches(const std::vector<std::string>& files);
// One script at `path` (a replay's recorded copy), read as FindHooks reads hooks.
Result<Script> PrepareScript(const std::string& path, Script::Kind kind);

struct ScriptOutcome {
  std::string path;
  int exit_code = 0;
  bool skipped = false;  // a patch that exited 2, or a run-once hook on another node
  double seconds = 0;
  std::map<std::string, std::string> env;  // what this script's env. lines set
  std::vector<std::string> extra_args;     // and its extra. lines added
};

struct HookContext {
  std::map<std::string, std::string> env;  // given to each script on top of ours; env.K lines add to it
  int node_rank = 0;
  std::string cwd;
  // Given to every script after its own argv: the task and its arguments
  // (`train pretrain --config exp.yaml ...`), as Primus's runner gives its hooks.
  std::vector<std::string> args;
};

struct RunOutcome {
  std::map<std::string, std::string> env;  // from env.K=V lines (later scripts override earlier ones)
  std::vector<std::string> extra_args;     // from extra.k=v lines: --k v
  std::vector<ScriptOutcome> scripts;
};

// Runs the scripts in order. A failure is a TaskError naming the script, its
// exit code (or timeout) and the tail of its output.
Result<RunOutcome> RunScripts(const std::vector<Script>& scripts, const HookContext& context);

// One line per script for --dry-run.
std::string DescribeScripts(const std::vector<Script>& scripts);

// Parses one protocol line; returns false for an ordinary output line.
bool ParseProtocolLine(const std::string& line, RunOutcome* outcome);

}  // namespace primus::hooks
