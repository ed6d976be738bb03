#include "telemetry/metrics_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

namespace primus::telemetry {

const std::optional<TrainingMetrics>& MetricsReader::Poll() {
  int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return latest_;
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return latest_;
  }
  if (info.st_dev != device_ || info.st_ino != inode_ || info.st_size < offset_) {
    // A new file (rotated), or this one was truncated: read it from the start.
    device_ = info.st_dev;
    inode_ = info.st_ino;
    offset_ = 0;
    partial_.clear();
    skip_to_newline_ = false;
  }
  if (info.st_size > offset_) {
    off_t from = offset_;
    if (info.st_size - from > static_cast<off_t>(kMaxReadBytes)) {
      // Too much to read: only the end matters, and its first line is cut.
      from = info.st_size - static_cast<off_t>(kMaxReadBytes);
      partial_.clear();
      skip_to_newline_ = true;
    }
    size_t want = static_cast<size_t>(info.st_size - from);
    std::unique_ptr<char[]> buffer(new char[want]);
    size_t got = 0;
    while (got < want) {
      ssize_t n = ::pread(fd, buffer.get() + got, want - got, from + static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    offset_ = from + static_cast<off_t>(got);
    double mtime = static_cast<double>(info.st_mtim.tv_sec) + static_cast<double>(info.st_mtim.tv_nsec) / 1e9;
    Consume(std::string_view(buffer.get(), got), mtime);
  }
  ::close(fd);
  return latest_;
}

void MetricsReader::Consume(std::string_view data, double mtime) {
  size_t last_newline = data.rfind('\n');
  if (last_newline == std::string_view::npos) {
    if (!skip_to_newline_) partial_.append(data);
    if (partial_.size() > kMaxLineBytes) {
      partial_.clear();
      skip_to_newline_ = true;
    }
    return;
  }
  // Complete lines: partial_ + data[0..last_newline]. Search from the end for
  // the last one that is a JSON object.
  std::string_view complete = data.substr(0, last_newline);
  std::string first_line_joined;  // the first line, when it continues partial_
  size_t end = complete.size();
  while (true) {
    size_t newline = end == 0 ? std::string_view::npos : complete.rfind('\n', end - 1);
    size_t start = newline == std::string_view::npos ? 0 : newline + 1;
    std::string_view line = complete.substr(start, end - start);
    bool first = start == 0;
    if (first) {
      if (skip_to_newline_) break;  // the cut line
      if (!partial_.empty()) {
        first_line_joined = partial_;
        first_line_joined.append(line);
        line = first_line_joined;
      }
    }
    if (line.size() <= kMaxLineBytes) {
      if (std::optional<TrainingMetrics> metrics = ParseMetricsLine(line)) {
        metrics->metrics_time = mtime;
        latest_ = metrics;
        break;
      }
    }
    if (first) break;
    end = newline;
  }
  skip_to_newline_ = false;
  partial_.assign(data.substr(last_newline + 1));
  if (partial_.size() > kMaxLineBytes) {
    partial_.clear();
    skip_to_newline_ = true;
  }
}

}  // namespace primus::telemetry
