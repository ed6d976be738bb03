#include "platform/runtime_versions.h"

#include <gtest/gtest.h>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::platform {
namespace {

void Put(const std::string& path, const std::string& text = "") {
  ASSERT_TRUE(MakeDirs(DirName(path)).ok());
  ASSERT_TRUE(WriteFileAtomic(path, text).ok());
}

TEST(RuntimeVersionsTest, RocmAndItsLibrariesFromFilesAndNames) {
  ScopedTempDir root("rocm-root");
  const std::string r = root.path();
  Put(r + "/opt/rocm/.info/version", "6.2.4-120\n");
  Put(r + "/opt/rocm/lib/libamdhip64.so");
  Put(r + "/opt/rocm/lib/libamdhip64.so.6");
  Put(r + "/opt/rocm/lib/libamdhip64.so.6.2.41134");
  Put(r + "/opt/rocm/lib/librccl.so.1");
  Put(r + "/opt/rocm/lib/librccl.so.1.0.60204");
  Put(r + "/opt/rocm/lib/librccl.so.1.0.60204.bak");  // not a version
  RuntimeVersions versions = ReadRuntimeVersions(r, {});
  EXPECT_EQ(versions.rocm, "6.2.4-120");
  EXPECT_EQ(versions.hip, "6.2.41134");
  EXPECT_EQ(versions.rccl, "1.0.60204");
  EXPECT_EQ(versions.cuda, "");
  EXPECT_EQ(versions.nccl, "");
}

TEST(RuntimeVersionsTest, CudaAndNcclWhereTheEnvironmentSays) {
  ScopedTempDir root("cuda-root");
  const std::string r = root.path();
  Put(r + "/sw/cuda-12.4/version.json", R"({"cuda": {"name": "CUDA SDK", "version": "12.4.1"}})");
  Put(r + "/sw/nccl/lib/libnccl.so.2.21.5");
  Put(r + "/sw/nccl/lib/libnccl.so.2");
  RuntimeVersions versions = ReadRuntimeVersions(r, {{"CUDA_HOME", "/sw/cuda-12.4"}, {"LD_LIBRARY_PATH", "/sw/nccl/lib:rel"}});
  EXPECT_EQ(versions.cuda, "12.4.1");
  EXPECT_EQ(versions.nccl, "2.21.5");
  // version.txt, as older toolkits have it; a damaged version.json falls back to it.
  Put(r + "/usr/local/cuda/version.json", "{not json");
  Put(r + "/usr/local/cuda/version.txt", "CUDA Version 11.8.89\n");
  EXPECT_EQ(ReadRuntimeVersions(r, {}).cuda, "11.8.89");
}

}  // namespace
}  // namespace primus::platform
