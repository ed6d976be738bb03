// The floor for "launch and reap N trivial workers": posix_spawn N copies of
// a command, then waitpid each, nothing else (no pipes, no logs, no
// supervision). Prints the in-process wall time in milliseconds; the bench
// scripts also time this program end to end, like the agent.
//
// usage: spawn_baseline N CMD [ARGS...]
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

extern char** environ;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: spawn_baseline N CMD [ARGS...]\n");
    return 2;
  }
  int count = std::atoi(argv[1]);
  timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  std::vector<pid_t> pids(static_cast<size_t>(count));
  for (pid_t& pid : pids) {
    if (posix_spawn(&pid, argv[2], nullptr, nullptr, argv + 2, environ) != 0) return 1;
  }
  int failures = 0;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    failures += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  clock_gettime(CLOCK_MONOTONIC, &end);
  double ms = (end.tv_sec - start.tv_sec) * 1e3 + (end.tv_nsec - start.tv_nsec) / 1e6;
  std::printf("%.3f\n", ms);
  return failures == 0 ? 0 : 1;
}
