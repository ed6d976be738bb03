#include "agent/output_stream.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "util/log.h"
#include "util/private_files.h"

namespace primus::agent {

Result<RankLog> RankLog::Open(const std::string& path) {
  RankLog log;
  log.path_ = path;
  auto fd = CreatePrivateFile(path);
  if (!fd) return fd.error();
  log.fd_.Reset(*fd);
  return log;
}

RankLog::~RankLog() {
  if (fd_.valid() && reserved_ > written_) {
    // Truncating to the same size frees the reserved blocks past the end.
    if (::ftruncate(fd_.get(), written_) != 0) {
    }
  }
}

void RankLog::ReserveAhead(size_t upcoming) {
  constexpr off_t kStart = 1 << 20, kStep = 8 << 20;
  off_t end = written_ + static_cast<off_t>(upcoming);
  if (!can_reserve_ || end < kStart || end <= reserved_) return;
  off_t from = std::max(reserved_, written_);
  off_t to = end + kStep;
  if (::fallocate(fd_.get(), FALLOC_FL_KEEP_SIZE, from, to - from) != 0) {
    can_reserve_ = false;  // EOPNOTSUPP (NFS, tmpfs with limits...), ENOSPC: write as usual
    return;
  }
  reserved_ = to;
}

void RankLog::Flush() {
  if (buffer_.empty()) return;
  ReserveAhead(buffer_.size());
  if (!failed_) {
    if (io::WriteAll(fd_.get(), buffer_.data(), buffer_.size())) {
      written_ += static_cast<off_t>(buffer_.size());
    } else {
      failed_ = true;
      log::Warn("cannot write log file {}: {}; its further output is lost", path_, std::strerror(errno));
    }
  }
  buffer_.Clear();
  buffer_.ReleaseIfLarge(4 << 20);
}

OutputStream::OutputStream(io::UniqueFd pipe, char marker, RankLog* log, ConsoleSink* console,
                           std::string console_prefix)
    : pipe_(std::move(pipe)),
      marker_(marker),
      log_(log),
      console_(console),
      console_prefix_(std::move(console_prefix)) {
  int flags = ::fcntl(pipe_.get(), F_GETFL);
  ::fcntl(pipe_.get(), F_SETFL, flags | O_NONBLOCK);
}

OutputStream::ReadStatus OutputStream::ReadOnce(char* scratch, LineStamp& stamp) {
  while (true) {
    ssize_t n = ::read(pipe_.get(), scratch, kReadSize);
    if (n > 0) {
      if (raw_copy_ != nullptr) raw_copy_->buffer().Append(scratch, static_cast<size_t>(n));
      ProcessChunk(scratch, static_cast<size_t>(n), LineHead(stamp.Now()));
      // A short read ending at a line's end: the pipe held no more, so a
      // block of lines printed at once (Megatron's timers) is complete.
      if (printed_ != nullptr && static_cast<size_t>(n) < kReadSize && partial_.empty()) printed_->OnOutputPaused();
      return ReadStatus::kData;
    }
    if (n == 0) return ReadStatus::kEof;
    if (errno == EINTR) continue;
    if (errno == EAGAIN) return ReadStatus::kWouldBlock;
    return ReadStatus::kEof;  // EIO and friends: treat as closed
  }
}

void OutputStream::Finish(LineStamp& stamp) {
  if (!partial_.empty()) {
    EmitLine(partial_.data(), partial_.size(), nullptr, 0, LineHead(stamp.Now()));
    partial_.Clear();
  }
  if (printed_ != nullptr) printed_->OnOutputPaused();
  partial_.ReleaseIfLarge(0);
  pipe_.Reset();
}

std::string_view OutputStream::LineHead(std::string_view stamp) {
  std::memcpy(line_head_, stamp.data(), stamp.size());
  line_head_[stamp.size()] = ' ';
  line_head_[stamp.size() + 1] = marker_;
  line_head_[stamp.size() + 2] = ' ';
  return {line_head_, stamp.size() + 3};
}

void OutputStream::ProcessChunk(const char* data, size_t size, std::string_view head) {
  const char* end = data + size;
  if (!partial_.empty()) {
    const char* newline = static_cast<const char*>(std::memchr(data, '\n', size));
    if (newline == nullptr) {
      size_t room = kMaxLine - partial_.size();
      if (size < room) {
        partial_.Append(data, size);
        return;
      }
      // Too long to hold: emit what fits as one line, keep the rest.
      EmitLine(partial_.data(), partial_.size(), data, room, head);
      partial_.Clear();
      partial_.ReleaseIfLarge(1 << 20);
      data += room;
      if (data < end) ProcessChunk(data, static_cast<size_t>(end - data), head);
      return;
    }
    EmitLine(partial_.data(), partial_.size(), data, static_cast<size_t>(newline - data), head);
    partial_.Clear();
    partial_.ReleaseIfLarge(1 << 20);
    data = newline + 1;
  }
  while (data < end) {
    const char* newline = static_cast<const char*>(std::memchr(data, '\n', static_cast<size_t>(end - data)));
    if (newline == nullptr) break;
    EmitLine(data, static_cast<size_t>(newline - data), nullptr, 0, head);
    data = newline + 1;
  }
  if (data < end) {
    size_t rest = static_cast<size_t>(end - data);
    if (rest >= kMaxLine) {
      EmitLine(data, kMaxLine, nullptr, 0, head);
      ProcessChunk(data + kMaxLine, rest - kMaxLine, head);
      return;
    }
    partial_.Append(data, rest);
  }
}

void OutputStream::EmitLine(const char* first, size_t first_size, const char* second, size_t second_size,
                            std::string_view head) {
  size_t line_size = first_size + second_size;
  ByteBuffer& file = log_->buffer();
  char* out = file.Reserve(head.size() + line_size + 1);
  std::memcpy(out, head.data(), head.size());
  out += head.size();
  std::memcpy(out, first, first_size);
  if (second_size > 0) std::memcpy(out + first_size, second, second_size);
  out[line_size] = '\n';
  // The line is whole here, in the log's buffer, until the next Reserve.
  if (printed_ != nullptr) printed_->OnLine(std::string_view(out, line_size));
  file.Commit(head.size() + line_size + 1);

  if (console_ == nullptr || !console_->active()) return;
  ByteBuffer& console = console_->buffer();
  char* slot = console.Reserve(console_prefix_.size() + line_size + 1);
  std::memcpy(slot, console_prefix_.data(), console_prefix_.size());
  slot += console_prefix_.size();
  std::memcpy(slot, first, first_size);
  if (second_size > 0) std::memcpy(slot + first_size, second, second_size);
  slot[line_size] = '\n';
  console.Commit(console_prefix_.size() + line_size + 1);
}

}  // namespace primus::agent
