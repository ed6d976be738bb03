// The agent's stdout, shared by every rank's lines. Lines are collected in one
// buffer and written with one write(2) per event-loop batch (or when the
// buffer passes 1 MiB), always as whole lines, so ranks never interleave
// mid-line. When stdout is /dev/null nothing is formatted at all; when it
// breaks (EPIPE: `| head` exited) console output stops with one warning and
// the log files carry on. During a launch the bytes go through the console
// writer (util/console_writer.h), so a console nobody reads drops lines
// instead of stopping the agent's loop.
#pragma once

#include "agent/byte_buffer.h"

namespace primus::agent {

class ConsoleSink {
 public:
  explicit ConsoleSink(int fd);

  // False when writing would be pointless (/dev/null, broken pipe): callers
  // then skip formatting.
  bool active() const { return active_; }
  ByteBuffer& buffer() { return buffer_; }
  void FlushIfLarge() {
    if (buffer_.size() >= kFlushThreshold) Flush();
  }
  void Flush();

 private:
  static constexpr size_t kFlushThreshold = 1 << 20;

  int fd_;
  bool active_ = true;
  ByteBuffer buffer_;
};

}  // namespace primus::agent
