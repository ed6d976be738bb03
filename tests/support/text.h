// Test support: the small text questions tests ask of files and output: a
// file's text, or nothing when it is not there (yet); whether one text
// contains another.
#pragma once

#include <string>

#include "util/files.h"

namespace primus::testing {

// The file's text, or "" when it cannot be read (missing, not written yet).
inline std::string ReadOrEmpty(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  return text.ok() ? *text : std::string();
}

// Case-sensitive substring test.
inline bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace primus::testing
