#include "cli/completion.h"

#include "cli/help.h"
#include "cli/torchrun_command.h"

#include <algorithm>
#include <cctype>

#include "config/launcher_schema.h"
#include "runtime/runtime.h"
#include "tasks/task.h"
#include "util/option_parser.h"
#include "util/strings.h"

namespace primus::cli {
namespace {

using Tables = std::vector<const std::vector<OptionSpec>*>;

// Words of the grammar that are neither modes nor tasks (help.h).
const std::vector<std::string>& BuiltinWords() {
  static const std::vector<std::string> words = [] {
    std::vector<std::string> names;
    for (const BuiltinCommand& builtin : BuiltinCommands()) names.push_back(builtin.name);
    return names;
  }();
  return words;
}

const OptionSpec* FindFlag(const Tables& tables, std::string name) {
  if (name.starts_with("--")) std::replace(name.begin() + 2, name.end(), '_', '-');
  for (const auto* table : tables) {
    for (const OptionSpec& spec : *table) {
      if (std::find(spec.names.begin(), spec.names.end(), name) != spec.names.end()) return &spec;
    }
  }
  return nullptr;
}

bool TakesValue(const OptionSpec* spec) { return spec && spec->kind != OptionSpec::Kind::kFlag; }

// The values a flag's value name spells out: "bf16|fp16|fp32" lists its
// values, "N|auto" one value beside a placeholder; FILE, PATH and DIR
// placeholders ask for file names.
Completion ValueCompletion(const OptionSpec& spec) {
  Completion completion;
  for (const std::string& part : Split(spec.value_name, '|')) {
    bool literal = !part.empty() && std::islower(static_cast<unsigned char>(part[0])) &&
                   std::all_of(part.begin(), part.end(), [](char c) {
                     return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
                            c == '-' || c == '_' || c == '.';
                   });
    if (literal) {
      completion.words.push_back(part);
    } else if (part == "DIR") {
      completion.files = Completion::Files::kDirs;
    } else if (part.starts_with("FILE") || part == "PATH" || part == "K=V|FILE") {
      completion.files = Completion::Files::kAny;
    }
  }
  if (spec.value_name.ends_with("FILE")) completion.files = Completion::Files::kAny;
  const std::string& name = spec.names.front();
  if (completion.files == Completion::Files::kAny && (name == "--config" || name == "--exp")) {
    completion.files = Completion::Files::kYaml;
  }
  if (name == "--set") {
    // KEY=VALUE: the launcher's keys, each with its "=" (the shell adds no space after it).
    for (const config::SchemaKey& key : config::LauncherSchema().keys()) completion.words.push_back(key.path + "=");
  }
  return completion;
}

std::vector<std::string> FlagNames(const Tables& tables) {
  std::vector<std::string> names;
  for (const auto* table : tables) {
    for (const OptionSpec& spec : *table) {
      if (spec.hidden) continue;
      for (const std::string& name : spec.names) {
        if (name.starts_with("--")) names.push_back(name);
      }
    }
  }
  return names;
}

// Where the walk over the finished words ended.
struct Position {
  enum class Stage { kGlobal, kMode, kTask, kBuiltin, kDone };
  Stage stage = Stage::kGlobal;
  const runtime::Runtime* mode = nullptr;
  bool mode_action_allowed = false;  // right after a mode name with actions
  const tasks::Task* task = nullptr;
  bool subtask_expected = false;
  std::string subtask;
  std::string builtin;      // config | completion | help | torchrun
  size_t builtin_args = 0;  // words after it
  Tables tables;            // the flags that apply here
  const OptionSpec* pending = nullptr;  // the last word was a flag that takes a value
};

void EnterTask(const tasks::Task* task, Position* at) {
  at->stage = Position::Stage::kTask;
  at->task = task;
  at->subtask_expected = !task->subtasks().empty();
  at->tables = task->subtasks().empty() ? task->options("") : Tables{};
}

void EnterMode(const runtime::Runtime* mode, Position* at) {
  at->stage = Position::Stage::kMode;
  at->mode = mode;
  at->mode_action_allowed = !mode->actions().empty();
  at->tables = {&mode->options(), &runtime::GlobalOptions()};
}

// A positional word outside the task's arguments: a mode, a task, or a built-in command.
void EnterWord(const std::string& word, bool top_level, Position* at) {
  if (const auto* mode = runtime::RuntimeRegistry::Global().Find(word)) return EnterMode(mode, at);
  if (const auto* task = tasks::TaskRegistry::Global().Find(word)) return EnterTask(task, at);
  if (top_level && std::find(BuiltinWords().begin(), BuiltinWords().end(), word) != BuiltinWords().end()) {
    at->stage = Position::Stage::kBuiltin;
    at->builtin = word;
    at->tables = {};
    if (word == "torchrun") at->tables = {&TorchrunOptions()};
    return;
  }
  at->stage = Position::Stage::kDone;
}

Position Walk(const std::vector<std::string>& words) {
  Position at;
  at.tables = {&runtime::GlobalOptions()};
  for (const std::string& word : words) {
    if (at.pending) {
      at.pending = nullptr;
      continue;
    }
    if (word == "=") continue;  // bash's word break in --flag=value
    switch (at.stage) {
      case Position::Stage::kGlobal:
        if (word.starts_with("-")) {
          const OptionSpec* spec = FindFlag(at.tables, word);
          if (TakesValue(spec) && word.find('=') == std::string::npos) at.pending = spec;
        } else {
          EnterWord(word, /*top_level=*/true, &at);
        }
        break;
      case Position::Stage::kMode:
        if (word == "--") {
          // After "--": one of the modes this one wraps, or a task.
          at.stage = Position::Stage::kGlobal;
          at.tables = {};
          at.mode_action_allowed = false;
          break;
        }
        if (at.mode_action_allowed && !word.starts_with("-")) {
          at.mode_action_allowed = false;
          const auto actions = at.mode->actions();
          if (std::find(actions.begin(), actions.end(), word) != actions.end()) break;
        }
        at.mode_action_allowed = false;
        if (word.starts_with("-")) {
          const OptionSpec* spec = FindFlag(at.tables, word);
          if (TakesValue(spec) && word.find('=') == std::string::npos) at.pending = spec;
        }
        break;
      case Position::Stage::kTask:
        if (at.subtask_expected && word.starts_with("-")) {
          // A task whose subtask may be left out (preflight [check]).
          at.subtask_expected = false;
          at.tables = at.task->options("");
        } else if (at.subtask_expected) {
          at.subtask_expected = false;
          at.subtask = word;
          at.tables = at.task->options(word);
          break;
        }
        if (word.starts_with("-")) {
          const OptionSpec* spec = FindFlag(at.tables, word);
          if (TakesValue(spec) && word.find('=') == std::string::npos) at.pending = spec;
        }
        break;
      case Position::Stage::kBuiltin:
        if (word.starts_with("-")) {
          const OptionSpec* spec = FindFlag(at.tables, word);
          if (TakesValue(spec) && word.find('=') == std::string::npos) at.pending = spec;
          break;
        }
        if (at.builtin == "config" && word == "show" && at.builtin_args == 0) at.tables = {&ConfigShowOptions()};
        if (at.builtin == "torchrun") {  // the training script: its own arguments follow
          at.stage = Position::Stage::kDone;
          at.tables = {};
        }
        ++at.builtin_args;
        break;
      case Position::Stage::kDone:
        break;
    }
  }
  return at;
}

std::vector<std::string> Positionals(const Position& at, bool after_separator) {
  std::vector<std::string> words;
  switch (at.stage) {
    case Position::Stage::kGlobal:
      if (after_separator && at.mode) {
        words = at.mode->inner_modes();
      } else if (!after_separator) {
        words = runtime::RuntimeRegistry::Global().Names();
        words.insert(words.end(), BuiltinWords().begin(), BuiltinWords().end());
      }
      for (const auto& task : tasks::TaskRegistry::Global().Names()) words.push_back(task);
      break;
    case Position::Stage::kMode:
      if (at.mode_action_allowed) words = at.mode->actions();
      words.push_back("--");
      break;
    case Position::Stage::kTask:
      if (at.subtask_expected) words = at.task->subtasks();
      break;
    case Position::Stage::kBuiltin:
      if (at.builtin_args > 0) break;
      if (at.builtin == "config") words = {"show"};
      if (at.builtin == "completion") words = {"bash", "zsh", "fish"};
      if (at.builtin == "help") {
        words = runtime::RuntimeRegistry::Global().Names();
        for (const auto& task : tasks::TaskRegistry::Global().Names()) words.push_back(task);
        words.push_back("config");
        words.push_back("torchrun");
      }
      break;
    case Position::Stage::kDone:
      break;
  }
  return words;
}

void KeepPrefix(const std::string& prefix, std::vector<std::string>* words, const std::string& add = "") {
  std::vector<std::string> kept;
  for (const std::string& word : *words) {
    if (word.starts_with(prefix) && std::find(kept.begin(), kept.end(), add + word) == kept.end()) kept.push_back(add + word);
  }
  *words = std::move(kept);
}

}  // namespace

Completion Complete(const std::vector<std::string>& words) {
  if (words.empty()) return Complete({""});
  std::vector<std::string> done(words.begin(), words.end() - 1);
  std::string current = words.back();
  // bash: "--dtype" "=" "bf" (or "--dtype" "=" with the cursor on "=").
  if (current == "=" && !done.empty() && done.back().starts_with("-")) {
    done.push_back("=");
    current.clear();
  }
  bool after_equals = !done.empty() && done.back() == "=";
  if (after_equals) done.pop_back();

  Position at = Walk(after_equals && !done.empty() ? std::vector<std::string>(done.begin(), done.end() - 1) : done);
  const OptionSpec* value_of = nullptr;
  std::string value_prefix;  // "--dtype=" when the flag and its value are one word
  if (after_equals) {
    value_of = FindFlag(at.tables, done.back());
  } else if (at.pending) {
    value_of = at.pending;
  } else if (current.starts_with("--") && current.find('=') != std::string::npos) {
    size_t equals = current.find('=');
    value_of = FindFlag(at.tables, current.substr(0, equals));
    value_prefix = current.substr(0, equals + 1);
    current = current.substr(equals + 1);
  }
  if (value_of) {
    if (!TakesValue(value_of)) return {};
    Completion completion = ValueCompletion(*value_of);
    KeepPrefix(current, &completion.words, value_prefix);
    return completion;
  }

  Completion completion;
  if (current.starts_with("-")) {
    completion.words = FlagNames(at.stage == Position::Stage::kTask && at.subtask_expected ? at.task->options("") : at.tables);
    if (at.stage == Position::Stage::kMode) completion.words.push_back("--");
  } else {
    bool after_separator = !done.empty() && done.back() == "--";
    completion.words = Positionals(at, after_separator);
    if (at.stage == Position::Stage::kTask && !at.subtask_expected) {
      // Task arguments: what the task names (init's models, a job's run
      // id), else paths (analyze logs DIR, run's command); or flags.
      completion.words = at.task->positional_words(at.subtask);
      if (completion.words.empty() || at.task->positional_paths()) completion.files = Completion::Files::kAny;
      if (current.empty()) {
        std::vector<std::string> flags = FlagNames(at.tables);
        completion.words.insert(completion.words.end(), flags.begin(), flags.end());
      }
    }
    if (at.stage == Position::Stage::kBuiltin && at.builtin == "torchrun" && !current.starts_with("-")) {
      completion.files = Completion::Files::kAny;  // the training script
    }
  }
  KeepPrefix(current, &completion.words);
  return completion;
}

std::string FormatCompletion(const Completion& completion) {
  const char* kinds[] = {"none", "files", "yaml", "dirs"};
  std::string out = std::string(kinds[static_cast<int>(completion.files)]) + "\n";
  for (const std::string& word : completion.words) out += word + "\n";
  return out;
}

Result<std::string> CompletionScript(const std::string& shell) {
  if (shell == "bash") {
    return std::string(R"BASH(# bash completion for primus-cli (primus-cli completion bash)
_primus_cli() {
    local cur=${COMP_WORDS[COMP_CWORD]} IFS=$'\n' kind
    local -a reply
    reply=($(command "${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)) || return 0
    kind=${reply[0]}
    COMPREPLY=("${reply[@]:1}")
    [[ $cur == = ]] && cur=
    [[ $cur == --*=* ]] && cur=${cur#*=}
    case $kind in
        files) COMPREPLY+=($(compgen -f -- "$cur")) ;;
        dirs) COMPREPLY+=($(compgen -d -- "$cur")) ;;
        yaml) COMPREPLY+=($(compgen -d -- "$cur") $(compgen -f -X '!*.yaml' -- "$cur") $(compgen -f -X '!*.yml' -- "$cur")) ;;
    esac
    if [[ $kind != none ]]; then
        compopt -o filenames 2>/dev/null
    elif [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]]; then
        compopt -o nospace 2>/dev/null
    fi
    return 0
}
complete -F _primus_cli primus-cli
# torchrun, where it is primus-cli's link (python3-torch's own is left alone).
if [[ $(readlink -f "$(type -P torchrun)" 2>/dev/null) == "$(readlink -f "$(type -P primus-cli)" 2>/dev/null)" ]]; then
    complete -F _primus_cli torchrun
fi
)BASH");
  }
  if (shell == "zsh") {
    return std::string(R"(#compdef primus-cli
# zsh completion for primus-cli (primus-cli completion zsh)
_primus_cli() {
    local -a reply words_before
    words_before=("${(@)words[2,CURRENT]}")
    reply=("${(@f)$(command ${words[1]} __complete "${(@)words_before}" 2>/dev/null)}")
    local kind=${reply[1]}
    local -a candidates
    candidates=("${(@)reply[2,-1]}")
    candidates=(${candidates:#})
    # KEY= (--set's keys): no space after the "=", the value comes next.
    local -a with_value
    with_value=(${(M)candidates:#*=})
    candidates=(${candidates:#*=})
    (( ${#candidates} )) && compadd -Q -a candidates
    (( ${#with_value} )) && compadd -Q -S '' -a with_value
    case $kind in
        files) _files ;;
        dirs) _files -/ ;;
        yaml) _files -g '*.(yaml|yml)(-.)' ;;
    esac
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _primus_cli "$@"
else
    compdef _primus_cli primus-cli
fi
)");
  }
  if (shell == "fish") {
    return std::string(R"(# fish completion for primus-cli (primus-cli completion fish)
function __primus_cli_complete
    set -l words (commandline -opc)
    set -l current (commandline -ct)
    set -l reply (command $words[1] __complete $words[2..-1] "$current" 2>/dev/null)
    or return
    set -l kind $reply[1]
    for word in $reply[2..-1]
        echo $word
    end
    switch $kind
        case files
            __fish_complete_path "$current"
        case dirs
            __fish_complete_directories "$current"
        case yaml
            __fish_complete_suffix "$current" .yaml
            __fish_complete_suffix "$current" .yml
    end
end
complete -c primus-cli -f -a '(__primus_cli_complete)'
)");
  }
  return UsageError("no completion for shell '" + shell + "'" + DidYouMean(shell, {"bash", "zsh", "fish"}),
                    "write: primus-cli completion bash (or zsh, fish)");
}

}  // namespace primus::cli
