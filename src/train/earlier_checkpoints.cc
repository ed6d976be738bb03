#include "train/earlier_checkpoints.h"

#include <re2/re2.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "snapshot/metadata.h"

namespace primus::train {
namespace {

namespace fs = std::filesystem;

// The modification time of `path` without following a link; 0 when it cannot be read.
double ModifiedAt(const fs::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return 0;
  return static_cast<double>(info.st_mtim.tv_sec) + static_cast<double>(info.st_mtim.tv_nsec) * 1e-9;
}

}  // namespace

std::optional<EarlierCheckpoints> FindEarlierCheckpoints(const std::string& workspace, const std::string& exp_name,
                                                         const std::string& this_run, size_t max_runs) {
  static const RE2 checkpoint_name(R"(step_(\d{1,15})\.pt)");
  std::error_code error;
  std::vector<std::pair<double, fs::path>> runs;
  for (const auto& entry : fs::directory_iterator(workspace, error)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with(exp_name + "_") || entry.is_symlink() || !entry.is_directory()) continue;
    if (fs::equivalent(entry.path(), this_run, error)) continue;
    runs.emplace_back(ModifiedAt(entry.path()), entry.path());
  }
  std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (runs.size() > max_runs) runs.resize(max_runs);
  std::optional<EarlierCheckpoints> best;
  double best_time = 0;
  for (const auto& [run_time, run] : runs) {
    // A run that finished is not to be gone on from: running its command
    // again trains again (a run whose record is unreadable counts as unfinished).
    auto metadata = snapshot::ReadMetadata((run / "metadata.json").string());
    if (metadata.ok() && metadata->status == "succeeded") continue;
    fs::path dir = run / "checkpoints";
    if (fs::is_symlink(dir, error) || !fs::is_directory(dir, error)) continue;
    int64_t newest_step = -1;
    double newest_time = 0;
    for (const auto& file : fs::directory_iterator(dir, error)) {
      int64_t step = 0;
      if (!file.is_regular_file() || !RE2::FullMatch(file.path().filename().string(), checkpoint_name, &step)) continue;
      newest_step = std::max(newest_step, step);
      newest_time = std::max(newest_time, ModifiedAt(file.path()));
    }
    if (newest_step >= 0 && (!best || newest_time > best_time)) {
      best = EarlierCheckpoints{dir.string(), newest_step};
      best_time = newest_time;
    }
  }
  return best;
}

}  // namespace primus::train
