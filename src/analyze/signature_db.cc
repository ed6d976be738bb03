#include "analyze/signature_db.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>

#include "analyze/builtin_signatures.h"
#include "util/environment.h"
#include "config/yaml_loader.h"
#include "util/files.h"

namespace primus::analyze {

struct SignatureDb::Compiled {
  Compiled() : set(RE2::Options(), RE2::UNANCHORED) {}
  RE2::Set set;
};

namespace {

Error EntryError(const config::Value& at, const std::string& message) {
  return ConfigError(at.origin().Describe() + ": " + message,
                     "each entry needs id, pattern, severity (fatal, error or warning), meaning and fix; "
                     "see data/signatures.yaml");
}

Result<std::string> RequiredText(const config::Value& entry, const std::string& key, const std::string& id) {
  const config::Value* value = entry.Find(key);
  if (value == nullptr || !value->IsScalar() || value->ScalarText().empty()) {
    return EntryError(entry, "signature " + (id.empty() ? std::string("entry") : "'" + id + "'") + " has no " + key);
  }
  return value->ScalarText();
}

}  // namespace

std::string SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
    case Severity::kFatal: return "fatal";
  }
  return "fatal";
}

SignatureDb::SignatureDb() : compiled_(std::make_unique<Compiled>()) {}
SignatureDb::SignatureDb(SignatureDb&&) noexcept = default;
SignatureDb& SignatureDb::operator=(SignatureDb&&) noexcept = default;
SignatureDb::~SignatureDb() = default;

Result<SignatureDb> SignatureDb::Parse(std::string_view text, const std::string& origin) {
  auto document = config::LoadYamlString(text, origin, Environment({}));
  if (!document.ok()) return document.error();
  const config::Value* list = document->Find("signatures");
  if (list == nullptr || !list->IsList()) {
    return ConfigError(origin + ": no 'signatures:' list", "the file holds `signatures:` followed by entries");
  }
  SignatureDb db;
  for (const config::Value& entry : list->AsList()) {
    if (!entry.IsMap()) return EntryError(entry, "a signature must be a map of id, pattern, severity, meaning, fix");
    Signature signature;
    signature.location = entry.origin().Describe();
    auto id = RequiredText(entry, "id", "");
    if (!id.ok()) return id.error();
    signature.id = *id;
    for (const Signature& other : db.signatures_) {
      if (other.id == signature.id) {
        return EntryError(entry, "signature id '" + signature.id + "' is also used at " + other.location);
      }
    }
    auto pattern = RequiredText(entry, "pattern", signature.id);
    auto meaning = RequiredText(entry, "meaning", signature.id);
    auto fix = RequiredText(entry, "fix", signature.id);
    auto severity = RequiredText(entry, "severity", signature.id);
    for (const auto* field : {&pattern, &meaning, &fix, &severity}) {
      if (!field->ok()) return field->error();
    }
    signature.pattern = *pattern;
    signature.meaning = *meaning;
    signature.fix = *fix;
    if (*severity == "fatal") signature.severity = Severity::kFatal;
    else if (*severity == "error") signature.severity = Severity::kError;
    else if (*severity == "warning") signature.severity = Severity::kWarning;
    else {
      return EntryError(*entry.Find("severity"),
                        "signature '" + signature.id + "': severity '" + *severity + "' is not fatal, error or warning");
    }
    std::string problem;
    if (db.compiled_->set.Add(signature.pattern, &problem) < 0) {
      return EntryError(*entry.Find("pattern"),
                        "signature '" + signature.id + "': the pattern is not a valid RE2 expression: " + problem);
    }
    db.signatures_.push_back(std::move(signature));
  }
  if (db.signatures_.empty()) return ConfigError(origin + ": the signature list is empty", "add at least one entry");
  if (!db.compiled_->set.Compile()) {
    return ConfigError(origin + ": the patterns together are too large to compile", "split or simplify the patterns");
  }
  return db;
}

Result<SignatureDb> SignatureDb::LoadFile(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) {
    return UnavailableError("--signatures " + path + ": " + text.error().message, "name a readable YAML file");
  }
  return Parse(*text, path);
}

Result<SignatureDb> SignatureDb::Builtin() { return Parse(BuiltinSignaturesYaml(), "data/signatures.yaml (built in)"); }

std::vector<int> SignatureDb::Match(std::string_view line) const {
  std::vector<int> hits;
  compiled_->set.Match(re2::StringPiece(line.data(), line.size()), &hits);
  std::sort(hits.begin(), hits.end());
  return hits;
}

std::optional<Signature> StrongestSignature(const std::vector<std::string>& lines) {
  static const Result<SignatureDb>* db = new Result<SignatureDb>(SignatureDb::Builtin());
  if (!db->ok()) return std::nullopt;
  std::optional<Signature> best;
  for (const std::string& line : lines) {
    for (int index : (*db)->Match(line)) {
      const Signature& signature = (*db)->signatures()[static_cast<size_t>(index)];
      if (!best || signature.severity > best->severity) best = signature;
    }
  }
  return best;
}

}  // namespace primus::analyze
