#include "run_process.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "io/subprocess.h"

namespace primus::testing {

ProcessResult RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options) {
  CommandOptions command;
  command.cwd = options.cwd;
  command.env = options.env;
  command.clear_env = options.clear_env;
  command.timeout_s = options.timeout_s;
  command.kill_grace_s = 1;
  ProcessResult result;
  auto run = RunCommand(argv, command);
  if (!run.ok()) {
    result.exit_code = 127;
    result.err = run.error().Format();
    return result;
  }
  result.exit_code = run->exit_code;
  result.out = run->out;
  result.err = run->err;
  if (run->timed_out) result.err += "\n[test harness: killed after timeout]\n";
  return result;
}

ProcessResult RunPrimus(const std::vector<std::string>& args, const ProcessOptions& options) {
  std::vector<std::string> argv = {PRIMUS_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv, options);
}

ProcessOptions IsolatedOptions(const std::string& dir, std::initializer_list<const char*> also_unset) {
  ProcessOptions options;
  options.cwd = dir;
  options.env["HOME"] = dir;
  options.env["NO_COLOR"] = "1";
  for (const char* name : {"PRIMUS_LOG_LEVEL", "PET_NPROC_PER_NODE", "SLURM_JOB_ID"}) options.env[name] = std::nullopt;
  for (const char* name : also_unset) options.env[name] = std::nullopt;
  return options;
}

TempDir::TempDir() {
  char pattern[] = "/tmp/primus-test-XXXXXX";
  path_ = mkdtemp(pattern);
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::Write(const std::string& relative, const std::string& content) const {
  std::filesystem::path full = std::filesystem::path(path_) / relative;
  std::filesystem::create_directories(full.parent_path());
  std::ofstream(full) << content;
  return full.string();
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<std::string> SplitNul(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\0') {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

}  // namespace primus::testing
