#include "platform/sysfs_files.h"

#include <gtest/gtest.h>

#include "util/scoped_temp_dir.h"
#include <stdlib.h>

#include "util/files.h"

namespace primus::platform {
namespace {

TEST(SysfsFilesTest, ParsesDecimalAndHexNumbers) {
  EXPECT_EQ(ParseUnsigned("29857"), 29857u);
  EXPECT_EQ(ParseUnsigned("0x74a1\n"), 0x74a1u);
  EXPECT_EQ(ParseUnsigned("74a1", 16), 0x74a1u);
  EXPECT_EQ(ParseUnsigned("11638818706288400384"), 11638818706288400384ull);  // hive_id needs all 64 bits
  EXPECT_FALSE(ParseUnsigned("12abc").has_value());
  EXPECT_FALSE(ParseUnsigned("").has_value());
  EXPECT_FALSE(ParseUnsigned("-1").has_value());
}

TEST(SysfsFilesTest, CpuListsRoundTrip) {
  auto cpus = ParseCpuList("0-3,8,10-11\n");
  ASSERT_TRUE(cpus.has_value());
  EXPECT_EQ(*cpus, (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(FormatCpuList(*cpus), "0-3,8,10-11");
  EXPECT_TRUE(ParseCpuList("")->empty());  // a memory-only NUMA node
  EXPECT_FALSE(ParseCpuList("3-1").has_value());
  EXPECT_FALSE(ParseCpuList("a-b").has_value());
}

TEST(SysfsFilesTest, KeyValueLinesReportMalformedLines) {
  std::vector<int> malformed;
  auto lines = ParseKeyValueLines("gpu_id 1234\ngarbage\nsimd_count  304\n\n", ' ', &malformed);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(*FindValue(lines, "simd_count"), "304");
  EXPECT_EQ(malformed, std::vector<int>{2});
  auto procfs = ParseKeyValueLines("Model: \t NVIDIA H100 80GB HBM3\nBus Location: 0000:18:00.0\n", ':');
  EXPECT_EQ(*FindValue(procfs, "Model"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(*FindValue(procfs, "Bus Location"), "0000:18:00.0");
}

TEST(SysfsFilesTest, DirectoriesListNumbersInNumericOrder) {
  ScopedTempDir scoped("sysfs-test");
  std::string dir = scoped.path();
  for (const char* name : {"10", "2", "1", "mem_banks"}) ASSERT_TRUE(MakeDirs(dir + "/" + name).ok());
  EXPECT_EQ(ListDirectory(dir), (std::vector<std::string>{"1", "2", "10", "mem_banks"}));
  EXPECT_TRUE(NaturalLess("mlx5_2", "mlx5_10"));
  EXPECT_FALSE(NaturalLess("mlx5_10", "mlx5_2"));
  EXPECT_TRUE(NaturalLess("eth1", "eth10"));
  EXPECT_TRUE(NaturalLess("bnxt_re9", "mlx5_0"));
  EXPECT_TRUE(ListDirectory(dir + "/missing").empty());
  // A directory where a file is expected reads as "no value", not a crash.
  EXPECT_FALSE(ReadAttribute(dir + "/10").has_value());
}

TEST(SysfsFilesTest, DiagnosticsKeepWarnings) {
  Diagnostics diagnostics;
  diagnostics.Warn("first");
  diagnostics.Warn("second");
  EXPECT_EQ(diagnostics.warnings(), (std::vector<std::string>{"first", "second"}));
}

}  // namespace
}  // namespace primus::platform
