// Keeps secrets out of every file primus-cli writes and everything it
// prints (the plan of --dry-run, the log of --debug).
//
// By name: a variable or configuration key is secret, in any case, when its
// last word (words split at '_', '-', '.' and where lower case turns upper:
// apiKey; trailing numbers dropped: TOKEN_2)
//   - is or ends in TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE,
//     CREDENTIAL(S), APIKEY, ACCESSKEY, SECRETKEY or PRIVATEKEY (GITHUB_TOKEN,
//     HFTOKEN, aws_secret_access_key), or is AUTH;
//   - is KEY after API, ACCESS, SECRET, PRIVATE, AUTH, CLIENT, SIGNING,
//     ENCRYPTION, SSH, ACCOUNT, SHARED or STORAGE (WANDB_API_KEY, apiKey,
//     AccountKey=, SharedAccessKey=), or is PWD (pwd= in a
//     connection string; the shell's PWD is not secret);
//   - in a name written in capitals (an environment variable's): is AUTH, is
//     PASS, PAT, SESSION, PRIVATE, COOKIE(S) or SIGNATURE after another word
//     (MY_PASS, GH_PAT; not DESKTOP_SESSION), or is KEY after another word
//     (OPENAI_KEY) unless that word says the value names a field
//     (NUM_NODES_ENV_KEY, SORT_KEY). In a lowercase configuration key these
//     name settings a replay must read back (answer_key, forward_pass,
//     file_pat, use_auth);
// or when WEBHOOK is any of its words (SLACK_WEBHOOK_URL), it ends in
// CONNECTION_STRING, or in KEY_ID after a kind of key (AWS_ACCESS_KEY_ID).
// Not secret: words in the middle (HF_TOKEN_PATH, key_dim), TOKENS and
// TOKENIZER (max_tokens, TOKENIZERS_PARALLELISM), and a tokenizer's special
// tokens (pad_token, eos_token_id), which are text. A secret name's value is
// written as "<redacted>".
//
// By value: a Redactor learns the values of secret names (the environment,
// the experiment's env: and any secret-named key of the experiment,
// overrides, --env) and replaces them wherever they appear, also inside
// another string. Values under 4 characters, and words such as "true" or
// "none", are not learnt: they would redact unrelated text.
//
// In any text besides: NAME=VALUE assignments to secret names (--env
// HF_TOKEN=x, API_KEY="x", and AccountKey=/Password=/pwd= inside connection
// strings), passwords in URLs (scheme://user:pw@host), and well-known token
// shapes (hf_, ghp_, github_pat_, xox?-, AKIA, sk-, JSON Web Tokens, Slack
// webhook URLs).
// In YAML text also `SECRET_NAME: value` lines. JSON is redacted as data
// (each string), never as serialized text, so it stays valid.
//
// Patterns are RE2: linear time on any input.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace primus::snapshot {

inline constexpr std::string_view kRedacted = "<redacted>";

bool IsSecretName(std::string_view name);
// "https://user:pw@host/x" -> "https://user:<redacted>@host/x"; other text unchanged.
std::string RedactUrlCredentials(std::string_view text);

// "token hf_abc...xyz" -> "token <redacted>": the shapes listed above.
std::string RedactTokenShapes(std::string_view text);

// "--env HF_TOKEN=hf_x" -> "--env HF_TOKEN=<redacted>": assignments to secret
// names, the value bare or in quotes (API_KEY="x" -> API_KEY="<redacted>").
std::string RedactAssignments(std::string_view text);

// YAML lines "  HF_TOKEN: hf_x" / "- api_key: 'x'" -> "...: <redacted>"; a
// value that only refers to a variable ("${HF_TOKEN}") is kept.
std::string RedactYamlKeys(std::string_view text);

class Redactor {
 public:
  Redactor() = default;
  // Learns the secret values of an environment (name -> value).
  explicit Redactor(const std::map<std::string, std::string>& environment);

  // Remembers `value` when `name` is secret.
  void Learn(std::string_view name, std::string_view value);
  // Remembers `value` whatever its name.
  void LearnValue(std::string_view value);

  // The value to write for variable `name`.
  std::string Value(std::string_view name, std::string_view value) const;
  // Any text: known secret values, assignments and URL passwords replaced.
  std::string Text(std::string_view text) const;
  // YAML text: Text, and the values of secret keys.
  std::string Yaml(std::string_view text) const;
  // A JSON document, as data: every string (and key) through Text, and the
  // scalar under a secret key replaced.
  nlohmann::ordered_json Json(const nlohmann::ordered_json& json) const;
  const std::vector<std::string>& secret_values() const { return secret_values_; }

 private:
  std::vector<std::string> secret_values_;  // longest first, so overlapping secrets redact fully
};

// A UsageError when one of `args`, bound for `where` (a batch script, a
// manifest: files a scheduler keeps and shows to others), holds a secret
// that ProcessRedactor() recognises: an assignment to a secret name
// (--env HF_TOKEN=x, env.GITHUB_TOKEN=x), a URL password, a known value.
// The message shows the argument redacted; `hint` says how to pass it.
Status CheckNoSecretArguments(const std::vector<std::string>& args, std::string_view where, std::string_view hint);

// The secrets this process knows, for what it prints and logs: the
// environment's (learnt at the first call), and what a task adds once it
// knows more (the experiment's). Learn before starting threads.
Redactor& ProcessRedactor();

// From now on, every log line and everything written to std::cout goes
// through ProcessRedactor() (line by line). Idempotent.
void RedactProcessOutput();

}  // namespace primus::snapshot
