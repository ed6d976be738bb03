// Origin: where one configuration value came from, so that every error and
// `primus-cli config show --origin` can point at the exact file, line and
// column (or environment variable, flag, default) that produced it, and at
// the chain of `extends:` files that pulled that file in.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace primus::config {

struct Origin {
  // A file path, or "default", "env PRIMUS_X", "flag --image", "--set".
  std::string source;
  int line = 0;    // 1-based; 0 when not from a file
  int column = 0;  // 1-based; 0 when not from a file
  // The files whose `extends:` led to `source`, outermost first.
  std::vector<std::string> extends_chain;
  // Set by Origin::Scheduler: the job's placement, as binding as a flag.
  bool from_scheduler = false;

  static Origin File(std::string path, int line, int column,
                     std::vector<std::string> extends_chain = {});
  static Origin Default();                       // "default"
  static Origin Env(std::string_view variable);  // "env PRIMUS_X"
  static Origin Flag(std::string_view flag);     // "flag --image"
  static Origin Set();                           // "--set"
  // Another program's default that replaces ours: "torchrun default".
  static Origin ProgramDefault(std::string_view program);
  // A scheduler's environment: "slurm SLURM_NODEID", "pytorchjob PET_NNODES".
  static Origin Scheduler(std::string_view scheduler, std::string_view variables);

  // "base.yaml:12:5 (via mid.yaml <- exp.yaml)", "exp.yaml:3:1", "env PRIMUS_X".
  std::string Describe() const;
};

// A ConfigError (exit code 3) whose message starts with "<where>: ".
Error ConfigErrorAt(const Origin& where, std::string_view message, std::string hint = "");

}  // namespace primus::config
