#include "agent/error_file.h"

#include <nlohmann/json.hpp>

#include "util/files.h"
#include "util/json_fields.h"
#include "util/strings.h"

namespace primus::agent {
namespace {

constexpr size_t kMaxErrorFileBytes = 16 << 20;

std::optional<double> ParseTimestamp(const nlohmann::json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) return ParseDouble(value.get<std::string>());
  return std::nullopt;
}

std::string Text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "";
  return value.dump();
}

}  // namespace

std::optional<ErrorFileReport> ReadErrorFile(const std::string& path) {
  // A worker writes it: bounded, and read with the safe reader (depth, types).
  if (!PathExists(path)) return std::nullopt;
  auto content = ReadRegularFile(path, kMaxErrorFileBytes);
  ErrorFileReport report;
  if (!content.ok()) {
    report.message = "unreadable error file: " + content.error().message;
    return report;
  }
  if (Trim(*content).empty()) return std::nullopt;
  nlohmann::json root = json_fields::Parse(*content).value_or(nlohmann::json());
  if (!root.is_object() || !root.contains("message")) {
    report.message = "unrecognised error file: " + EscapeControlCharacters(content->substr(0, 500), true);
    return report;
  }
  const nlohmann::json& message = root["message"];
  if (message.is_object()) {
    if (message.contains("message")) report.message = Text(message["message"]);
    if (message.contains("extraInfo") && message["extraInfo"].is_object()) {
      const nlohmann::json& extra = message["extraInfo"];
      if (extra.contains("py_callstack")) report.traceback = Text(extra["py_callstack"]);
      if (extra.contains("timestamp")) report.timestamp = ParseTimestamp(extra["timestamp"]);
    }
  } else {
    report.message = Text(message);
  }
  if (!report.timestamp && root.contains("timestamp")) report.timestamp = ParseTimestamp(root["timestamp"]);
  return report;
}

}  // namespace primus::agent
