#include "platform/profile_file.h"

#include <cctype>

#include <fmt/format.h>

#include "util/strings.h"

namespace primus::platform {
namespace {

// Splits "value  # comment" into value and comment; quotes protect '#'.
// Returns false for an unterminated quote or text after a closing quote.
bool SplitValue(std::string_view rest, std::string& value, std::string& comment) {
  rest = Trim(rest);
  std::string_view after;
  if (!rest.empty() && (rest.front() == '"' || rest.front() == '\'')) {
    size_t close = rest.find(rest.front(), 1);
    if (close == std::string_view::npos) return false;
    value = std::string(rest.substr(1, close - 1));
    after = Trim(rest.substr(close + 1));
    if (!after.empty() && after.front() != '#') return false;
  } else {
    size_t hash = std::string_view::npos;
    for (size_t i = 0; i < rest.size(); ++i) {
      if (rest[i] == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(rest[i - 1])))) {
        hash = i;
        break;
      }
    }
    value = std::string(Trim(rest.substr(0, hash)));
    after = hash == std::string_view::npos ? std::string_view() : rest.substr(hash);
  }
  if (!after.empty()) comment = std::string(Trim(after.substr(1)));
  return true;
}

}  // namespace

bool IsVariableName(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front()))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

ProfileFile ParseProfile(std::string_view text, const std::string& path, Diagnostics& diagnostics) {
  ProfileFile file;
  file.path = path;
  int number = 0;
  for (const std::string& raw : Split(text, '\n')) {
    ++number;
    std::string_view line = Trim(raw);
    if (line.empty() || line.front() == '#') continue;
    if (line.rfind("export ", 0) == 0) line = Trim(line.substr(7));
    size_t equals = line.find('=');
    ProfileSetting setting;
    setting.line = number;
    if (equals != std::string_view::npos) setting.name = std::string(Trim(line.substr(0, equals)));
    if (equals == std::string_view::npos || !IsVariableName(setting.name) ||
        !SplitValue(line.substr(equals + 1), setting.value, setting.comment)) {
      diagnostics.Warn(fmt::format("{}:{}: not a KEY=VALUE line, ignored: {}", path, number, line));
      continue;
    }
    file.settings.push_back(std::move(setting));
  }
  return file;
}

}  // namespace primus::platform
