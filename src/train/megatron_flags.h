// Megatron-LM's command line as its own parser reads it: the options of one
// release's megatron/training/arguments.py (a compiled table,
// data/megatron_flags-<release>.tsv, or a checkout's own: megatron_release.h
// chooses), and the rules that turn an experiment's `model:` and
// `megatron.args` keys into arguments.
//   - a key is an option's dest (num_layers) or one of its flags written with
//     underscores (no_gradient_accumulation_fusion);
//   - null leaves the option out; a switch takes true or false: a store_true
//     flag appears for true, a store_false flag (--no-...) for false;
//   - a value is never empty; a list fills an option taking several values
//     and is refused for one taking a single value; int and float options
//     take numbers;
//   - unknown keys get the nearest option; keys primus-cli sets itself from
//     our schema (parallel sizes, batch sizes, steps, ...) and Primus-only
//     settings are refused with what to write instead.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/value.h"
#include "util/error.h"

namespace primus::train {

struct MegatronOption {
  enum class Kind { kStoreTrue, kStoreFalse, kBooleanOptional, kValue };
  std::vector<std::string> flags;  // "--save-interval", "--persistent-save-interval"
  std::string dest;
  Kind kind = Kind::kValue;
  std::string nargs;  // "" (one value), "?", "+", "*" or a count
  std::string type;   // "int", "float", "str", an enum's name, "" when not shown
  bool TakesList() const { return !nargs.empty() && nargs != "?"; }
};

class MegatronFlags {
 public:
  // The table's text: a "# Megatron-LM <release> <commit>" line, comments,
  // then rows "flags<TAB>dest<TAB>kind<TAB>nargs<TAB>type".
  static Result<MegatronFlags> Parse(std::string_view tsv);
  // The newest compiled-in table (megatron_release.h has the others).
  static const MegatronFlags& Builtin();

  const std::string& release() const { return release_; }
  const std::string& commit() const { return commit_; }
  const std::vector<MegatronOption>& options() const { return options_; }

  // The dest a key names (itself, or the dest of the flag it spells), "" if none.
  std::string DestOf(std::string_view key) const;

  // The arguments for one key and its value ([] when the option is left out),
  // or a ConfigError at the key's or the value's origin. `path` names the key
  // in messages ("megatron.args.num_layers", "model.num_layers").
  Result<std::vector<std::string>> Arguments(std::string_view key, const config::Value& value,
                                             std::string_view path) const;

  // Arguments given after the experiment on the command line (or by hooks'
  // extra. lines) that reach Megatron as they are: each --flag must be one
  // of its options, spelled as Megatron spells it (--micro-batch-size, not
  // Primus's --micro_batch_size), and not one primus-cli sets from the
  // experiment (the layout check must see it). Usage errors (exit 2) name
  // the argument and what to write.
  Status CheckPassedArguments(const std::vector<std::string>& args) const;

 private:
  struct FlagRef {
    size_t option;
    std::string flag;
  };
  Error UnknownKey(std::string_view key, const config::Value& value, std::string_view path) const;
  Result<std::vector<std::string>> ValueArguments(const MegatronOption& option, const std::string& flag,
                                                  const config::Value& value, std::string_view path) const;

  std::string release_, commit_;
  std::vector<MegatronOption> options_;
  std::unordered_map<std::string, std::vector<size_t>> by_dest_;
  std::unordered_map<std::string, FlagRef> by_flag_;  // "no_gradient_accumulation_fusion"
  std::vector<std::string> names_;                    // dests and flag names, for suggestions
};

// The experiment key primus-cli sets a Megatron dest from ("parallelism.tensor"
// for tensor_model_parallel_size), "" for a dest the user may give.
std::string_view OwnedMegatronKey(std::string_view dest);

// Every Megatron key of an experiment (model: except name, megatron.args),
// checked against `table`: the rules above, no dest given twice, no pair
// Megatron's validate_args refuses (step_batch_size_schedule beside the
// global batch size primus-cli always gives), and megatron.verbatim_args a
// list of arguments.
Status CheckMegatronKeys(const config::Value& resolved, const MegatronFlags& table);

// The arguments of model: (except name) then megatron.args, checked.
Result<std::vector<std::string>> MegatronKeyArguments(const config::Value& resolved, const MegatronFlags& table);

// megatron.verbatim_args: arguments no table is asked about, passed as they
// are after the checked ones (the escape for an option of a fork or a newer
// release than the table knows; the plan lists them with a warning).
std::vector<std::string> MegatronVerbatimArguments(const config::Value& resolved);

}  // namespace primus::train
