#include "analyze/run_files.h"

#include <re2/re2.h>

#include <algorithm>

namespace primus::analyze {

namespace fs = std::filesystem;

std::vector<std::pair<int, fs::path>> AttemptDirs(const fs::path& log_dir) {
  static const RE2 attempt_name(R"(attempt_(\d+))");
  std::vector<std::pair<int, fs::path>> dirs;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(log_dir, error)) {
    int attempt = 0;
    if (entry.is_directory(error) && RE2::FullMatch(entry.path().filename().string(), attempt_name, &attempt)) {
      dirs.emplace_back(attempt, entry.path());
    }
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

std::vector<fs::path> FilesIn(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    if (entry.is_regular_file(error)) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace primus::analyze
