#include "util/console_writer.h"

#include <errno.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "util/log.h"
#include "util/progress_line.h"
#include "util/thread_signals.h"

namespace primus::console_writer {
namespace {

// Writes all of `bytes` to `fd`, blocking as long as it takes; 0, or the
// errno of an error other than EINTR/EAGAIN.
int WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {  // someone handed us a non-blocking console
      pollfd waiter{fd, POLLOUT, 0};
      ::poll(&waiter, 1, -1);
      continue;
    }
    return n == 0 ? EIO : errno;
  }
  return 0;
}

bool ReaderCanPause(int fd) {
  struct stat info;
  if (::fstat(fd, &info) != 0) return false;
  return S_ISFIFO(info.st_mode) || S_ISSOCK(info.st_mode) || (S_ISCHR(info.st_mode) && ::isatty(fd) == 1);
}

size_t CountLines(std::string_view text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

// A warning of the console writer's own, formatted as every log line is
// (it cannot go through log::Warn, which writes through here).
std::string Notice(std::string_view text) { return log::FormatLine(log::Level::kWarn, text); }

std::string StoppedNotice(int fd, int error) {
  std::string what = fd == 1 ? "stdout" : fd == 2 ? "stderr" : "the console (fd " + std::to_string(fd) + ")";
  return Notice(fmt::format("console output stopped: cannot write to {} ({}); the log files keep everything", what,
                            std::strerror(error)));
}

// One stream's queue and its writer thread. Never destroyed: a thread may
// still be writing when the process exits.
struct Stream {
  explicit Stream(int fd) : fd(fd) {}

  int fd;
  std::mutex mutex;
  std::condition_variable changed;
  std::string queued;          // whole lines
  size_t writing = 0;          // bytes the thread took and is writing now
  size_t dropped = 0;          // lines dropped since the console last took lines
  size_t dropped_total = 0;
  bool warned = false;         // the "dropping" warning is queued for this stretch
  bool broken = false;
  bool stop = false;
  bool running = false;
  std::thread thread;

  void Run() {
    BlockAllSignalsInThisThread();
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      changed.wait(lock, [&] { return !queued.empty() || stop; });
      if (queued.empty() && stop) break;
      std::string batch;
      batch.swap(queued);
      writing = batch.size();
      lock.unlock();
      int error;
      {
        LiftProgressLine lift(fd);  // the console's text goes above a progress line
        error = WriteAll(fd, batch);
      }
      lock.lock();
      writing = 0;
      if (error != 0) {
        broken = true;
        queued.clear();
        // The other stream says it, if it can.
        if (fd == 1) {
          lock.unlock();
          Write(2, StoppedNotice(fd, error));
          lock.lock();
        }
      } else if (dropped > 0) {
        // The console takes lines again: say how many it missed.
        queued += Notice(fmt::format("{} console line{} dropped while the console was not being read; the "
                                     "log files keep everything",
                                     dropped, dropped == 1 ? " was" : "s were"));
        dropped = 0;
        warned = false;
      }
      changed.notify_all();
    }
    running = false;
    changed.notify_all();
  }
};

struct State {
  std::mutex mutex;  // Start and Stop
  size_t limit = kDefaultLimitBytes;
  bool started = false;
  Stream out{1};
  Stream err{2};
};

State& Global() {
  static State* state = new State();  // never destroyed (see Stream)
  return *state;
}

Stream* StreamFor(int fd) {
  if (fd == 1) return &Global().out;
  if (fd == 2) return &Global().err;
  return nullptr;
}

}  // namespace

void Start(size_t limit_bytes) {
  State& state = Global();
  std::lock_guard<std::mutex> guard(state.mutex);
  if (state.started) return;
  state.limit = limit_bytes;
  for (Stream* stream : {&state.out, &state.err}) {
    // Only a console that a reader can pause needs a thread: a pipe, a
    // socket, a terminal. A file (or a disk) takes every byte in its own
    // time, so it keeps blocking writes and never drops a line.
    if (!ReaderCanPause(stream->fd)) continue;
    std::lock_guard<std::mutex> lock(stream->mutex);
    stream->stop = false;
    stream->dropped = 0;
    stream->warned = false;
    stream->running = true;
    stream->thread = std::thread([stream] { stream->Run(); });
  }
  state.started = true;
}

bool Write(int fd, std::string_view lines) {
  Stream* stream = StreamFor(fd);
  if (stream == nullptr) {
    // Another descriptor (a console redirected by the caller): written directly.
    int error = lines.empty() ? 0 : WriteAll(fd, lines);
    if (error == 0) return true;
    Write(2, StoppedNotice(fd, error));
    return false;
  }
  if (lines.empty()) return true;
  std::unique_lock<std::mutex> lock(stream->mutex);
  if (stream->broken) return false;
  if (!stream->running) {
    lock.unlock();
    int error;
    {
      LiftProgressLine lift(fd);
      error = WriteAll(fd, lines);
    }
    if (error != 0) {
      lock.lock();
      stream->broken = true;
      lock.unlock();
      if (fd == 1) Write(2, StoppedNotice(fd, error));
    }
    return error == 0;
  }
  size_t limit = Global().limit;
  if (stream->queued.size() + lines.size() > limit) {
    stream->dropped += CountLines(lines);
    stream->dropped_total += CountLines(lines);
    if (!stream->warned) {
      stream->warned = true;
      // Said once per stretch, on stderr (room is kept for it).
      std::string text = Notice(
          "the console is not being read (a pager, Ctrl-S or a slow link): its lines are dropped until it is; the "
          "job goes on and the log files keep everything");
      if (fd == 2) {
        stream->queued += text;
        stream->changed.notify_all();
      } else {
        lock.unlock();
        Write(2, text);
      }
    }
    return true;
  }
  stream->queued.append(lines);
  stream->changed.notify_all();
  return true;
}

bool Drain(double timeout_s) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                      std::chrono::duration<double>(timeout_s));
  bool drained = true;
  for (Stream* stream : {&Global().out, &Global().err}) {
    std::unique_lock<std::mutex> lock(stream->mutex);
    drained &= stream->changed.wait_until(lock, until, [&] {
      return !stream->running || (stream->queued.empty() && stream->writing == 0);
    });
  }
  return drained;
}

void Stop() {
  State& state = Global();
  std::lock_guard<std::mutex> guard(state.mutex);
  if (!state.started) return;
  for (Stream* stream : {&state.out, &state.err}) {
    {
      std::lock_guard<std::mutex> lock(stream->mutex);
      stream->stop = true;
      stream->changed.notify_all();
    }
    if (stream->thread.joinable()) stream->thread.join();
  }
  state.started = false;
}

size_t DroppedLines(int fd) {
  Stream* stream = StreamFor(fd);
  if (stream == nullptr) return 0;
  std::lock_guard<std::mutex> lock(stream->mutex);
  return stream->dropped_total;
}

}  // namespace primus::console_writer
