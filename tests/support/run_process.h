// Test support: run a real process (usually the primus-cli binary) with a
// given environment and working directory, capture stdout and stderr, and
// return its exit status (128+N when killed by signal N, like a shell).
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace primus::testing {

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  std::string all() const { return out + err; }
};

struct ProcessOptions {
  std::string cwd{};                                 // "" = inherit
  std::map<std::string, std::optional<std::string>> env{};  // value: set; nullopt: unset
  bool clear_env = false;                            // start from an empty environment
  double timeout_s = 60;                             // killed (SIGKILL) after this
};

ProcessResult RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// The binary under test (PRIMUS_BINARY from CMake).
ProcessResult RunPrimus(const std::vector<std::string>& args, const ProcessOptions& options = {});

// How a user without configuration of their own runs primus-cli: working
// directory and HOME in `dir`, no colours, and unset what the test machine's
// environment would add (PRIMUS_LOG_LEVEL, PET_NPROC_PER_NODE, a Slurm job
// around the test, and `also_unset`).
ProcessOptions IsolatedOptions(const std::string& dir, std::initializer_list<const char*> also_unset = {});

// The NUL-terminated strings in `text` (an argv a worker wrote out with
// printf '%s\0'); bytes after the last NUL are not a part.
std::vector<std::string> SplitNul(const std::string& text);

// A file's whole content ("" when it cannot be read: the test's assertion says what was missing).
std::string Slurp(const std::string& path);

// A fresh directory under /tmp, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string Write(const std::string& relative, const std::string& content) const;

 private:
  std::string path_;
};

}  // namespace primus::testing
