// The terminal while `primus-cli monitor` draws on it, and the wait between
// two refreshes.
//
// TerminalScreen takes the terminal over (the alternate screen, the cursor
// hidden, typed keys neither echoed nor line-buffered) and gives it back as
// it was when destroyed, so the shell's screen and cursor return whether the
// view ends with the job, with q, or with Ctrl-C.
//
// RefreshWait blocks SIGINT, SIGTERM, SIGHUP and SIGWINCH and reads them
// from a signalfd beside the keyboard, so a signal is an ordinary event of
// the loop: the terminal is restored by ordinary code, never by a handler.
#pragma once

#include <termios.h>

#include <memory>
#include <string>

#include "util/error.h"

namespace primus::monitor {

struct TerminalSize {
  int columns = 80;
  int rows = 24;
};

// The window size of the terminal on `fd`; 80x24 when it is none.
TerminalSize TerminalSizeOf(int fd);

// Whether the view may use colours on a terminal: NO_COLOR unset and TERM not "dumb".
bool ColorWanted();
// Whether the locale's characters are UTF-8 (LC_ALL, LC_CTYPE, LANG); if not, the view stays ASCII.
bool Utf8Locale();

class TerminalScreen {
 public:
  // On the terminal of `out_fd`, keys read from `in_fd` when it is a terminal too.
  TerminalScreen(int out_fd, int in_fd);
  ~TerminalScreen();
  TerminalScreen(const TerminalScreen&) = delete;
  TerminalScreen& operator=(const TerminalScreen&) = delete;

  TerminalSize Size() const;
  void Draw(const std::string& frame);
  // Gives the terminal back now (the destructor does nothing more).
  void Restore();

 private:
  int out_fd_;
  int in_fd_;
  bool active_ = true;
  bool keys_ = false;
  termios saved_{};
};

class RefreshWait {
 public:
  enum class Event { kTimeout, kResize, kQuit };

  // `read_keys`: q (or Q) on stdin ends the view.
  explicit RefreshWait(bool read_keys);
  ~RefreshWait();
  RefreshWait(const RefreshWait&) = delete;
  RefreshWait& operator=(const RefreshWait&) = delete;

  // Until `seconds` pass, the window is resized, or the user asks to quit
  // (SIGINT, SIGTERM, SIGHUP, q).
  Event Wait(double seconds);

 private:
  int signal_fd_ = -1;
  bool read_keys_;
  sigset_t saved_mask_{};
};

}  // namespace primus::monitor
