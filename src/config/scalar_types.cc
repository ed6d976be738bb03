#include "config/scalar_types.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "util/strings.h"

namespace primus::config {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool IsOctalDigit(char c) { return c >= '0' && c <= '7'; }

bool AllOf(std::string_view text, bool (*predicate)(char)) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!predicate(c)) return false;
  }
  return true;
}

std::string_view WithoutSign(std::string_view text) {
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
  return text;
}

// [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
bool IsCoreFloat(std::string_view text) {
  std::string_view rest = WithoutSign(text);
  size_t i = 0;
  size_t integer_digits = 0;
  while (i < rest.size() && IsDigit(rest[i])) ++i, ++integer_digits;
  if (i < rest.size() && rest[i] == '.') {
    ++i;
    size_t fraction_digits = 0;
    while (i < rest.size() && IsDigit(rest[i])) ++i, ++fraction_digits;
    if (integer_digits == 0 && fraction_digits == 0) return false;
  } else if (integer_digits == 0) {
    return false;
  }
  if (i < rest.size() && (rest[i] == 'e' || rest[i] == 'E')) {
    ++i;
    if (i < rest.size() && (rest[i] == '-' || rest[i] == '+')) ++i;
    size_t exponent_digits = 0;
    while (i < rest.size() && IsDigit(rest[i])) ++i, ++exponent_digits;
    if (exponent_digits == 0) return false;
  }
  return i == rest.size();
}

std::optional<int64_t> ParseWithBase(std::string_view digits, int base) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

}  // namespace

Value InferScalar(std::string_view text, Origin origin) {
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL") {
    return Value::Null(std::move(origin));
  }
  if (text == "true" || text == "True" || text == "TRUE") return Value::Bool(true, std::move(origin));
  if (text == "false" || text == "False" || text == "FALSE") {
    return Value::Bool(false, std::move(origin));
  }
  if (text.size() > 2 && text[0] == '0' && text[1] == 'x' && AllOf(text.substr(2), IsHexDigit)) {
    if (auto value = ParseWithBase(text.substr(2), 16)) return Value::Int(*value, std::move(origin));
    return Value::String(std::string(text), std::move(origin));  // beyond int64
  }
  if (text.size() > 2 && text[0] == '0' && text[1] == 'o' && AllOf(text.substr(2), IsOctalDigit)) {
    if (auto value = ParseWithBase(text.substr(2), 8)) return Value::Int(*value, std::move(origin));
    return Value::String(std::string(text), std::move(origin));
  }
  if (AllOf(WithoutSign(text), IsDigit)) {
    if (auto value = ParseInt(text)) return Value::Int(*value, std::move(origin));
    if (auto value = ParseDouble(text)) return Value::Double(*value, std::move(origin));
  }
  std::string_view unsigned_text = WithoutSign(text);
  if (unsigned_text == ".inf" || unsigned_text == ".Inf" || unsigned_text == ".INF") {
    double infinity = std::numeric_limits<double>::infinity();
    return Value::Double(text.front() == '-' ? -infinity : infinity, std::move(origin));
  }
  if (text == ".nan" || text == ".NaN" || text == ".NAN") {
    return Value::Double(std::numeric_limits<double>::quiet_NaN(), std::move(origin));
  }
  if (IsCoreFloat(text)) {
    if (auto value = ParseDouble(text)) return Value::Double(*value, std::move(origin));
  }
  return Value::String(std::string(text), std::move(origin));
}

std::string FormatDouble(double value) {
  if (std::isnan(value)) return ".nan";
  if (std::isinf(value)) return value < 0 ? "-.inf" : ".inf";
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  return text;
}

namespace {

// Strings that a YAML 1.1 reader (PyYAML, used by training backends) would
// type differently: y/n/yes/no/on/off, and number-like text such as 1:00:00
// (sexagesimal 3600) or 1_000.
bool Yaml11ReadsDifferently(std::string_view text) {
  static const char* const kYaml11Words[] = {"y", "n", "yes", "no", "on", "off"};
  std::string lower = ToLower(text);
  for (const char* word : kYaml11Words) {
    if (lower == word) return true;
  }
  std::string_view rest = WithoutSign(text);
  return !rest.empty() && (IsDigit(rest.front()) || rest.front() == '.');
}

}  // namespace

std::string QuoteForYaml(std::string_view text) {
  // A leading byte order mark would be taken for the file's own and dropped on reading.
  bool needs_quotes = text.empty() || text == "<<" || text.starts_with("\xEF\xBB\xBF") ||
                      !InferScalar(text).IsString() ||
                      Yaml11ReadsDifferently(text) ||
                      text.front() == ' ' || text.back() == ' ' || text.back() == ':' ||
                      std::string_view("-?:,[]{}#&*!|>'\"%@`").find(text.front()) !=
                          std::string_view::npos ||
                      text.find(": ") != std::string_view::npos ||
                      text.find(" #") != std::string_view::npos;
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) needs_quotes = true;
  }
  if (!needs_quotes) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    switch (c) {
      case '"': quoted += "\\\""; break;
      case '\\': quoted += "\\\\"; break;
      case '\n': quoted += "\\n"; break;
      case '\t': quoted += "\\t"; break;
      case '\r': quoted += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          quoted += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        } else {
          quoted += c;
        }
    }
  }
  return quoted + "\"";
}

std::string ScalarToYaml(const Value& value, bool escape_dollars) {
  if (value.IsString()) {
    return QuoteForYaml(escape_dollars ? ReplaceAll(value.AsString(), "$", "$$") : value.AsString());
  }
  if (value.IsNull()) return "null";
  if (value.IsList()) return value.AsList().empty() ? "[]" : "[...]";
  if (value.IsMap()) return value.AsMap().empty() ? "{}" : "{...}";
  return value.ScalarText();
}

}  // namespace primus::config
