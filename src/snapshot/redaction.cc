#include "snapshot/redaction.h"

#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <iostream>
#include <streambuf>

#include "util/log.h"
#include "util/environment.h"
#include "util/strings.h"

namespace primus::snapshot {
namespace {

// NAME -> its words, upper case: "awsSecret_access-key" -> AWS SECRET ACCESS KEY.
std::vector<std::string> NameWords(std::string_view name) {
  std::vector<std::string> words;
  std::string word;
  char previous = 0;
  for (char c : name) {
    auto byte = static_cast<unsigned char>(c);
    if (!std::isalnum(byte)) {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      if (std::isupper(byte) && std::islower(static_cast<unsigned char>(previous)) && !word.empty()) {
        words.push_back(word);
        word.clear();
      }
      word += static_cast<char>(std::toupper(byte));
    }
    previous = c;
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

template <size_t N>
bool OneOf(const std::array<std::string_view, N>& set, std::string_view word) {
  return std::find(set.begin(), set.end(), word) != set.end();
}

// Too common to be taken for a secret anywhere else in a text.
bool Learnable(std::string_view value) {
  static constexpr std::array<std::string_view, 10> kWords = {"TRUE", "FALSE", "NONE", "NULL", "AUTO",
                                                              "YES",  "OFF",   "<REDACTED>", "UNSET", "EMPTY"};
  return value.size() >= 4 && !OneOf(kWords, ToUpper(value));
}

// Replaces what `pattern` matches as group `group` of each match, when
// `secret(match groups)` says so, with `replacement(group text)`.
template <typename Secret, typename Replace>
std::string ReplaceGroups(std::string_view text, const RE2& pattern, int group, Secret secret, Replace replacement) {
  int groups = pattern.NumberOfCapturingGroups();
  std::vector<re2::StringPiece> match(static_cast<size_t>(groups + 1));
  std::string out;
  size_t last = 0;
  size_t at = 0;
  while (at <= text.size() &&
         pattern.Match(re2::StringPiece(text.data(), text.size()), at, text.size(), RE2::UNANCHORED, match.data(),
                       groups + 1)) {
    const re2::StringPiece& whole = match[0];
    size_t end = static_cast<size_t>(whole.data() - text.data()) + whole.size();
    const re2::StringPiece& target = match[static_cast<size_t>(group)];
    if (target.data() != nullptr && secret(match)) {
      size_t start = static_cast<size_t>(target.data() - text.data());
      out.append(text.substr(last, start - last));
      out += replacement(std::string_view(target.data(), target.size()));
      last = start + target.size();
    }
    at = whole.empty() ? end + 1 : end;
  }
  if (last == 0) return std::string(text);
  out.append(text.substr(last));
  return out;
}

std::string_view View(const re2::StringPiece& piece) { return {piece.data(), piece.size()}; }

}  // namespace

bool IsSecretName(std::string_view name) {
  // Long secret words, also fused with what they are for (HFTOKEN, OPENAI_APIKEY).
  static constexpr std::array<std::string_view, 11> kSecretEndings = {
      "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "CREDENTIALS",
      "APIKEY", "ACCESSKEY", "SECRETKEY", "PRIVATEKEY"};
  // Short ones, only as a whole word after what they are for (MY_PASS,
  // DB_PWD, GH_PAT, SSH_PRIVATE; a lone `pass` or `session` is a setting).
  static constexpr std::array<std::string_view, 8> kSecretWords = {"PASS",    "PWD",     "PAT",      "SESSION",
                                                                   "PRIVATE", "COOKIE",  "COOKIES",  "SIGNATURE"};
  static constexpr std::array<std::string_view, 12> kKeyKinds = {
      "API", "ACCESS", "SECRET", "PRIVATE", "AUTH", "CLIENT", "SIGNING", "ENCRYPTION", "SSH",
      "ACCOUNT", "SHARED", "STORAGE"};  // AccountKey=, SharedAccessKey= in connection strings
  // KEY after these names a field, not a secret (text_key: the dataset's
  // column; num_nodes_env_key: a variable's name; sort_key): such settings
  // must survive in resolved.yaml, or a replay breaks.
  static constexpr std::array<std::string_view, 44> kSettingKeys = {
      "ENV",     "SORT",     "TEXT",     "LABEL",   "INPUT",  "OUTPUT",   "DATA",     "DATASET",  "COLUMN",
      "FIELD",   "JSON",     "DICT",     "MAP",     "HASH",   "CACHE",    "INDEX",    "PRIMARY",  "PARTITION",
      "GROUP",   "METRIC",   "MONITOR",  "LOOKUP",  "QUERY",  "VALUE",    "IMAGE",    "CAPTION",  "PROMPT",
      "RESPONSE", "MESSAGES", "CHOSEN",  "REJECTED", "AUDIO", "VIDEO",    "STATE",    "MODEL",    "LOSS",
      "RANDOM",  "RNG",      "PRNG",     "SEED",    "NAME",   "LAYER",    "CONTEXT",  "TARGET"};
  // What names a login session, not a secret one (DESKTOP_SESSION).
  static constexpr std::array<std::string_view, 6> kDesktopWords = {"DESKTOP", "XDG", "TMUX", "SCREEN", "LOGIN",
                                                                    "GDM"};
  // A tokenizer's special tokens: pad_token, eos_token_id.
  static constexpr std::array<std::string_view, 11> kSpecialTokens = {"PAD", "EOS",  "BOS",   "UNK",     "SEP", "CLS",
                                                                      "MASK", "START", "END", "SPECIAL", "STOP"};
  if (name == "PWD") return false;  // the shell's working directory
  // The secret word names what the value is, so it ends the name (HF_TOKEN,
  // S3_SECRET_ACCESS_KEY, db_password, TOKEN_2); in the middle it describes
  // something else: moe_token_dispatcher_type, HF_TOKEN_PATH.
  std::vector<std::string> words = NameWords(name);
  while (words.size() > 1 && std::all_of(words.back().begin(), words.back().end(),
                                         [](char c) { return c >= '0' && c <= '9'; })) {
    words.pop_back();
  }
  if (words.empty()) return false;
  size_t n = words.size();
  // Wherever they stand: SLACK_WEBHOOK_URL is the secret itself.
  if (std::find(words.begin(), words.end(), "WEBHOOK") != words.end()) return true;
  // AZURE_STORAGE_CONNECTION_STRING: account keys and passwords inside.
  if (n >= 2 && words[n - 2] == "CONNECTION" && (words[n - 1] == "STRING" || words[n - 1] == "STRINGS")) return true;
  // AWS_ACCESS_KEY_ID: the key's identifier, kept secret with it.
  if (n >= 3 && words[n - 1] == "ID" && words[n - 2] == "KEY" && OneOf(kKeyKinds, words[n - 3])) return true;
  const std::string& word = words.back();
  std::string_view before = n > 1 ? std::string_view(words[n - 2]) : std::string_view();
  if (word == "KEY" && OneOf(kKeyKinds, before)) return true;  // api_key, apiKey, SSH_KEY: any case
  if (word == "PWD") return true;  // pwd= in a connection string; the shell's PWD was let through above
  // The short words count in a variable's name, written in capitals
  // (OPENAI_KEY, DB_PASS, GH_PAT, BASIC_AUTH); in a configuration key they
  // mostly name a setting (answer_key, forward_pass, file_pat, use_auth),
  // which a replay must read back.
  bool variable_name = std::none_of(name.begin(), name.end(), [](char c) { return c >= 'a' && c <= 'z'; });
  if (variable_name) {
    if (word == "KEY") return n > 1 && !OneOf(kSettingKeys, before);
    if (word == "AUTH") return true;
    if (word == "SESSION" && OneOf(kDesktopWords, before)) return false;
    if (n > 1 && OneOf(kSecretWords, word)) return true;
  }
  for (std::string_view ending : kSecretEndings) {
    if (!word.ends_with(ending)) continue;
    if (word == "TOKEN" && OneOf(kSpecialTokens, before)) continue;
    return true;
  }
  return false;
}

// Whether `text` holds a literal that every match of the shapes below
// contains (and is long enough for the shortest, "xoxb-" and 10 more): most
// text holds none, and then the pattern is never compiled nor run (compiling
// it was three quarters of `primus-cli --version`).
bool MayHoldTokenShape(std::string_view text) {
  if (text.size() < 15) return false;
  for (std::string_view literal : {"hf_", "github_pat_", "xox", "AKIA", "sk-", "eyJ", "hooks.slack.com/services/"}) {
    if (text.find(literal) != std::string_view::npos) return true;
  }
  for (size_t at = text.find("gh"); at != std::string_view::npos; at = text.find("gh", at + 1)) {
    if (at + 3 < text.size() && std::string_view("pousr").find(text[at + 2]) != std::string_view::npos &&
        text[at + 3] == '_') {
      return true;
    }
  }
  return false;
}

std::string RedactTokenShapes(std::string_view text) {
  // Hugging Face, GitHub (classic and fine-grained), Slack, AWS access key
  // ids, OpenAI-style keys, JSON Web Tokens, Slack webhook URLs; the
  // literals of MayHoldTokenShape above.
  if (!MayHoldTokenShape(text)) return std::string(text);
  static const RE2 shapes(
      R"(\b(hf_[A-Za-z0-9]{30,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}|xox[abeoprs]-[A-Za-z0-9-]{10,})"
      R"(|AKIA[0-9A-Z]{16}|sk-[A-Za-z0-9_-]{20,}|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
      R"(|hooks\.slack\.com/services/[A-Za-z0-9/_-]+)\b)");
  return ReplaceGroups(
      text, shapes, 1, [](const auto&) { return true; }, [](std::string_view) { return std::string(kRedacted); });
}

std::string RedactUrlCredentials(std::string_view text) {
  // scheme://user:password@  ->  scheme://user:<redacted>@
  if (text.find("://") == std::string_view::npos) return std::string(text);
  static const RE2 url_credentials(R"([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:([^/\s@]+)@)");
  return ReplaceGroups(
      text, url_credentials, 1, [](const auto&) { return true; }, [](std::string_view) { return std::string(kRedacted); });
}

std::string RedactAssignments(std::string_view text) {
  // NAME=VALUE with a secret NAME, as in `--env HF_TOKEN=hf_x`, `export K=V`,
  // `--api-key=x` or `API_KEY="x y"`; a quoted value keeps its quotes.
  if (text.find('=') == std::string_view::npos) return std::string(text);
  static const RE2 assignment(R"(([A-Za-z_][A-Za-z0-9_.-]*)=("[^"\n]*"|'[^'\n]*'|[^\s"'\\,;]+))");
  return ReplaceGroups(
      text, assignment, 2, [](const auto& match) { return IsSecretName(View(match[1])); },
      [](std::string_view value) {
        if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'')) {
          return std::string(1, value.front()) + std::string(kRedacted) + value.front();
        }
        return std::string(kRedacted);
      });
}

std::string RedactYamlKeys(std::string_view text) {
  // One line: indentation, an optional "- ", the key (maybe quoted), ": ", the value.
  if (text.find(':') == std::string_view::npos) return std::string(text);
  static const RE2 key_line(R"((?m)^[ \t]*(?:-[ \t]+)?["']?([A-Za-z_][A-Za-z0-9_.-]*)["']?[ \t]*:[ \t]+([^\n]*?)[ \t]*$)");
  return ReplaceGroups(
      text, key_line, 2,
      [](const auto& match) {
        std::string_view value = View(match[2]);
        if (value.empty() || !IsSecretName(View(match[1]))) return false;
        // Block scalars, anchors, aliases, flow collections and comments are left
        // to value redaction; so is a plain reference to a variable.
        if (std::string_view("|>&*{[#").find(value.front()) != std::string_view::npos) return false;
        std::string_view bare = value;
        if (bare.size() >= 2 && (bare.front() == '"' || bare.front() == '\'') && bare.back() == bare.front()) {
          bare = bare.substr(1, bare.size() - 2);
        }
        if (bare == kRedacted) return false;
        return !(bare.starts_with("${") && bare.ends_with("}") && bare.find('}') == bare.size() - 1);
      },
      [](std::string_view) { return std::string(kRedacted); });
}

Redactor::Redactor(const std::map<std::string, std::string>& environment) {
  for (const auto& [name, value] : environment) Learn(name, value);
}

void Redactor::Learn(std::string_view name, std::string_view value) {
  if (IsSecretName(name)) LearnValue(value);
}

void Redactor::LearnValue(std::string_view value) {
  if (!Learnable(value)) return;
  if (std::find(secret_values_.begin(), secret_values_.end(), value) != secret_values_.end()) return;
  secret_values_.emplace_back(value);
  std::stable_sort(secret_values_.begin(), secret_values_.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

std::string Redactor::Value(std::string_view name, std::string_view value) const {
  if (IsSecretName(name)) return std::string(kRedacted);
  return Text(value);
}

std::string Redactor::Text(std::string_view text) const {
  std::string out(text);
  for (const std::string& secret : secret_values_) {
    if (out.find(secret) != std::string::npos) out = ReplaceAll(out, secret, kRedacted);
  }
  return RedactTokenShapes(RedactUrlCredentials(RedactAssignments(out)));
}

std::string Redactor::Yaml(std::string_view text) const { return RedactYamlKeys(Text(text)); }

nlohmann::ordered_json Redactor::Json(const nlohmann::ordered_json& json) const {
  if (json.is_string()) return Text(json.get_ref<const std::string&>());
  if (json.is_array()) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& item : json) out.push_back(Json(item));
    return out;
  }
  if (!json.is_object()) return json;
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [key, value] : json.items()) {
    bool hide = IsSecretName(key) && !value.is_null() && !value.is_structured();
    out[Text(key)] = hide ? nlohmann::ordered_json(kRedacted) : Json(value);
  }
  return out;
}

Status CheckNoSecretArguments(const std::vector<std::string>& args, std::string_view where, std::string_view hint) {
  for (const std::string& arg : args) {
    std::string redacted = ProcessRedactor().Text(arg);
    if (redacted == arg) continue;
    return UsageError("argument " + ShellQuote(redacted) + " holds a secret, which must not be written into " +
                          std::string(where),
                      std::string(hint));
  }
  return Status::Ok();
}

Redactor& ProcessRedactor() {
  static Redactor redactor(ProcessEnvironment());
  return redactor;
}

namespace {

// std::cout's buffer, redacting each line on its way to the real one.
class RedactingBuffer : public std::streambuf {
 public:
  explicit RedactingBuffer(std::ostream& stream) : stream_(stream), target_(stream.rdbuf()) { stream.rdbuf(this); }
  ~RedactingBuffer() override {
    Flush(/*partial=*/true);
    target_->pubsync();
    stream_.rdbuf(target_);
  }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    line_.push_back(traits_type::to_char_type(c));
    if (line_.back() == '\n') Flush(/*partial=*/false);
    return c;
  }
  std::streamsize xsputn(const char* data, std::streamsize count) override {
    line_.append(data, static_cast<size_t>(count));
    Flush(/*partial=*/false);
    return count;
  }
  int sync() override {
    Flush(/*partial=*/true);
    return target_->pubsync();
  }

 private:
  // Writes every complete line; the partial one after them too when asked
  // to (a flush), else it waits for its end (a secret may be split).
  void Flush(bool partial) {
    size_t newline = line_.rfind('\n');
    size_t end = partial ? line_.size() : newline == std::string::npos ? 0 : newline + 1;
    if (end == 0) return;
    std::string text = ProcessRedactor().Text(std::string_view(line_).substr(0, end));
    target_->sputn(text.data(), static_cast<std::streamsize>(text.size()));
    line_.erase(0, end);
  }

  std::ostream& stream_;
  std::streambuf* target_;
  std::string line_;
};

}  // namespace

void RedactProcessOutput() {
  // The redactor first: statics end in reverse order, and the buffer's last
  // flush (at exit) still needs it.
  ProcessRedactor();
  static RedactingBuffer buffer(std::cout);
  log::SetMessageFilter([](std::string_view message) { return ProcessRedactor().Text(message); });
}

}  // namespace primus::snapshot
