#include "util/output_tee.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "util/console_writer.h"
#include "util/files.h"
#include "util/private_files.h"
#include "util/thread_signals.h"

namespace primus {
namespace {

void CloseFd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

void WriteAll(int fd, const char* data, size_t size) {
  while (size > 0 && fd >= 0) {
    ssize_t written = ::write(fd, data, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;  // a closed terminal: the file still gets everything
    data += written;
    size -= static_cast<size_t>(written);
  }
}

void FlushStreams() {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(stdout);
  std::fflush(stderr);
}

}  // namespace

Result<std::unique_ptr<OutputTee>> OutputTee::Start(const std::string& path, double drain_timeout_s) {
  std::string dir = DirName(path);
  if (!dir.empty() && dir != "." && !IsDirectory(dir)) {
    if (Status made = MakeDirs(dir); !made.ok()) {
      return UnavailableError("--log-file " + path + ": cannot create its directory: " + made.error().message);
    }
  }
  std::unique_ptr<OutputTee> tee(new OutputTee());
  tee->drain_timeout_s_ = drain_timeout_s;
  // The run's whole output: the user's alone (util/private_files.h), never written through a link.
  tee->file_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                      static_cast<mode_t>(PrivateFileMode()));
  if (tee->file_ < 0) {
    return UnavailableError("--log-file " + path + ": cannot write it: " + std::strerror(errno),
                            "choose a path in a directory you can write");
  }
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return UnavailableError(std::string("--log-file: pipe: ") + std::strerror(errno));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    return UnavailableError(std::string("--log-file: pipe: ") + std::strerror(errno));
  }
  if (::pipe2(tee->wake_, O_CLOEXEC) != 0 || ::pipe2(tee->done_, O_CLOEXEC) != 0) {
    for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
    return UnavailableError(std::string("--log-file: pipe: ") + std::strerror(errno));
  }
  FlushStreams();
  tee->terminal_[0] = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  tee->terminal_[1] = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  // dup2 leaves fds 1 and 2 inheritable: the processes we start write into the pipes too.
  ::dup2(out[1], STDOUT_FILENO);
  ::dup2(err[1], STDERR_FILENO);
  ::close(out[1]);
  ::close(err[1]);
  tee->pipes_[0] = out[0];
  tee->pipes_[1] = err[0];
  tee->thread_ = std::thread([raw = tee.get()] { raw->Copy(); });
  return tee;
}

void OutputTee::Copy() {
  BlockAllSignalsInThisThread();  // the process's signals are for its main thread
  char buffer[65536];
  bool open[2] = {true, true};
  bool stopping = false;
  while (open[0] || open[1]) {
    pollfd fds[3] = {{pipes_[0], POLLIN, 0}, {pipes_[1], POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (!open[0]) fds[0].fd = -1;
    if (!open[1]) fds[1].fd = -1;
    if (stopping) fds[2].fd = -1;
    int ready = ::poll(fds, 3, stopping ? 0 : -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;  // stopping and nothing left to read
    if (fds[2].revents != 0) {
      stopping = true;
      // Leave once what is in the pipes now is copied.
      for (int i = 0; i < 2; ++i) {
        if (open[i]) ::fcntl(pipes_[i], F_SETFL, ::fcntl(pipes_[i], F_GETFL) | O_NONBLOCK);
      }
    }
    for (int i = 0; i < 2; ++i) {
      if (!open[i] || fds[i].revents == 0) continue;
      ssize_t got = ::read(pipes_[i], buffer, sizeof(buffer));
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) {
        open[i] = false;
        continue;
      }
      WriteAll(terminal_[i], buffer, static_cast<size_t>(got));
      WriteAll(file_, buffer, static_cast<size_t>(got));
    }
  }
  char one = 1;
  (void)!::write(done_[1], &one, 1);
}

OutputTee::~OutputTee() {
  console_writer::Stop();  // what a launch queued for the console reaches the tee first
  FlushStreams();
  // Our own ends go; the thread sees the end once no child holds them either.
  ::dup2(terminal_[0], STDOUT_FILENO);
  ::dup2(terminal_[1], STDERR_FILENO);
  pollfd done = {done_[0], POLLIN, 0};
  int waited;
  do {
    waited = ::poll(&done, 1, static_cast<int>(drain_timeout_s_ * 1000));
  } while (waited < 0 && errno == EINTR);
  if (waited <= 0) {
    char one = 1;
    (void)!::write(wake_[1], &one, 1);
  }
  if (thread_.joinable()) thread_.join();
  for (int* fd : {&file_, &terminal_[0], &terminal_[1], &pipes_[0], &pipes_[1], &wake_[0], &wake_[1], &done_[0], &done_[1]}) {
    CloseFd(fd);
  }
}

}  // namespace primus
