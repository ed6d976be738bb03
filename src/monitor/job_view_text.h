// The job view (docs/monitor.md, "The job's view") as lines of text for
// `primus-cli monitor`: a header for the whole job (run id, state, progress,
// ETA, loss, tokens/s, stragglers and why), then one row per node and under
// it one row per rank. Laid out for a given terminal size: rows are cut at
// the width, and a job with more ranks than the screen has rows is
// summarised (stragglers first, then each node's slowest and fastest rank,
// then only the nodes that need a look). Without a size (a pipe, a file)
// every rank is listed.
//
// Layout and drawing are pure functions of the view and the options, so the
// tests can check a 64-node job on an 80x24 screen without a terminal.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace primus::monitor {

struct ViewOptions {
  int width = 0;           // columns; 0: no limit
  int height = 0;          // rows; 0: no limit (every rank listed)
  bool ascii = false;      // only ASCII characters (the progress bar)
  double now = 0;          // seconds since the epoch, for "updated Ns ago"; 0: not shown
  double interval_s = 2;   // the refresh interval, when the view names none
};

// How a line is drawn where colours are wanted.
enum class LineStyle { kPlain, kTitle, kHeading, kNode, kWarn, kBad, kGood };

struct ViewLine {
  std::string text;  // printable text only, already cut to the width
  LineStyle style = LineStyle::kPlain;
};

std::vector<ViewLine> LayoutJobView(const nlohmann::json& view, const ViewOptions& options);

// The lines as plain text, one per line, each ended by "\n"; `color` wraps
// styled lines in ANSI colours (a terminal only).
std::string DrawLines(const std::vector<ViewLine>& lines, bool color);

// One screen for a terminal: cursor home, every line followed by "clear to
// end of line", then "clear to end of screen", so that a redraw replaces the
// previous one in place and never scrolls (the last row has no line break).
std::string DrawScreen(const std::vector<ViewLine>& lines, bool color);

// Whether the job view says the job ended, and how: "succeeded", "failed" or
// "ended without a record" (its agent is gone: monitor/job_source.h); "" while it runs.
std::string EndedState(const nlohmann::json& view);

// Counts, sizes and durations as the view prints them: 19752 -> "19.8k",
// 8123456789 bytes -> "7.6G" (1024-based), 3725 s -> "1h02m".
std::string FormatCount(double value);
std::string FormatBytes(double bytes);
std::string FormatDuration(double seconds);

}  // namespace primus::monitor
