#include "config/interpolation.h"

#include <cctype>

namespace primus::config {
namespace {

bool IsValidVariableName(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front()))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// Position of the '}' closing the "${" that starts at `open`, counting nested
// "${"; npos when it is never closed.
size_t FindClosingBrace(std::string_view text, size_t open) {
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '$') {
      ++i;  // "$$" is an escape, never an opening
    } else if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') {
      ++depth;
      ++i;
    } else if (text[i] == '}') {
      if (--depth == 0) return i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

Result<std::string> Interpolate(std::string_view text, const Environment& env, const Origin& where) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c != '$' || i + 1 >= text.size()) {
      out += c;
      ++i;
      continue;
    }
    if (text[i + 1] == '$') {
      out += '$';
      i += 2;
      continue;
    }
    if (text[i + 1] != '{') {
      out += c;
      ++i;
      continue;
    }
    size_t close = FindClosingBrace(text, i);
    if (close == std::string_view::npos) {
      return ConfigErrorAt(where, "'${' is never closed in '" + std::string(text) + "'",
                           "write ${NAME} or ${NAME:default}, or '$$' for a literal '$'");
    }
    std::string_view inside = text.substr(i + 2, close - i - 2);
    size_t colon = inside.find(':');
    std::string_view name = inside.substr(0, colon);
    if (!IsValidVariableName(name)) {
      return ConfigErrorAt(where,
                           "invalid variable name '" + std::string(name) + "' in '${" +
                               std::string(inside) + "}'",
                           "names are letters, digits and '_', not starting with a digit; "
                           "write '$$' for a literal '$'");
    }
    if (std::optional<std::string> value = env.Get(name)) {
      out += *value;
    } else if (colon != std::string_view::npos) {
      Result<std::string> fallback = Interpolate(inside.substr(colon + 1), env, where);
      if (!fallback.ok()) return fallback.error();
      out += *fallback;
    } else {
      std::string variable(name);
      return ConfigErrorAt(where, "environment variable " + variable + " is not set (needed by '${" +
                                      variable + "}')",
                           "export " + variable + "=... before running, or give a default: ${" +
                               variable + ":default}");
    }
    i = close + 1;
  }
  return out;
}

}  // namespace primus::config
