#include "config/env_file.h"

#include <cctype>

#include "config/yaml_loader.h"
#include "util/files.h"
#include "util/strings.h"

namespace primus::config {
namespace {

constexpr const char* kHint = "write one KEY=VALUE per line, as a shell assigns it, without $ expansions; # starts a comment";

bool NameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool NameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class LineParser {
 public:
  LineParser(std::string_view line, const std::string& where) : line_(line), where_(where) {}

  // Empty name: a blank or comment line.
  Result<EnvFileEntry> Parse() {
    SkipSpaces();
    if (AtEnd() || line_[pos_] == '#') return EnvFileEntry{};
    if (line_.substr(pos_).starts_with("export") && pos_ + 6 < line_.size() &&
        (line_[pos_ + 6] == ' ' || line_[pos_ + 6] == '\t')) {
      pos_ += 6;
      SkipSpaces();
    }
    EnvFileEntry entry;
    if (AtEnd() || !NameStart(line_[pos_])) return Fail("a line must start with a variable name");
    while (!AtEnd() && NameChar(line_[pos_])) entry.name += line_[pos_++];
    if (AtEnd() || line_[pos_] != '=') {
      size_t equals = line_.find('=', pos_);
      if (equals != std::string_view::npos && Trim(line_.substr(pos_, equals - pos_)).empty()) {
        return Fail("no spaces are allowed before '=' (" + entry.name + "=VALUE)");
      }
      return Fail("'" + entry.name + "' has no '=VALUE'");
    }
    ++pos_;
    while (!AtEnd() && line_[pos_] != ' ' && line_[pos_] != '\t') {
      char c = line_[pos_];
      Status part = c == '\'' ? SingleQuoted(&entry.value) : c == '"' ? DoubleQuoted(&entry.value) : Bare(&entry.value);
      if (!part.ok()) return part.error();
    }
    SkipSpaces();
    if (!AtEnd() && line_[pos_] != '#') {
      return Fail("unexpected text after the value of " + entry.name + ": '" + std::string(line_.substr(pos_)) +
                  "' (quote a value that has spaces)");
    }
    return entry;
  }

 private:
  bool AtEnd() const { return pos_ >= line_.size(); }
  void SkipSpaces() {
    while (!AtEnd() && (line_[pos_] == ' ' || line_[pos_] == '\t')) ++pos_;
  }
  Error Fail(const std::string& message) const { return ConfigError(where_ + ": " + message, kHint); }
  Error Expansion() const {
    return ConfigError(where_ + ": '" + std::string(line_) + "' asks the shell to expand something ($ or `), which an env file read here does not do",
                       "write the value itself, or put it in single quotes to keep the $ literally");
  }

  Status SingleQuoted(std::string* out) {
    size_t close = line_.find('\'', pos_ + 1);
    if (close == std::string_view::npos) return Fail("a single quote is not closed");
    out->append(line_.substr(pos_ + 1, close - pos_ - 1));
    pos_ = close + 1;
    return Status::Ok();
  }

  Status DoubleQuoted(std::string* out) {
    for (++pos_; !AtEnd(); ++pos_) {
      char c = line_[pos_];
      if (c == '"') {
        ++pos_;
        return Status::Ok();
      }
      if (c == '$' || c == '`') return Expansion();
      if (c == '\\' && pos_ + 1 < line_.size() && std::string_view("\"\\$`").find(line_[pos_ + 1]) != std::string_view::npos) {
        c = line_[++pos_];
      }
      out->push_back(c);
    }
    return Fail("a double quote is not closed");
  }

  Status Bare(std::string* out) {
    for (; !AtEnd(); ++pos_) {
      char c = line_[pos_];
      if (c == ' ' || c == '\t' || c == '\'' || c == '"') return Status::Ok();
      if (c == '$' || c == '`') return Expansion();
      if (c == '\\') {
        if (pos_ + 1 >= line_.size()) return Fail("a line may not end in a backslash (no continuation lines)");
        c = line_[++pos_];
      } else if (std::string_view(";&|<>()").find(c) != std::string_view::npos) {
        return Fail("'" + std::string(1, c) + "' in a value must be quoted");
      }
      out->push_back(c);
    }
    return Status::Ok();
  }

  std::string_view line_;
  const std::string& where_;
  size_t pos_ = 0;
};

}  // namespace

Result<std::vector<EnvFileEntry>> ParseEnvFile(std::string_view text, const std::string& path) {
  std::vector<EnvFileEntry> entries;
  int number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.find('\0') != std::string_view::npos) {
      return ConfigError(path + ":" + std::to_string(number) + ": a NUL byte: this is not a text file", kHint);
    }
    std::string where = path + ":" + std::to_string(number);
    auto entry = LineParser(line, where).Parse();
    if (!entry.ok()) return entry.error();
    if (entry->name.empty()) continue;
    entry->line = number;
    entries.push_back(std::move(*entry));
  }
  return entries;
}

Result<std::vector<EnvFileEntry>> ReadEnvFile(const std::string& path) {
  auto text = ReadRegularFile(path, kMaxConfigFileBytes);
  if (!text.ok()) return ConfigError(text.error().message, "--env FILE names a file of KEY=VALUE lines");
  return ParseEnvFile(*text, path);
}

}  // namespace primus::config
