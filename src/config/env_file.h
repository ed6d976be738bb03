// A file of environment variables, as `direct --env FILE` reads it: one
// KEY=VALUE per line, the way a shell script assigns them, so that the files
// users already `source` work unchanged:
//
//   # comment                 blank lines and comments are skipped
//   NCCL_DEBUG=INFO
//   export HF_HOME=/data/hf   `export ` is allowed
//   MSG="two words"           double quotes: \" \\ \$ \` escapes
//   PATTERN='a$b'             single quotes: literal
//   A=1  # trailing comment
//
// Nothing is expanded: `$VAR`, `${VAR}` or a command substitution outside
// single quotes is an error naming the line, not a silently different
// value. A later line for the same name wins, as in a shell.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace primus::config {

struct EnvFileEntry {
  std::string name;
  std::string value;
  int line = 0;  // 1-based
};

// Errors are ConfigErrors (exit 3) starting "<path>:<line>: ".
Result<std::vector<EnvFileEntry>> ParseEnvFile(std::string_view text, const std::string& path);

// Reads a regular file of at most 64 MiB and parses it.
Result<std::vector<EnvFileEntry>> ReadEnvFile(const std::string& path);

}  // namespace primus::config
