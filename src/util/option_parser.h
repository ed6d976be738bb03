// Parses flags against a declarative table. Runtimes use it for their mode
// options and tasks for theirs, so every flag in the tool behaves the same:
// `--name value` and `--name=value`, short `-N 8` and `-N8`, underscores
// accepted for dashes (torchrun's `--nproc_per_node`), repeatable flags,
// and either a "did you mean" error for an unknown flag or verbatim
// pass-through (srun/sbatch and engine flags we do not know).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "util/error.h"

namespace primus {

struct OptionSpec {
  enum class Kind {
    kFlag,      // boolean, no value: records "true"
    kValue,     // takes one value
    kKeyValue,  // takes K=V; recorded under config_key + "." + K
  };
  std::vector<std::string> names;  // "--nproc-per-node", "-N"; the first is canonical
  Kind kind = Kind::kValue;
  std::string value_name;          // shown in help: "N", "FILE"
  std::string config_key;          // where the value lands in the launcher config ("" = none)
  std::string help;
  bool repeatable = false;         // values accumulate into a list
  bool negates = false;            // kFlag: records "false" (--no-numa turns its key off)
  // Read by the primus-cli the user started, never handed on to an inner
  // mode, another node or a pod (--log-file: one process writes the file).
  bool outermost_only = false;
  // Accepted only to be refused with what to write instead (Primus's flags
  // we do not have), or an old spelling a command rewrites into it: left
  // out of help, man pages and completion.
  bool hidden = false;
};

struct ParsedOption {
  const OptionSpec* spec = nullptr;
  std::string written;  // the flag as the user wrote it, for messages and origins
  std::string value;    // "true" for flags
};

struct ParsedOptions {
  std::vector<ParsedOption> options;    // known options, in order
  std::vector<std::string> passthrough; // unknown tokens, verbatim and in order
  size_t next = 0;                      // index of the first token not consumed
  bool stopped_at_separator = false;    // parsing ended at "--" (next points after it)
};

enum class UnknownOptionPolicy {
  kReject,       // unknown flag -> usage error with a suggestion; stop at the first positional
  kPassThrough,  // unknown flags and positionals are kept verbatim
};

// Parses tokens[start...] until "--", the end, or (kReject) a positional.
// `context` names where the flags were given ("mode 'direct'") for errors.
// `ends_options` (kPassThrough only): a positional it accepts ends the
// options there, as `--` would, unless it follows an unknown flag written
// without '=' (then it may be that flag's value, and stays passed through).
Result<ParsedOptions> ParseOptions(const std::vector<std::string>& tokens, size_t start,
                                   const std::vector<const std::vector<OptionSpec>*>& tables,
                                   UnknownOptionPolicy policy, const std::string& context,
                                   const std::function<bool(const std::string&)>& ends_options = nullptr);

// An option's value as a count from `lowest` to 1,000,000 (iterations,
// warm-ups, sizes to sweep); anything else is a usage error naming the flag
// as written.
Result<int> CountOption(const ParsedOption& option, int lowest);

// Two-column help text for a table.
std::string FormatOptionHelp(const std::vector<OptionSpec>& table);

// Help and manual text is at most this wide (docs/cli.md, "One style").
inline constexpr size_t kHelpWidth = 100;
// `text`'s words filled into lines of at most `width` columns: the first
// line goes on from `first_column`, the next ones start with `indent`
// blanks. A word longer than a line stays whole.
std::string WrapText(std::string_view text, size_t indent, size_t first_column, size_t width = kHelpWidth);

}  // namespace primus
