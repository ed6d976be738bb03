#include "io/stoppable_commands.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <string_view>
#include <thread>

#include "io/event_poller.h"
#include "io/signal_channel.h"
#include "io/unique_fd.h"
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
  PipeEnds stop, finished;
  MakePipe(&stop);  // without it, a signal cannot cut the commands short
  bool have_finished = MakePipe(&finished);
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
      options.stop_fd = stop.read.get();
      run.results[i] = RunCommand(commands[i].argv, options);
    }
    WriteByte(finished.write.get());
  };
  // Tag 0: a worker thread finished; tag 1: our signals.
  auto poller = EventPoller::Create();
  bool watching = have_finished && poller.ok() && poller->Add(finished.read.get(), 0).ok() &&
                  (!channel.ok() || poller->Add((*channel)->fd(), 1).ok());
  std::vector<std::thread> threads;
  size_t count = std::min<size_t>(commands.size(), static_cast<size_t>(std::max(parallel, 1)));
  for (size_t i = 0; i < count; ++i) threads.emplace_back(work);
  size_t done = 0;
  while (done < count && watching) {
    for (const epoll_event& event : poller->Wait(-1)) {
      if (event.data.u64 == 0) {
        char bytes[64];
        ssize_t n = ::read(finished.read.get(), bytes, sizeof(bytes));
        if (n > 0) done += static_cast<size_t>(n);
        continue;
      }
      while (auto info = (*channel)->Read()) {
        int signal = static_cast<int>(info->ssi_signo);
        if (signal != SIGINT && signal != SIGTERM && signal != SIGHUP) continue;
        if (run.stop_signal == 0) {
          run.stop_signal = signal;
          stopping = true;
          WriteByte(stop.write.get());
        }
      }
    }
  }
  for (std::thread& thread : threads) thread.join();
  return run;
}

}  // namespace primus::io
