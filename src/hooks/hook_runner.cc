#include "hooks/hook_runner.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "io/signal_channel.h"
#include "io/stoppable_commands.h"
#include "util/files.h"
#include "util/log.h"
#include "util/strings.h"
#include "io/subprocess.h"

namespace primus::hooks {
namespace {

std::vector<std::string> SortedEntries(const std::string& directory) {
  std::vector<std::string> names;
  DIR* dir = opendir(directory.c_str());
  if (!dir) return names;
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name.empty() || name[0] == '.' || name.ends_with("~") || name.ends_with(".md")) continue;
    names.push_back(name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

// Reads the `# primus:` directives from the first lines of a script.
void ReadDirectives(Script* script) {
  if (script->path.find(".once.") != std::string::npos) script->run_once = true;
  auto content = ReadFile(script->path);
  if (!content.ok()) return;
  std::vector<std::string> lines = Split(content->substr(0, 4096), '\n');
  for (size_t i = 0; i < lines.size() && i < 20; ++i) {
    std::string_view line = Trim(lines[i]);
    if (!line.starts_with("#")) continue;
    size_t at = line.find("primus:");
    if (at == std::string_view::npos) continue;
    for (const std::string& directive : Split(std::string(Trim(line.substr(at + 7))), ' ')) {
      if (directive == "run-once") script->run_once = true;
      if (directive.starts_with("timeout=")) {
        if (auto seconds = ParseDouble(directive.substr(8)); seconds && *seconds > 0) script->timeout_s = *seconds;
      }
    }
  }
}

Result<Script> MakeScript(const std::string& path, Script::Kind kind) {
  Script script;
  script.kind = kind;
  script.path = path;
  if (IsExecutableFile(path)) {
    // A bare name is the file here, not a command found on PATH.
    script.argv = {path.find('/') == std::string::npos ? "./" + path : path};
  } else if (path.ends_with(".sh")) {
    script.argv = {"bash", path};
  } else if (path.ends_with(".py")) {
    script.argv = {"python3", path};
  } else {
    return ConfigError(std::string(kind == Script::Kind::kHook ? "hook " : "patch ") + path +
                           " cannot be run: it is not executable and not a .sh or .py file",
                       "chmod +x " + path + ", or give it a .sh/.py name");
  }
  ReadDirectives(&script);
  return script;
}

// The first of `installed` and `in_tree` (relative to the binary's prefix:
// <prefix>/bin/primus-cli installed, <repository>/build/primus-cli in the
// tree) that holds `entry`; "" when neither does.
std::string BesideTheBinary(const std::string& installed, const std::string& in_tree, const std::string& entry) {
  Result<std::string> self = SelfExecutable();
  if (!self.ok()) return "";
  std::string prefix = DirName(DirName(*self));
  for (const std::string& candidate : {prefix + "/" + installed, prefix + "/" + in_tree}) {
    if (PathExists(entry.empty() ? candidate : candidate + "/" + entry) && IsDirectory(candidate)) return candidate;
  }
  return "";
}

}  // namespace

std::string BuiltinHooksDirectory() { return BesideTheBinary("share/primus/hooks", "hooks", ""); }

std::string PythonApiDirectory() { return BesideTheBinary("share/primus-cli/python", "python", "primus_hooks.py"); }

std::string ExampleTrainerDirectory() {
  return BesideTheBinary("share/primus-cli/examples/gpt", "examples/gpt", "train.py");
}

std::string PythonApiFile(const std::string& relative) {
  std::string directory = PythonApiDirectory();
  if (directory.empty()) return "";
  std::string path = JoinPath(directory, relative);
  return PathExists(path) ? path : "";
}

Result<std::vector<Script>> FindHooks(const HookQuery& query) {
  std::vector<Script> scripts;
  std::vector<std::string> groups = {"global", query.task};
  if (!query.subtask.empty()) groups.push_back(query.task + "/" + query.subtask);
  for (const std::string& directory : query.directories) {
    bool primus_layout = std::find(query.primus_layout.begin(), query.primus_layout.end(), directory) !=
                         query.primus_layout.end();
    for (const std::string& name : primus_layout ? SortedEntries(directory) : std::vector<std::string>{}) {
      std::string path = directory + "/" + name;
      if (IsDirectory(path) || !(name.ends_with(".sh") || name.ends_with(".py"))) continue;
      auto script = MakeScript(path, Script::Kind::kHook);
      if (!script.ok()) return script.error();
      scripts.push_back(*script);
    }
    for (const std::string& group : groups) {
      std::string group_dir = JoinPath(directory, group);
      for (const std::string& name : SortedEntries(group_dir)) {
        std::string path = group_dir + "/" + name;
        if (IsDirectory(path)) continue;  // subtask directories are their own group
        auto script = MakeScript(path, Script::Kind::kHook);
        if (!script.ok()) return script.error();
        scripts.push_back(*script);
      }
    }
  }
  return scripts;
}

Result<Script> PrepareScript(const std::string& path, Script::Kind kind) {
  if (!PathExists(path)) return ConfigError(path + " does not exist");
  return MakeScript(path, kind);
}

Result<std::vector<Script>> PreparePatches(const std::vector<std::string>& files) {
  std::vector<Script> scripts;
  for (const std::string& file : files) {
    if (!PathExists(file)) {
      return ConfigError("patch " + file + " does not exist", "--patch takes a script path, relative to the current directory");
    }
    auto script = MakeScript(file, Script::Kind::kPatch);
    if (!script.ok()) return script.error();
    scripts.push_back(*script);
  }
  return scripts;
}

bool ParseProtocolLine(const std::string& line, RunOutcome* outcome) {
  std::string_view text = Trim(line);
  bool is_env = text.starts_with("env.");
  bool is_extra = text.starts_with("extra.");
  if (!is_env && !is_extra) return false;
  text.remove_prefix(is_env ? 4 : 6);
  size_t equals = text.find('=');
  if (equals == std::string_view::npos || equals == 0) return false;
  std::string key(text.substr(0, equals));
  std::string value(text.substr(equals + 1));
  if (is_env) {
    outcome->env[key] = value;
  } else {
    outcome->extra_args.push_back("--" + key);
    outcome->extra_args.push_back(value);
  }
  return true;
}

Result<RunOutcome> RunScripts(const std::vector<Script>& scripts, const HookContext& context) {
  RunOutcome outcome;
  const std::string python_api = PythonApiDirectory();
  for (const Script& script : scripts) {
    const char* what = script.kind == Script::Kind::kHook ? "hook" : "patch";
    if (script.run_once && context.node_rank != 0) {
      log::Info("{} {}: run-once, node 0 runs it (workers start everywhere after it, at the start barrier)", what,
                script.path);
      outcome.scripts.push_back({script.path, 0, true, 0, {}, {}});
      continue;
    }
    CommandOptions options;
    options.cwd = context.cwd;
    options.timeout_s = script.timeout_s;
    for (const auto& [name, value] : context.env) options.env[name] = value;
    for (const auto& [name, value] : outcome.env) options.env[name] = value;
    options.env["PRIMUS_HOOK_KIND"] = script.kind == Script::Kind::kHook ? "hook" : "patch";
    if (!python_api.empty()) {
      // The context's or an earlier hook's PYTHONPATH, else the inherited one.
      auto given = options.env.find("PYTHONPATH");
      const char* inherited = std::getenv("PYTHONPATH");
      std::string path = given != options.env.end() && given->second ? *given->second : inherited ? inherited : "";
      options.env["PYTHONPATH"] = path.empty() ? python_api : python_api + ":" + path;
    }
    RunOutcome own;  // this script's protocol lines, recorded apart as well
    options.on_line = [&](bool is_stderr, const std::string& line) {
      if (!is_stderr && ParseProtocolLine(line, &outcome)) {
        ParseProtocolLine(line, &own);
        log::Debug("{} {}: {}", what, script.path, line);
        return;
      }
      log::Info("[{}] {}", Split(script.path, '/').back(), line);
    };
    log::Info("{} {}: running", what, script.path);
    // Ctrl-C ends the script (its whole process group) and the launch.
    std::vector<std::string> argv = script.argv;
    argv.insert(argv.end(), context.args.begin(), context.args.end());
    io::StoppableRun run = io::RunStoppable({{argv, std::move(options)}});
    if (run.stop_signal != 0) {
      return StoppedBySignal(run.stop_signal, std::string(what) + " " + script.path + ": stopped by " +
                                                  io::SignalName(run.stop_signal) + "; no worker was started");
    }
    const Result<CommandResult>& result = run.results.front();
    if (!result.ok()) return result.error();
    double seconds = result->seconds;
    if (result->timed_out) {
      return TaskError(std::string(what) + " " + script.path + " timed out after " + std::to_string(static_cast<int>(script.timeout_s)) +
                           " s; last output:\n" + result->Tail(20),
                       "raise its limit with a '# primus: timeout=SECONDS' line, or fix what it waits for");
    }
    if (script.kind == Script::Kind::kPatch && result->exit_code == 2) {
      log::Info("patch {}: skipped (exit 2)", script.path);
      outcome.scripts.push_back({script.path, 2, true, seconds, std::move(own.env), std::move(own.extra_args)});
      continue;
    }
    if (result->exit_code != 0) {
      return TaskError(std::string(what) + " " + script.path + " failed with exit code " + std::to_string(result->exit_code) +
                           "; last output:\n" + result->Tail(20),
                       "the launch was stopped before any worker started; fix the " + std::string(what) +
                           (script.kind == Script::Kind::kPatch ? " (exit 2 means 'skipped')" : "") + " and run again");
    }
    outcome.scripts.push_back({script.path, 0, false, seconds, std::move(own.env), std::move(own.extra_args)});
  }
  return outcome;
}

std::string DescribeScripts(const std::vector<Script>& scripts) {
  std::string out;
  for (const Script& script : scripts) {
    out += std::string(script.kind == Script::Kind::kHook ? "  hook   " : "  patch  ") + ShellJoin(script.argv);
    if (script.run_once) out += "   (run-once: node 0)";
    out += "\n";
  }
  return out;
}

}  // namespace primus::hooks
