// Test support beside RunProcess: start a process without waiting for it,
// for tests that signal or SIGKILL it while it runs (the node agent), then
// wait for its exit with a timeout. stdout and stderr go to files, so that a
// process that outlives its parent (what the tests hunt for) cannot hold the
// test's pipes open.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "run_process.h"

extern char** environ;

namespace primus::testing {

// Starts `argv` (PATH searched) with `options` (env, clear_env, cwd; the
// timeout is WaitForExit's business). -1 when it cannot be started.
inline pid_t StartProcess(const std::vector<std::string>& argv, const std::string& stdout_path,
                          const std::string& stderr_path, const ProcessOptions& options = {}) {
  std::map<std::string, std::string> env;
  if (!options.clear_env) {
    for (char** entry = environ; *entry != nullptr; ++entry) {
      std::string text(*entry);
      size_t equals = text.find('=');
      if (equals != std::string::npos) env[text.substr(0, equals)] = text.substr(equals + 1);
    }
  }
  for (const auto& [key, value] : options.env) {
    if (value) env[key] = *value;
    else env.erase(key);
  }
  std::vector<std::string> env_strings;
  for (const auto& [key, value] : env) env_strings.push_back(key + "=" + value);
  std::vector<char*> envp, args;
  for (std::string& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (std::string& arg : argv_copy) args.push_back(arg.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
  pid_t pid = -1;
  int error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  return error == 0 ? pid : -1;
}

// The exit status (128+N for signal N), or -1 after `timeout_s` (the process
// is then SIGKILLed and reaped).
inline int WaitForExit(pid_t pid, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    int status = 0;
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (done < 0) return -2;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace primus::testing
