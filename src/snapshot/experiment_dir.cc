#include "snapshot/experiment_dir.h"

#include <errno.h>
#include <sys/stat.h>

#include <cctype>
#include <cstring>

#include "util/files.h"

namespace primus::snapshot {

Result<ExperimentDir> CreateExperimentDir(const std::string& workspace, const std::string& exp_name, std::time_t when) {
  if (Status made = MakeDirs(workspace); !made.ok()) {
    Error error = made.error();
    error.hint = "the workspace comes from the experiment's 'workspace:' key; choose a writable directory";
    return error;
  }
  std::string name;
  for (char c : exp_name.empty() ? std::string("exp") : exp_name) {
    name += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ? c : '_';
  }
  tm local;
  localtime_r(&when, &local);
  char stamp[32];
  strftime(stamp, sizeof(stamp), "%Y%m%d_%H%M%S", &local);
  std::string base = JoinPath(workspace, name + "_" + stamp);
  for (int attempt = 1; attempt < 1000; ++attempt) {
    std::string candidate = attempt == 1 ? base : base + "_" + std::to_string(attempt);
    if (::mkdir(candidate.c_str(), 0755) == 0) {
      ExperimentDir dir{candidate};
      for (const std::string& sub : {dir.env_dir(), dir.config_dir(), dir.logs_dir()}) {
        if (Status made = MakeDirs(sub); !made.ok()) return made.error();
      }
      return dir;
    }
    if (errno != EEXIST) {
      return EnvironmentError("cannot create experiment directory " + candidate + ": " + std::strerror(errno),
                              "check that the workspace is writable");
    }
  }
  return EnvironmentError("too many experiment directories named " + base + "_*");
}

}  // namespace primus::snapshot
