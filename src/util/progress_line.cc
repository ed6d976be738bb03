#include "util/progress_line.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "util/log.h"

namespace primus {
namespace {

// The line drawn now, if any: one per process.
std::mutex g_mutex;
std::atomic<bool> g_drawn{false};
std::string g_text;  // under g_mutex
int g_fd = 2;        // under g_mutex

void WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n <= 0) return;  // a terminal that went away: progress is not worth an error
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

// Wider than the terminal would wrap, and "\r" only goes back one row.
std::string FitWidth(int fd, std::string text) {
  winsize size{};
  if (::ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 1 && text.size() >= size.ws_col) {
    text.resize(size.ws_col - 1);
  }
  return text;
}

}  // namespace

std::string FormatClock(double seconds) {
  // Any number (a worker's, an ETA from one) stays printable: at most 100 000 hours.
  long total = seconds > 0 ? static_cast<long>(std::min(seconds, 3.6e8) + 0.5) : 0;
  if (total >= 3600) return fmt::format("{}:{:02d}:{:02d}", total / 3600, total / 60 % 60, total % 60);
  return fmt::format("{}:{:02d}", total / 60, total % 60);
}

std::string FormatProgressText(std::string_view what, long done, long total, double elapsed_s, std::string_view detail) {
  std::string eta = "-";
  if (done > 0 && total >= done && elapsed_s > 0) {
    eta = FormatClock(elapsed_s / static_cast<double>(done) * static_cast<double>(total - done));
  }
  return fmt::format("{} {}/{}{}{}  {} elapsed, ETA {}", what, done, total, detail.empty() ? "" : " ", detail,
                     FormatClock(elapsed_s), eta);
}

bool ProgressLine::ShouldShow() { return ::isatty(STDERR_FILENO) == 1 && log::Enabled(log::Level::kInfo); }

ProgressLine::ProgressLine(std::string what, bool show, int fd)
    : what_(std::move(what)), show_(show), fd_(fd), started_(std::chrono::steady_clock::now()) {}

ProgressLine::~ProgressLine() { Clear(); }

void ProgressLine::Update(long done, long total, std::string_view detail) {
  if (!show_) return;
  auto now = std::chrono::steady_clock::now();
  if (drawn_once_ && done < total && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  drawn_once_ = true;
  Show(FormatProgressText(what_, done, total, std::chrono::duration<double>(now - started_).count(), detail));
}

void ProgressLine::Show(std::string_view text) {
  if (!show_) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_text = FitWidth(fd_, std::string(text));
  g_fd = fd_;
  WriteAll(fd_, "\r\033[K" + g_text);
  g_drawn = true;
}

void ProgressLine::Clear() {
  if (!show_) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_drawn || g_fd != fd_) return;
  WriteAll(fd_, "\r\033[K");
  g_drawn = false;
  g_text.clear();
}

LiftProgressLine::LiftProgressLine(int fd) {
  if (!g_drawn) return;
  lock_ = std::unique_lock<std::mutex>(g_mutex);
  // The same terminal: the line's own descriptor, or another one on a terminal.
  if (g_drawn && (fd == g_fd || ::isatty(fd) == 1)) {
    WriteAll(g_fd, "\r\033[K");
    lifted_ = true;
  }
}

LiftProgressLine::~LiftProgressLine() {
  if (lifted_) WriteAll(g_fd, g_text);
}

}  // namespace primus
