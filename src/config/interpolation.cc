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

// The text for a message: long scalars are cut.
std::string Excerpt(std::string_view text) {
  constexpr size_t kShown = 80;
  if (text.size() <= kShown) return std::string(text);
  return std::string(text.substr(0, kShown)) + "... (" + std::to_string(text.size()) + " bytes)";
}

Result<std::string> InterpolateAt(std::string_view text, const Environment& env, const Origin& where, int depth) {
  if (depth > kMaxInterpolationDepth) {
    return ConfigErrorAt(where,
                         "${...} defaults are nested more than " + std::to_string(kMaxInterpolationDepth) +
                             " deep in '" + Excerpt(text) + "'",
                         "nest at most " + std::to_string(kMaxInterpolationDepth) +
                             " levels of ${NAME:default}; set the variables instead");
  }
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
      return ConfigErrorAt(where, "'${' is never closed in '" + Excerpt(text) + "'",
                           "write ${NAME} or ${NAME:default}, or '$$' for a literal '$'");
    }
    std::string_view inside = text.substr(i + 2, close - i - 2);
    size_t colon = inside.find(':');
    std::string_view name = inside.substr(0, colon);
    if (!IsValidVariableName(name)) {
      return ConfigErrorAt(where,
                           "invalid variable name '" + Excerpt(name) + "' in '${" + Excerpt(inside) + "}'",
                           "names are letters, digits and '_', not starting with a digit; "
                           "write '$$' for a literal '$'");
    }
    if (std::optional<std::string> value = Lookup(env, name)) {
      out += *value;
    } else if (colon != std::string_view::npos) {
      Result<std::string> fallback = InterpolateAt(inside.substr(colon + 1), env, where, depth + 1);
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

}  // namespace

Result<std::string> Interpolate(std::string_view text, const Environment& env, const Origin& where) {
  return InterpolateAt(text, env, where, 0);
}

}  // namespace primus::config
