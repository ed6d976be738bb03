// Keeps secrets out of every file primus-cli writes. A variable is secret
// when its name contains TOKEN, KEY, SECRET, PASSWORD, PASSWD or CREDENTIAL
// (any case); its value is written as "<redacted>". Credentials inside URLs
// (scheme://user:password@host) lose their password wherever they appear.
// A Redactor also remembers the secret values it has seen, so they are
// replaced in any other text we write (an argv, a copied config file).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace primus::snapshot {

inline constexpr std::string_view kRedacted = "<redacted>";

bool IsSecretName(std::string_view name);
// "https://user:pw@host/x" -> "https://user:<redacted>@host/x"; other text unchanged.
std::string RedactUrlCredentials(std::string_view text);

// "--env HF_TOKEN=hf_x" -> "--env HF_TOKEN=<redacted>": assignments to secret names.
std::string RedactAssignments(std::string_view text);

class Redactor {
 public:
  // Learns the secret values of an environment (name -> value).
  explicit Redactor(const std::map<std::string, std::string>& environment);

  // The value to write for variable `name`.
  std::string Value(std::string_view name, std::string_view value) const;
  // Any text: known secret values and URL passwords replaced.
  std::string Text(std::string_view text) const;
  const std::vector<std::string>& secret_values() const { return secret_values_; }

 private:
  std::vector<std::string> secret_values_;  // longest first, so overlapping secrets redact fully
};

}  // namespace primus::snapshot
