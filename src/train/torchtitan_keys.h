// TorchTitan's job configuration at the release we pin (v0.2.2): every
// section.key of torchtitan/config/job_config.py, from
// data/torchtitan_keys-v0.2.2.tsv (compiled in), and the checks of an
// experiment's torchtitan.toml and model: against it. An unknown section or
// key gets the nearest real one; a value must fit the key's type (a number
// for int, one of a Literal's choices, ...); null leaves a key out; and the
// keys primus-cli writes from our schema (batch sizes, parallel degrees,
// steps, ...) cannot be set there, so the layout check holds.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/value.h"
#include "util/environment.h"
#include "util/error.h"

namespace primus::train {

class TorchTitanKeys {
 public:
  // The table's text: a "# TorchTitan <release> <commit>" line, comments, then
  // rows "section.key<TAB>annotation".
  static Result<TorchTitanKeys> Parse(std::string_view tsv);
  // The compiled-in table (data/torchtitan_keys-v0.2.2.tsv).
  static const TorchTitanKeys& Builtin();

  const std::string& release() const { return release_; }
  const std::string& commit() const { return commit_; }
  // The annotation of a key ("int | None"), nullptr when it is no key.
  const std::string* TypeOf(std::string_view key) const;
  // True for "training" and "training.dataloader": tables holding keys.
  bool IsTable(std::string_view path) const;
  const std::vector<std::string>& keys() const { return keys_; }

  // Checks a value written at `key` (a table's map, recursively), converting
  // a number given for a str key to its text. `path` names it in messages
  // ("torchtitan.toml.training.steps").
  Status Check(std::string_view key, config::Value* value, std::string_view path) const;

  // This table with a job.custom_config_module's keys merged in, as
  // TorchTitan merges that module's JobConfig into its own (its sections'
  // keys join ours; its new sections are added).
  TorchTitanKeys MergedWith(const TorchTitanKeys& custom) const;
  // A table that lets the keys it does not know pass unchecked (a custom
  // config module that could not be read here): TorchTitan checks them.
  TorchTitanKeys PassingUnknownKeys() const;
  bool passes_unknown_keys() const { return pass_unknown_; }
  // The leaf keys of a torchtitan.toml map this table does not know ("encoder.t5_encoder").
  std::vector<std::string> UnknownKeys(const config::Value& toml) const;

 private:
  Status CheckLeaf(const std::string& type, config::Value* value, std::string_view path) const;

  std::string release_, commit_;
  std::vector<std::string> keys_;
  std::unordered_map<std::string, std::string> types_;
  std::unordered_map<std::string, bool> tables_;
  bool pass_unknown_ = false;
};

// The experiment key primus-cli writes a TorchTitan key from
// ("parallelism.micro_batch" for training.local_batch_size), "" if none.
std::string_view OwnedTorchTitanKey(std::string_view key);

// Checks torchtitan.toml and model: of an experiment for the torchtitan
// backend (model.name and model.flavor, or another [model] key).
Status CheckTorchTitanKeys(const config::Value& resolved, const TorchTitanKeys& table);

// torchtitan.toml, checked, with numbers for str keys written as text.
Result<config::Value> CheckedTorchTitanToml(const config::Value& resolved, const TorchTitanKeys& table);

// The table an experiment is checked against: the compiled one, with the
// keys of torchtitan.toml's job.custom_config_module when it names one. That
// module's JobConfig is read statically (python/torchtitan_config_keys.py
// --module, with the experiment's interpreter) from the first of
// torchtitan.path, $TORCHTITAN_PATH and the working directory that holds
// it; when none does, the keys the compiled table does not know pass
// unchecked, each named in a warning.
struct TorchTitanTable {
  std::shared_ptr<const TorchTitanKeys> keys;
  std::string source;                 // for the plan
  std::vector<std::string> warnings;  // keys passed unchecked
};
struct TorchTitanTableRequest {
  const config::Value* resolved = nullptr;
  Environment environment;
  std::string interpreter = "python3";
  std::string reader;  // "" = python/torchtitan_config_keys.py beside the binary
};
Result<TorchTitanTable> ChooseTorchTitanKeys(const TorchTitanTableRequest& request);

}  // namespace primus::train
