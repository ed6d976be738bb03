// Shell completion for bash, zsh and fish. The scripts (`primus-cli
// completion bash|zsh|fish`) are thin: on every TAB they call back into the
// binary as `primus-cli __complete WORD... CURRENT`, and Complete() walks the
// words with the same registries and option tables the parser uses (modes,
// their actions and inner modes, tasks, subtasks, each table's flags and
// values). So completion cannot drift from the grammar: a new flag or task
// completes as soon as it parses.
#pragma once

#include <string>
#include <vector>

#include "util/error.h"

namespace primus::cli {

// What the shell should offer for the word under the cursor: `words` (already
// filtered by the word's prefix) and, for a file-valued flag, file names.
struct Completion {
  enum class Files {
    kNone,
    kAny,   // any file (--env FILE, --patch FILE, ...)
    kYaml,  // *.yaml / *.yml and directories (--config, --exp: experiment and configuration files)
    kDirs,  // directories only (--log-dir DIR)
  };
  Files files = Files::kNone;
  std::vector<std::string> words;
};

// `words`: the command line after the program name up to the cursor; the
// last one is the word being completed ("" after a space). bash splits
// `--dtype=bf` into "--dtype" "=" "bf"; both spellings are understood.
Completion Complete(const std::vector<std::string>& words);

// What `primus-cli __complete` prints: the kind of files on the first line
// (none, files, yaml, dirs), then one word per line.
std::string FormatCompletion(const Completion& completion);

// The script for `shell` (bash, zsh or fish); a usage error naming the shells otherwise.
Result<std::string> CompletionScript(const std::string& shell);

}  // namespace primus::cli
