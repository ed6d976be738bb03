#include "util/log.h"

#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <deque>
#include <mutex>

#include "util/console_writer.h"
#include "util/progress_line.h"
#include "util/strings.h"

namespace primus::log {
namespace {

Level g_level = Level::kInfo;

// CopyTo's file, and the lines logged before it was given.
constexpr size_t kEarlyLines = 500;
std::mutex g_copy_mutex;
int g_copy_fd = -1;
std::deque<std::string>& EarlyLines() {
  static std::deque<std::string> lines;
  return lines;
}

void WriteCopy(int fd, const std::string& line) {
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n <= 0) return;  // a full disk: the console still has it
    done += static_cast<size_t>(n);
  }
}
int g_color = -1;  // -1: decide from the terminal on first use

std::function<std::string(std::string_view)>& MessageFilter() {
  static std::function<std::string(std::string_view)> filter;
  return filter;
}

bool UseColor() {
  if (g_color < 0) g_color = isatty(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr ? 1 : 0;
  return g_color == 1;
}

std::string_view ColorOf(Level level) {
  switch (level) {
    case Level::kDebug: return "\033[2m";
    case Level::kInfo: return "\033[32m";
    case Level::kWarn: return "\033[33m";
    case Level::kError: return "\033[31;1m";
  }
  return "";
}

}  // namespace

bool ParseLevel(std::string_view text, Level* level) {
  if (text == "debug") *level = Level::kDebug;
  else if (text == "info") *level = Level::kInfo;
  else if (text == "warn" || text == "warning") *level = Level::kWarn;
  else if (text == "error") *level = Level::kError;
  else return false;
  return true;
}

std::string_view LevelName(Level level) {
  switch (level) {
    case Level::kDebug: return "DEBUG";
    case Level::kInfo: return "INFO";
    case Level::kWarn: return "WARN";
    case Level::kError: return "ERROR";
  }
  return "?";
}

void SetLevel(Level level) { g_level = level; }
Level GetLevel() { return g_level; }
bool Enabled(Level level) { return level >= g_level; }
void SetColor(bool enabled) { g_color = enabled ? 1 : 0; }

const std::string& HostName() {
  static const std::string name = [] {
    char buffer[256] = {};
    if (gethostname(buffer, sizeof(buffer) - 1) != 0) return std::string("localhost");
    std::string host(buffer);
    // Short name: the part before the first dot, as Slurm and users write it.
    return host.substr(0, host.find('.'));
  }();
  return name;
}

std::string FormatLine(Level level, std::string_view message) {
  timeval now;
  gettimeofday(&now, nullptr);
  tm local;
  localtime_r(&now.tv_sec, &local);
  char stamp[32];
  strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &local);
  return fmt::format("[{}.{:03d}] [{}] [{}] {}\n", stamp, static_cast<int>(now.tv_usec / 1000),
                     HostName(), LevelName(level), message);
}

void SetMessageFilter(std::function<std::string(std::string_view)> filter) { MessageFilter() = std::move(filter); }

void Write(Level level, std::string_view message) {
  const auto& filter = MessageFilter();
  std::string line = FormatLine(level, EscapeControlCharacters(filter ? filter(message) : std::string(message),
                                                               /*keep_line_breaks=*/true));
  {
    std::lock_guard<std::mutex> lock(g_copy_mutex);
    if (g_copy_fd >= 0) {
      WriteCopy(g_copy_fd, line);
    } else {
      EarlyLines().push_back(line);
      if (EarlyLines().size() > kEarlyLines) EarlyLines().pop_front();
    }
  }
  if (UseColor()) {
    size_t level_start = line.find("] [", line.find("] [") + 1) + 3;
    size_t level_end = line.find(']', level_start);
    line = line.substr(0, level_start) + std::string(ColorOf(level)) +
           line.substr(level_start, level_end - level_start) + "\033[0m" + line.substr(level_end);
  }
  // Through the console writer: during a launch a paused terminal must not
  // stop the caller (util/console_writer.h); it lifts a progress line too.
  console_writer::Write(STDERR_FILENO, line);
}

void CopyTo(int fd) {
  std::lock_guard<std::mutex> lock(g_copy_mutex);
  if (fd >= 0) {
    for (const std::string& line : EarlyLines()) WriteCopy(fd, line);
    EarlyLines().clear();
  }
  g_copy_fd = fd;
}

}  // namespace primus::log
