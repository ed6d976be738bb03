// The one line of progress long work shows on a terminal: redrawn in place
// ("\r" + clear to the end of the line) with what is being done, n/total,
// the time so far and an estimate of the time left. Where stderr is not a
// terminal (a pipe, a file, CI), or under --quiet, nothing at all is
// written, so what a script reads is unchanged.
//
// There is at most one line per process: whatever else writes to the same
// terminal (log lines, the workers' console output) lifts it off first and
// puts it back after (LiftProgressLine), so text never lands in its middle.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <string_view>

namespace primus {

// "0:07", "12:34", "1:02:03" (h:mm:ss once past an hour).
std::string FormatClock(double seconds);

// The line's text for `done` of `total` after `elapsed_s`, e.g.
// "benchmark gemm: shape 3/7 (2048x2048x2048)  0:12 elapsed, ETA 0:20".
// The ETA assumes the rest goes at the pace so far; "-" until a unit is done.
std::string FormatProgressText(std::string_view what, long done, long total, double elapsed_s, std::string_view detail);

class ProgressLine {
 public:
  // Shown when stderr is a terminal and info messages are on (not --quiet).
  static bool ShouldShow();

  // `what` leads the line ("benchmark gemm: shape"). `show` false makes
  // every call a no-op (the caller decided: a pipe, --quiet, a test).
  explicit ProgressLine(std::string what, bool show = ShouldShow(), int fd = 2);
  ~ProgressLine();  // clears the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool shown() const { return show_; }
  // Redraws with n/total, elapsed and ETA; at most every 100 ms, except the
  // first update and done == total.
  void Update(long done, long total, std::string_view detail = "");
  // Redraws with this text as it is (a caller with its own format: train).
  void Show(std::string_view text);
  // Takes the line off the terminal; the next Update draws it again.
  void Clear();

 private:
  std::string what_;
  bool show_;
  int fd_;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_draw_{};
  bool drawn_once_ = false;
};

// While it lives, the drawn progress line (if `fd` is the terminal it is
// on) is off the screen; it is drawn again when the guard goes. Writers to
// stdout/stderr hold one around each write.
class LiftProgressLine {
 public:
  explicit LiftProgressLine(int fd);
  ~LiftProgressLine();
  LiftProgressLine(const LiftProgressLine&) = delete;
  LiftProgressLine& operator=(const LiftProgressLine&) = delete;

 private:
  std::unique_lock<std::mutex> lock_;
  bool lifted_ = false;
};

}  // namespace primus
