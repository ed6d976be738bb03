// A fresh directory under /tmp, removed with everything in it when it goes
// out of scope. For tests (which must not leave files behind) and for any
// scratch space a command needs only while it runs.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace primus {

class ScopedTempDir {
 public:
  explicit ScopedTempDir(const char* tag = "tmp") {
    std::string pattern = std::string("/tmp/primus-") + tag + "-XXXXXX";
    path_ = mkdtemp(pattern.data()) ? pattern : std::string();
  }
  ~ScopedTempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace primus
