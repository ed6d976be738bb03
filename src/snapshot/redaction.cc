#include "snapshot/redaction.h"

#include <algorithm>
#include <regex>

#include "util/strings.h"

namespace primus::snapshot {

bool IsSecretName(std::string_view name) {
  std::string upper = ToUpper(name);
  for (std::string_view word : {"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"}) {
    if (upper.find(word) != std::string::npos) return true;
  }
  return false;
}

std::string RedactUrlCredentials(std::string_view text) {
  // scheme://user:password@  ->  scheme://user:<redacted>@
  static const std::regex url_credentials(R"(([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*):([^/\s@]+)@)");
  return std::regex_replace(std::string(text), url_credentials, "$1:" + std::string(kRedacted) + "@");
}

Redactor::Redactor(const std::map<std::string, std::string>& environment) {
  for (const auto& [name, value] : environment) {
    // Very short values ("1", "true") would redact unrelated text.
    if (IsSecretName(name) && value.size() >= 4) secret_values_.push_back(value);
  }
  std::sort(secret_values_.begin(), secret_values_.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

std::string Redactor::Value(std::string_view name, std::string_view value) const {
  if (IsSecretName(name)) return std::string(kRedacted);
  return Text(value);
}

std::string RedactAssignments(std::string_view text) {
  // NAME=VALUE with a secret NAME, as in `--env HF_TOKEN=hf_x` or `export K=V`.
  static const std::regex assignment(R"(([A-Za-z_][A-Za-z0-9_]*)=([^\s"',]+))");
  std::string out;
  std::string input(text);
  auto begin = std::sregex_iterator(input.begin(), input.end(), assignment);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const std::smatch& match = *it;
    if (!IsSecretName(match[1].str())) continue;
    out += input.substr(last, static_cast<size_t>(match.position(2)) - last);
    out += kRedacted;
    last = static_cast<size_t>(match.position(2) + match.length(2));
  }
  return out + input.substr(last);
}

std::string Redactor::Text(std::string_view text) const {
  std::string out(text);
  for (const std::string& secret : secret_values_) out = ReplaceAll(out, secret, kRedacted);
  return RedactUrlCredentials(RedactAssignments(out));
}

}  // namespace primus::snapshot
