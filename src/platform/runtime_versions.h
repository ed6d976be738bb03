// The GPU and collective runtimes' user-space versions, read without running
// any vendor tool (a snapshot records them; a replay compares them):
//   ROCm  <rocm>/.info/version              (<rocm>: $ROCM_PATH, else /opt/rocm)
//   HIP   libamdhip64.so.<version>          (the real file behind its links)
//   RCCL  librccl.so.<version>
//   CUDA  <cuda>/version.json, else version.txt (<cuda>: $CUDA_HOME, $CUDA_PATH, else /usr/local/cuda)
//   NCCL  libnccl.so.<version>
// Libraries are looked for in <rocm>/lib, <cuda>/lib64, $LD_LIBRARY_PATH and
// the system's library directories; the version is the longest numbered
// suffix of a file named after the library. Anything not found is "".
// Everything is read under `root` ("" is /), so tests use a tree of their own.
#pragma once

#include <map>
#include <string>

namespace primus::platform {

struct RuntimeVersions {
  std::string rocm, hip, rccl, cuda, nccl;
};

RuntimeVersions ReadRuntimeVersions(const std::string& root, const std::map<std::string, std::string>& env);

}  // namespace primus::platform
