// `--log-file FILE`: everything this process writes to stdout and stderr,
// and what the processes it starts write there (workers' console lines, a
// container engine, srun), also goes into FILE, like `2>&1 | tee FILE`,
// with stdout and stderr kept apart on the terminal. File descriptors 1
// and 2 become pipes that a thread copies to the terminal and the file, in
// the order the bytes arrive. The destructor puts the terminal back and
// copies what is still in the pipes (waiting at most `drain_timeout_s` for
// a process that still holds them, such as a daemon a task left behind).
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "util/error.h"

namespace primus {

class OutputTee {
 public:
  // Creates FILE's directory and truncates FILE. An UnavailableError names
  // the path when either cannot be done.
  static Result<std::unique_ptr<OutputTee>> Start(const std::string& path, double drain_timeout_s = 2.0);
  ~OutputTee();
  OutputTee(const OutputTee&) = delete;
  OutputTee& operator=(const OutputTee&) = delete;

 private:
  OutputTee() = default;
  void Copy();

  int file_ = -1;
  int terminal_[2] = {-1, -1};  // the original stdout and stderr
  int pipes_[2] = {-1, -1};     // read ends of the pipes now at fds 1 and 2
  int wake_[2] = {-1, -1};      // wakes the thread to stop
  int done_[2] = {-1, -1};      // the thread says it ended
  double drain_timeout_s_ = 2.0;
  std::thread thread_;
};

}  // namespace primus
