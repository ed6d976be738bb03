#include "monitor/terminal_screen.h"

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include "util/strings.h"

namespace primus::monitor {
namespace {

// Enter the alternate screen, hide the cursor / the reverse.
constexpr char kTakeOver[] = "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J";
constexpr char kGiveBack[] = "\x1b[0m\x1b[?25h\x1b[?1049l";

void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t written = ::write(fd, text.data() + done, text.size() - done);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;  // the terminal went away: nothing left to draw on
    done += static_cast<size_t>(written);
  }
}

sigset_t WatchedSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGWINCH}) sigaddset(&set, signal);
  return set;
}

}  // namespace

bool ColorWanted() {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return (no_color == nullptr || *no_color == '\0') && !(term != nullptr && std::string(term) == "dumb");
}

bool Utf8Locale() {
  for (const char* name : {"LC_ALL", "LC_CTYPE", "LANG"}) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    std::string lower = ToLower(value);
    return lower.find("utf-8") != std::string::npos || lower.find("utf8") != std::string::npos;
  }
  return false;
}

TerminalScreen::TerminalScreen(int out_fd, int in_fd) : out_fd_(out_fd), in_fd_(in_fd) {
  if (::isatty(in_fd_) && ::tcgetattr(in_fd_, &saved_) == 0) {
    termios raw = saved_;
    raw.c_lflag &= ~(ECHO | ICANON);  // ISIG stays: Ctrl-C still sends SIGINT
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    keys_ = ::tcsetattr(in_fd_, TCSANOW, &raw) == 0;
  }
  WriteAll(out_fd_, kTakeOver);
}

TerminalScreen::~TerminalScreen() { Restore(); }

void TerminalScreen::Restore() {
  if (!active_) return;
  active_ = false;
  WriteAll(out_fd_, kGiveBack);
  if (keys_) ::tcsetattr(in_fd_, TCSANOW, &saved_);
}

TerminalSize TerminalSizeOf(int fd) {
  TerminalSize size;
  winsize window{};
  if (::ioctl(fd, TIOCGWINSZ, &window) == 0 && window.ws_col > 0 && window.ws_row > 0) {
    size.columns = window.ws_col;
    size.rows = window.ws_row;
  }
  return size;
}

TerminalSize TerminalScreen::Size() const { return TerminalSizeOf(out_fd_); }

void TerminalScreen::Draw(const std::string& frame) {
  if (active_) WriteAll(out_fd_, frame);
}

RefreshWait::RefreshWait(bool read_keys) : read_keys_(read_keys) {
  sigset_t set = WatchedSignals();
  ::sigprocmask(SIG_BLOCK, &set, &saved_mask_);
  signal_fd_ = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

RefreshWait::~RefreshWait() {
  if (signal_fd_ >= 0) ::close(signal_fd_);
  // Signals that came meanwhile were read as events; drop any still pending
  // so that unblocking does not deliver them to their default action.
  sigset_t set = WatchedSignals();
  timespec zero{};
  while (::sigtimedwait(&set, nullptr, &zero) > 0) {
  }
  ::sigprocmask(SIG_SETMASK, &saved_mask_, nullptr);
}

RefreshWait::Event RefreshWait::Wait(double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (true) {
    auto left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return Event::kTimeout;
    pollfd fds[2] = {{signal_fd_, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
    int count = read_keys_ ? 2 : 1;
    int ready = ::poll(fds, count, static_cast<int>(std::ceil(left * 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline is checked above
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo info{};
      if (::read(signal_fd_, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
        return info.ssi_signo == SIGWINCH ? Event::kResize : Event::kQuit;
      }
    }
    if (count == 2 && fds[1].revents) {
      char keys[64];
      ssize_t got = ::read(STDIN_FILENO, keys, sizeof(keys));
      if (got <= 0) {
        read_keys_ = false;  // input closed: only signals end the view now
        continue;
      }
      for (ssize_t i = 0; i < got; ++i) {
        if (keys[i] == 'q' || keys[i] == 'Q') return Event::kQuit;
      }
    }
  }
}

}  // namespace primus::monitor
