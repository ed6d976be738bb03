#include "analyze/log_line.h"

#include <cctype>
#include <ctime>

namespace primus::analyze {
namespace {

bool Digits(std::string_view text, size_t from, size_t count) {
  if (text.size() < from + count) return false;
  for (size_t i = from; i < from + count; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

// Callers pass at most kMaxRankDigits digits, so the value fits an int.
constexpr size_t kMaxRankDigits = 9;

int Number(std::string_view text, size_t from, size_t count) {
  int value = 0;
  for (size_t i = from; i < from + count; ++i) value = value * 10 + (text[i] - '0');
  return value;
}

// "YYYY-MM-DD?HH:MM:SS" at the start of `text`, '?' being 'T' or ' '.
bool LooksLikeDateTime(std::string_view text) {
  return text.size() >= 19 && Digits(text, 0, 4) && text[4] == '-' && Digits(text, 5, 2) && text[7] == '-' && Digits(text, 8, 2) &&
         (text[10] == 'T' || text[10] == ' ') && Digits(text, 11, 2) && text[13] == ':' && Digits(text, 14, 2) &&
         text[16] == ':' && Digits(text, 17, 2);
}

// The fraction after the seconds (".495496" or ",580"); returns its length.
size_t Fraction(std::string_view text, size_t from, double* fraction) {
  if (text.size() <= from || (text[from] != '.' && text[from] != ',')) return 0;
  size_t end = from + 1;
  double scale = 0.1;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) {
    *fraction += (text[end] - '0') * scale;
    scale /= 10;
    ++end;
  }
  return end - from;
}

std::string_view SkipSpaces(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  return text;
}

}  // namespace

double LogLineParser::HourStart(std::string_view date_hour) {
  std::string key(date_hour);
  auto found = hours_.find(key);
  if (found != hours_.end()) return found->second;
  std::tm parts{};
  parts.tm_year = Number(date_hour, 0, 4) - 1900;
  parts.tm_mon = Number(date_hour, 5, 2) - 1;
  parts.tm_mday = Number(date_hour, 8, 2);
  parts.tm_hour = Number(date_hour, 11, 2);
  parts.tm_isdst = -1;
  double start = static_cast<double>(std::mktime(&parts));
  hours_.emplace(std::move(key), start);
  return start;
}

LogLine LogLineParser::Parse(std::string_view raw) {
  LogLine line;
  if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
  std::string_view text = raw;
  bool bracketed = !text.empty() && text.front() == '[' && LooksLikeDateTime(text.substr(1));
  std::string_view stamp = bracketed ? text.substr(1) : text;
  if (LooksLikeDateTime(stamp)) {
    double fraction = 0;
    size_t length = 19 + Fraction(stamp, 19, &fraction);
    line.time = HourStart(stamp.substr(0, 13)) + Number(stamp, 14, 2) * 60 + Number(stamp, 17, 2) + fraction;
    text = stamp.substr(length);
    if (bracketed && !text.empty() && text.front() == ']') text.remove_prefix(1);
    text = SkipSpaces(text);
    // The rank-log stream marker: "O " (stdout) or "E " (stderr).
    if (text.size() >= 2 && (text[0] == 'O' || text[0] == 'E') && text[1] == ' ') text.remove_prefix(2);
  }
  // "[host:rank] " as the console prefixes interleaved worker output.
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    size_t colon = text.find(':');
    // A host name has no spaces: torch's own "[W socket.cpp:601]" is not a prefix.
    if (close != std::string_view::npos && colon < close && colon > 1 && close > colon + 1 && close - colon - 1 <= kMaxRankDigits &&
        Digits(text, colon + 1, close - colon - 1) && text.substr(1, colon - 1).find(' ') == std::string_view::npos) {
      line.host = text.substr(1, colon - 1);
      line.rank = Number(text, colon + 1, close - colon - 1);
      text = SkipSpaces(text.substr(close + 1));
    }
  }
  // "rank N: " as the agent's endings file writes it.
  if (line.rank < 0 && text.starts_with("rank ")) {
    size_t digits = 5;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
    if (digits > 5 && digits - 5 <= kMaxRankDigits && digits < text.size() && text[digits] == ':') {
      line.rank = Number(text, 5, digits - 5);
      text = SkipSpaces(text.substr(digits + 1));
    }
  }
  line.text = text;
  return line;
}

}  // namespace primus::analyze
