// Software checks: the training interpreter and its torch (the version
// every node must share), the collective library the GPUs need (NCCL on
// NVIDIA, RCCL on AMD, found the way the workers will find it: through
// LD_LIBRARY_PATH and the loader) with its version, a custom NCCL build such
// as VCCL recognised by the marker in its binary, and the active
// virtualenv/conda environment holding that interpreter.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "platform/host_info.h"
#include "preflight/check_result.h"

namespace primus::preflight {

struct SoftwareSettings {
  std::string python = "python3";  // --python
  // true: `import torch` for real (seconds); false: read torch's installed
  // version from its package metadata without importing it (milliseconds).
  bool import_torch = false;
  std::map<std::string, std::string> env;  // VIRTUAL_ENV, CONDA_PREFIX, CONDA_DEFAULT_ENV, PATH
};

struct SoftwareFacts {
  std::string torch_version;  // "" when unknown
  std::string collective;     // "NCCL 2.21.5", "RCCL 2.18.3 (VCCL build)", ""
};

std::vector<CheckResult> CheckSoftware(const platform::HostInfo& host, const SoftwareSettings& settings,
                                       SoftwareFacts* facts);

// NCCL's version code (ncclGetVersion) as text: 22105 -> "2.21.5", 2708 -> "2.7.8".
std::string NcclVersionText(int code);

}  // namespace primus::preflight
