#include "util/strings.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

namespace primus {

std::vector<std::string> Split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

std::string Join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += separator;
    out += parts[i];
  }
  return out;
}

std::string JoinNumbers(const std::vector<int>& numbers, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < numbers.size(); ++i) {
    if (i) out += separator;
    out += std::to_string(numbers[i]);
  }
  return out;
}

std::string_view Trim(std::string_view text) {
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(begin, end - begin);
}

std::string ToLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string ToUpper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string ReplaceAll(std::string text, std::string_view from, std::string_view to) {
  if (from.empty()) return text;
  size_t pos = 0;
  while ((pos = text.find(from, pos)) != std::string::npos) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
  return text;
}

std::optional<int64_t> ParseInt(std::string_view text) {
  text = Trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::optional<double> ParseDouble(std::string_view text) {
  std::string copy(Trim(text));
  if (copy.empty()) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return std::nullopt;
  return value;
}

std::optional<bool> ParseBool(std::string_view text) {
  std::string lower = ToLower(Trim(text));
  if (lower == "true" || lower == "yes" || lower == "on" || lower == "1") return true;
  if (lower == "false" || lower == "no" || lower == "off" || lower == "0") return false;
  return std::nullopt;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insertions, deletions, substitutions and
  // transpositions of neighbours each cost 1 ("slrum" is one typo away).
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  size_t best_distance = std::max<size_t>(1, word.size() / 3) + 1;
  for (const auto& candidate : candidates) {
    size_t distance = EditDistance(ToLower(word), ToLower(candidate));
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  if (!best && word.size() >= 3) {
    for (const auto& candidate : candidates) {
      if (candidate.starts_with(word)) return candidate;
    }
  }
  return best;
}

std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  auto match = ClosestMatch(word, candidates);
  return match ? " (did you mean '" + *match + "'?)" : "";
}

namespace {

// The length of the well-formed UTF-8 sequence starting at text[at] (its
// code point in *code), or 0 when none starts there.
size_t Utf8Sequence(std::string_view text, size_t at, uint32_t* code) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(at);
  if (lead < 0x80) {
    *code = lead;
    return 1;
  }
  size_t length = (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : (lead & 0xF8) == 0xF0 ? 4 : 0;
  if (length == 0 || at + length > text.size()) return 0;
  uint32_t value = lead & (0x7F >> length);
  for (size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xC0) != 0x80) return 0;
    value = (value << 6) | (byte(at + i) & 0x3F);
  }
  static constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (value < kSmallest[length] || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return 0;
  *code = value;
  return length;
}

// Code points a terminal or an editor acts on instead of showing: C0 and C1
// controls, DEL, line and paragraph separators, direction marks and overrides.
bool IsControlCode(uint32_t code) {
  return code < 0x20 || (code >= 0x7F && code <= 0x9F) || code == 0x2028 || code == 0x2029 || code == 0x200E ||
         code == 0x200F || (code >= 0x202A && code <= 0x202E) || (code >= 0x2066 && code <= 0x2069);
}

// Calls unit(bytes, escape) for each UTF-8 sequence of `text` (a lone bad byte
// is a unit of its own), escape saying whether it is a control or not UTF-8.
template <typename Unit>
void ForEachUnit(std::string_view text, Unit unit) {
  for (size_t at = 0; at < text.size();) {
    uint32_t code = 0;
    size_t length = Utf8Sequence(text, at, &code);
    bool escape = length == 0 || IsControlCode(code);
    if (length == 0) length = 1;
    unit(text.substr(at, length), escape);
    at += length;
  }
}

// \n, \r, \t, or \xHH for each byte.
void AppendEscaped(std::string_view bytes, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (char c : bytes) {
    if (c == '\n') *out += "\\n";
    else if (c == '\r') *out += "\\r";
    else if (c == '\t') *out += "\\t";
    else {
      auto byte = static_cast<unsigned char>(c);
      *out += "\\x";
      *out += kHex[byte >> 4];
      *out += kHex[byte & 15];
    }
  }
}

}  // namespace

bool HasControlCharacter(std::string_view text) {
  bool found = false;
  ForEachUnit(text, [&](std::string_view, bool escape) { found = found || escape; });
  return found;
}

bool IsValidUtf8(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    uint32_t code = 0;
    size_t length = Utf8Sequence(text, at, &code);
    if (length == 0) return false;
    at += length;
  }
  return true;
}

std::string EscapeControlCharacters(std::string_view text, bool keep_line_breaks) {
  if (!HasControlCharacter(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  ForEachUnit(text, [&](std::string_view bytes, bool escape) {
    if (!escape || (keep_line_breaks && (bytes == "\n" || bytes == "\t"))) out += bytes;
    else AppendEscaped(bytes, &out);
  });
  return out;
}

std::string ShellQuote(std::string_view arg) {
  if (arg.empty()) return "''";
  bool safe = std::all_of(arg.begin(), arg.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
  });
  if (safe) return std::string(arg);
  if (HasControlCharacter(arg)) {
    // bash's ANSI-C quoting: \xHH is always two digits, so a hex digit after
    // it stays a character of its own.
    std::string out = "$'";
    ForEachUnit(arg, [&](std::string_view bytes, bool escape) {
      if (escape) AppendEscaped(bytes, &out);
      else if (bytes == "'") out += "\\'";
      else if (bytes == "\\") out += "\\\\";
      else out += bytes;
    });
    return out + "'";
  }
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

std::string ShellJoin(const std::vector<std::string>& argv) {
  std::string out;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i) out += ' ';
    out += ShellQuote(argv[i]);
  }
  return out;
}

bool IsSafePathComponent(std::string_view text) {
  if (text.empty() || text.size() > 128 || text == "." || text == "..") return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
  });
}

}  // namespace primus
