#include "preflight/software_checks.h"

#include <gtest/gtest.h>

#include "util/dynamic_library.h"
#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::preflight {
namespace {

TEST(SoftwareChecksTest, NcclVersionCodes) {
  EXPECT_EQ(NcclVersionText(22606), "2.26.6");
  EXPECT_EQ(NcclVersionText(21803), "2.18.3");
  EXPECT_EQ(NcclVersionText(2708), "2.7.8");
}

TEST(SoftwareChecksTest, MarkerSearchInABinaryFile) {
  ScopedTempDir dir("sw");
  std::string path = JoinPath(dir.path(), "lib.so");
  ASSERT_TRUE(WriteFileAtomic(path, std::string("\x7f" "ELF\0\0junk VCCL version 2.26.6\0", 32)).ok());
  EXPECT_TRUE(FileContains(path, "VCCL"));
  EXPECT_FALSE(FileContains(path, "RCCL"));
  EXPECT_FALSE(FileContains(JoinPath(dir.path(), "missing"), "VCCL"));
}

TEST(SoftwareChecksTest, InterpreterWithTorchAndOneWithout) {
  platform::HostInfo cpu_host;  // no GPUs: the collective library is not needed
  SoftwareSettings settings;
  settings.python = "/usr/bin/python3";
  SoftwareFacts facts;
  std::vector<CheckResult> results = CheckSoftware(cpu_host, settings, &facts);
  ASSERT_FALSE(results.empty());
  EXPECT_EQ(results[0].name, "torch");
  if (results[0].status == CheckStatus::kPass) {
    EXPECT_FALSE(facts.torch_version.empty());
  }
  EXPECT_EQ(results.back().status, CheckStatus::kSkip);

  settings.python = "/nonexistent/python3";
  SoftwareFacts none;
  results = CheckSoftware(cpu_host, settings, &none);
  EXPECT_EQ(results[0].status, CheckStatus::kFail);
  EXPECT_NE(results[0].fix.find("--python"), std::string::npos);

  settings.python = "/bin/true";  // runs, prints nothing: no torch
  results = CheckSoftware(cpu_host, settings, &none);
  EXPECT_EQ(results[0].status, CheckStatus::kFail);

  settings.python = "/usr/bin/python3";
  settings.env["VIRTUAL_ENV"] = "/opt/venvs/train";
  results = CheckSoftware(cpu_host, settings, &none);
  bool outside = false;
  for (const CheckResult& r : results) outside |= r.name == "environment" && r.status == CheckStatus::kWarn;
  EXPECT_TRUE(outside);
}

}  // namespace
}  // namespace primus::preflight
