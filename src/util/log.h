// The launcher's own log, on stderr: "[time] [host] [LEVEL] message".
// Colour only when stderr is a terminal (and NO_COLOR is unset). --quiet
// keeps warnings and errors; --debug adds every resolved command and
// environment change. A message never carries a raw control character (ESC,
// CR, ...: escaped as \x1b, \r; line breaks stay), and the filter the
// launcher installs removes secrets from it. Each line goes out in one write(2), so lines from
// several processes sharing a terminal never interleave mid-line.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <string>
#include <string_view>

namespace primus::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

// Parses "debug", "info", "warn"/"warning", "error".
bool ParseLevel(std::string_view text, Level* level);
std::string_view LevelName(Level level);

void SetLevel(Level level);
Level GetLevel();
bool Enabled(Level level);
// Overrides terminal detection (tests, or --color=always later).
void SetColor(bool enabled);

// Applied to every message before it is written; the launcher installs its
// redaction of secrets here (snapshot/redaction.h). Set it before threads start.
void SetMessageFilter(std::function<std::string(std::string_view)> filter);

// Formats one line exactly as written (without colour); exposed for tests.
std::string FormatLine(Level level, std::string_view message);
void Write(Level level, std::string_view message);

// From now on every line also goes to `fd` (uncoloured; the caller owns the
// descriptor), after the lines this process logged before it (at most the last
// 500): a launch's own log file (logs/launch.log). -1 stops the copy.
void CopyTo(int fd);

template <typename... Args>
void Debug(fmt::format_string<Args...> format, Args&&... args) {
  if (Enabled(Level::kDebug)) Write(Level::kDebug, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void Info(fmt::format_string<Args...> format, Args&&... args) {
  if (Enabled(Level::kInfo)) Write(Level::kInfo, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void Warn(fmt::format_string<Args...> format, Args&&... args) {
  if (Enabled(Level::kWarn)) Write(Level::kWarn, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void Error(fmt::format_string<Args...> format, Args&&... args) {
  Write(Level::kError, fmt::format(format, std::forward<Args>(args)...));
}

// The short host name used in log lines and console prefixes.
const std::string& HostName();

}  // namespace primus::log
