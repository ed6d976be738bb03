#include "runtime/k8s_yaml.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "util/strings.h"

namespace primus::runtime {
namespace {

void Emit(YAML::Emitter& out, const nlohmann::ordered_json& value) {
  switch (value.type()) {
    case nlohmann::ordered_json::value_t::object:
      out << YAML::BeginMap;
      for (const auto& [key, item] : value.items()) {
        out << YAML::Key;
        if (IsPlainSafe(key)) out << key;
        else out << YAML::DoubleQuoted << key;
        out << YAML::Value;
        Emit(out, item);
      }
      out << YAML::EndMap;
      break;
    case nlohmann::ordered_json::value_t::array:
      out << YAML::BeginSeq;
      for (const auto& item : value) Emit(out, item);
      out << YAML::EndSeq;
      break;
    case nlohmann::ordered_json::value_t::string: {
      const std::string& text = value.get_ref<const std::string&>();
      if (IsPlainSafe(text)) out << text;
      else out << YAML::DoubleQuoted << text;
      break;
    }
    case nlohmann::ordered_json::value_t::boolean:
      out << value.get<bool>();
      break;
    case nlohmann::ordered_json::value_t::number_integer:
      out << value.get<int64_t>();
      break;
    case nlohmann::ordered_json::value_t::number_unsigned:
      out << value.get<uint64_t>();
      break;
    case nlohmann::ordered_json::value_t::number_float:
      out << value.get<double>();
      break;
    default:
      out << YAML::Null;
      break;
  }
}

}  // namespace

bool IsPlainSafe(std::string_view text) {
  if (text.empty() || !std::isalpha(static_cast<unsigned char>(text.front()))) {
    if (text.empty() || text.front() != '/') return false;
  }
  bool ordinary = std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '/' || c == '-';
  });
  if (!ordinary) return false;
  // YAML 1.1 booleans and null, which sigs.k8s.io/yaml still honours.
  static constexpr std::array<std::string_view, 9> kReserved = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"};
  std::string lower = ToLower(text);
  return std::find(kReserved.begin(), kReserved.end(), lower) == kReserved.end();
}

std::string ToYaml(const nlohmann::ordered_json& document) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  out.SetMapFormat(YAML::Block);
  // Double-quoted strings escape every byte outside printable ASCII
  // (\n, \x1b, \x7f, \u00e9): a control character never reaches the file
  // raw, where a YAML reader would refuse it or read a line break.
  out.SetOutputCharset(YAML::EscapeNonAscii);
  Emit(out, document);
  std::string text = out.c_str();
  if (!text.empty() && text.back() != '\n') text += '\n';
  return text;
}

std::string ToYamlDocuments(const std::vector<nlohmann::ordered_json>& documents, std::string_view comment) {
  std::string text;
  for (const std::string& line : Split(comment, '\n')) {
    // A CR or another control character must not end the comment.
    if (!line.empty()) text += "# " + EscapeControlCharacters(line) + "\n";
  }
  for (const nlohmann::ordered_json& document : documents) text += "---\n" + ToYaml(document);
  return text;
}

}  // namespace primus::runtime
