#include "upstream_archive.h"

#include "run_process.h"
#include "util/files.h"

namespace primus::testing {

std::string UpstreamArchive(const std::string& name) {
  return DirName(std::string(PRIMUS_SOURCE_DIR)) + "/shared/upstream/" + name;
}

Result<std::string> UnpackUpstream(const std::string& name, const std::string& into) {
  std::string archive = UpstreamArchive(name);
  if (!PathExists(archive)) return UnavailableError("the pinned archive " + archive + " is absent");
  ProcessResult result = RunProcess({"tar", "xzf", archive, "-C", into});
  if (result.exit_code != 0) return UnavailableError("tar xzf " + archive + " failed: " + result.err);
  std::string top = name.substr(0, name.find(".tar"));
  return into + "/" + top;
}

}  // namespace primus::testing
