// The files of a run's log directory, as the agent lays them out:
// <log dir>/attempt_<n>/ per attempt (docs/agent.md), each holding
// <host>.rank<R>.* files of its ranks. Shared by the readers of a run
// (run_report.h, hang_report.h).
#pragma once

#include <filesystem>
#include <utility>
#include <vector>

namespace primus::analyze {

// attempt_<n> directories under `log_dir`, in attempt order.
std::vector<std::pair<int, std::filesystem::path>> AttemptDirs(const std::filesystem::path& log_dir);
// The regular files of `dir`, sorted by name.
std::vector<std::filesystem::path> FilesIn(const std::filesystem::path& dir);

}  // namespace primus::analyze
