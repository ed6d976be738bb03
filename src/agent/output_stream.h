// A worker's output on its way to its log file and to the console.
//
// RankLog is one rank's file for one attempt: both streams, in order of
// arrival, each line as "<stamp> O <line>" or "<stamp> E <line>".
// OutputStream is one pipe (stdout or stderr) of one worker: each ReadOnce
// does one big read(2), stamps the batch once, finds line ends with memchr
// and appends whole lines to the log's and the console's buffers. A line split
// across reads is held until its end arrives (lines of megabytes stay whole,
// up to kMaxLine); an unterminated last line is completed at end of file.
// Bytes are passed through untouched (binary output, NUL, \r included).
#pragma once

#include <string>

#include "agent/byte_buffer.h"
#include "agent/console_sink.h"
#include "agent/line_stamp.h"
#include "agent/printed_metrics.h"
#include "io/unique_fd.h"
#include "util/error.h"

namespace primus::agent {

class RankLog {
 public:
  // Creates the file, which must not exist (util/private_files.h: an earlier
  // run's log is never truncated, a planted link never followed).
  static Result<RankLog> Open(const std::string& path);
  RankLog(RankLog&&) = default;
  RankLog& operator=(RankLog&&) = default;
  // Gives back the disk space reserved beyond the end.
  ~RankLog();

  const std::string& path() const { return path_; }
  ByteBuffer& buffer() { return buffer_; }
  // Writes the buffered lines; errors (disk full) are reported once.
  void Flush();

 private:
  RankLog() = default;
  // A busy log reserves its next blocks in 8 MiB steps (fallocate, size
  // unchanged): ext4's per-write block allocation was ~12% of the agent's
  // time at full speed. Filesystems without fallocate just skip it.
  void ReserveAhead(size_t upcoming);

  std::string path_;
  io::UniqueFd fd_;
  ByteBuffer buffer_;
  bool failed_ = false;
  off_t written_ = 0;
  off_t reserved_ = 0;
  bool can_reserve_ = true;
};

class OutputStream {
 public:
  static constexpr size_t kReadSize = 256 * 1024;
  // A line longer than this is cut (and continued as the next line) rather
  // than held in memory without bound.
  static constexpr size_t kMaxLine = 8 * 1024 * 1024;

  enum class ReadStatus { kData, kWouldBlock, kEof };

  // `marker`: 'O' or 'E'. `console` null: this rank is filtered off the console.
  OutputStream(io::UniqueFd pipe, char marker, RankLog* log, ConsoleSink* console, std::string console_prefix);

  int fd() const { return pipe_.get(); }
  bool open() const { return pipe_.valid(); }

  // One read(2) into `scratch` (kReadSize bytes); complete lines go into the
  // buffers (the caller flushes them). `stamp` is set when data arrived.
  ReadStatus ReadOnce(char* scratch, LineStamp& stamp);
  // Turns an unterminated tail into a line (adds the newline) and closes the pipe.
  void Finish(LineStamp& stamp);

  // Every line is shown to `printed` too (progress read from the output);
  // null: none. It must outlive the stream.
  void set_printed_metrics(PrintedMetrics* printed) { printed_ = printed; }
  // Every byte read goes to `copy` too, as the worker wrote it (no stamp, no
  // line handling): torchrun's stdout.log/stderr.log. Null: none. It must
  // outlive the stream; the caller flushes it with the log.
  void set_raw_copy(RankLog* copy) { raw_copy_ = copy; }

 private:
  // "<stamp> O " for the lines of one read batch.
  std::string_view LineHead(std::string_view stamp);
  void ProcessChunk(const char* data, size_t size, std::string_view head);
  // One line, given as up to two pieces (a held partial line and its end).
  void EmitLine(const char* first, size_t first_size, const char* second, size_t second_size,
                std::string_view head);

  io::UniqueFd pipe_;
  char marker_;
  RankLog* log_;
  ConsoleSink* console_;
  std::string console_prefix_;
  ByteBuffer partial_;
  PrintedMetrics* printed_ = nullptr;
  RankLog* raw_copy_ = nullptr;
  char line_head_[LineStamp::kLength + 3];
};

}  // namespace primus::agent
