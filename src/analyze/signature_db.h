// The failure signatures `analyze logs` looks for: a data file
// (data/signatures.yaml, compiled in; --signatures FILE replaces it) of
// entries with an RE2 pattern, a severity, what the failure means and what to
// do. All patterns are compiled into one RE2::Set, so a log line is matched
// against every signature in a single pass (a million lines in about a
// second), which a loop over std::regex could not do.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace re2 {
class RE2;
}

namespace primus::analyze {

enum class Severity { kWarning, kError, kFatal };

// "warning", "error", "fatal".
std::string SeverityName(Severity severity);

struct Signature {
  std::string id;
  std::string pattern;
  Severity severity = Severity::kFatal;
  std::string meaning;
  std::string fix;
  std::string location;  // "signatures.yaml:12:5": where the entry was written
};

class SignatureDb {
 public:
  // Parses the YAML text; `origin` names it in errors ("data/signatures.yaml").
  // Every problem is a configuration error (exit 3) at file:line:column.
  static Result<SignatureDb> Parse(std::string_view text, const std::string& origin);
  static Result<SignatureDb> LoadFile(const std::string& path);
  // The database compiled into the binary.
  static Result<SignatureDb> Builtin();

  SignatureDb(SignatureDb&&) noexcept;
  SignatureDb& operator=(SignatureDb&&) noexcept;
  ~SignatureDb();

  const std::vector<Signature>& signatures() const { return signatures_; }
  // The indices of the signatures matching `line`, in file order.
  std::vector<int> Match(std::string_view line) const;

 private:
  SignatureDb();
  struct Compiled;
  std::vector<Signature> signatures_;
  std::unique_ptr<Compiled> compiled_;
};

// The strongest signature of the compiled-in database (fatal, else error,
// else warning; the first in file order among equals) that any of `lines`
// matches: what a failure's own words (its message, traceback, last log
// lines) say it was. nullopt when none matches.
std::optional<Signature> StrongestSignature(const std::vector<std::string>& lines);

}  // namespace primus::analyze
