#include "io/stoppable_commands.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <string_view>
#include <thread>

#include "io/signal_channel.h"
#include "util/thread_signals.h"

namespace primus::io {
namespace {

void WriteByte(int fd) {
  if (fd < 0) return;
  while (::write(fd, "x", 1) < 0 && errno == EINTR) {
  }
}

}  // namespace

StoppableRun RunStoppable(const std::vector<StoppableCommand>& commands, int parallel) {
  StoppableRun run;
  run.results.assign(commands.size(), CommandResult{});
  if (commands.empty()) return run;
  // Our signals arrive on the channel (this thread) while the workers run
  // the commands; one byte on `stop` ends every command still running.
  auto channel = SignalChannel::Open();
  int stop[2], finished[2];
  if (::pipe2(stop, O_CLOEXEC) != 0) stop[0] = stop[1] = -1;
  if (::pipe2(finished, O_CLOEXEC) != 0) finished[0] = finished[1] = -1;
  std::atomic<size_t> next{0};
  std::atomic<bool> stopping{false};
  auto work = [&] {
    BlockAllSignalsInThisThread();
    for (size_t i = next++; i < commands.size(); i = next++) {
      if (stopping) {
        run.results[i]->stopped = true;
        continue;
      }
      CommandOptions options = commands[i].options;
      options.stop_fd = stop[0];
      run.results[i] = RunCommand(commands[i].argv, options);
    }
    WriteByte(finished[1]);
  };
  std::vector<std::thread> threads;
  size_t count = std::min<size_t>(commands.size(), static_cast<size_t>(std::max(parallel, 1)));
  for (size_t i = 0; i < count; ++i) threads.emplace_back(work);
  size_t done = 0;
  while (done < count && finished[0] >= 0) {
    pollfd fds[2] = {{finished[0], POLLIN, 0}, {channel.ok() ? (*channel)->fd() : -1, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents & POLLIN) {
      char bytes[64];
      ssize_t n = ::read(finished[0], bytes, sizeof(bytes));
      if (n > 0) done += static_cast<size_t>(n);
    }
    if (fds[1].revents & POLLIN) {
      while (auto info = (*channel)->Read()) {
        int signal = static_cast<int>(info->ssi_signo);
        if (signal != SIGINT && signal != SIGTERM && signal != SIGHUP) continue;
        if (run.stop_signal == 0) {
          run.stop_signal = signal;
          stopping = true;
          WriteByte(stop[1]);
        }
      }
    }
  }
  for (std::thread& thread : threads) thread.join();
  for (int fd : {stop[0], stop[1], finished[0], finished[1]}) {
    if (fd >= 0) ::close(fd);
  }
  return run;
}

}  // namespace primus::io
