#include "preflight/gpu_checks.h"

#include <gtest/gtest.h>

#include "platform/host_detect.h"
#include "platform/test_fixtures.h"

namespace primus::preflight {
namespace {

std::vector<CheckResult> On(const std::string& fixture, GpuExpectations expect = {}) {
  platform::Roots roots = platform::FixtureRoots(fixture);
  platform::HostInfo host = platform::DetectHost(roots);
  return CheckGpus(host, roots, platform::QueryLiveStatus(host, roots, {"libnvml-absent.so", "libamdsmi-absent.so"}),
                   expect);
}

std::vector<CheckResult> WithStatus(const std::vector<CheckResult>& results, CheckStatus status) {
  std::vector<CheckResult> found;
  for (const CheckResult& r : results) {
    if (r.status == status) found.push_back(r);
  }
  return found;
}

TEST(GpuChecksTest, HealthyMi300xPassesWithItsFacts) {
  std::vector<CheckResult> results = On("mi300x-8", {8, "MI300X"});
  EXPECT_TRUE(WithStatus(results, CheckStatus::kFail).empty());
  bool xgmi = false;
  for (const CheckResult& r : results) xgmi |= r.name == "xgmi" && r.status == CheckStatus::kPass;
  EXPECT_TRUE(xgmi);
}

TEST(GpuChecksTest, DegradedPcieLinkFailsNamingTheGpu) {
  std::vector<CheckResult> failures = WithStatus(On("mi300x-8-degraded-pcie"), CheckStatus::kFail);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].name, "pcie GPU5");
  EXPECT_EQ(failures[0].value, "x8 16.0 GT/s PCIe");
  EXPECT_EQ(failures[0].expected, "x16 32.0 GT/s PCIe");
  EXPECT_NE(failures[0].fix.find("0000:a6:00.0"), std::string::npos);
}

TEST(GpuChecksTest, RasErrorsFailTheGpu) {
  std::vector<CheckResult> failures = WithStatus(On("mi300x-8-ras"), CheckStatus::kFail);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].name, "ecc GPU3");
  EXPECT_EQ(failures[0].value, "2 uncorrectable, 17 correctable");
}

TEST(GpuChecksTest, ExpectationsAndGpuLessHosts) {
  std::vector<CheckResult> wrong = WithStatus(On("mi300x-8", {4, "H100"}), CheckStatus::kFail);
  ASSERT_EQ(wrong.size(), 2u);
  EXPECT_EQ(wrong[0].name, "count");
  EXPECT_EQ(wrong[1].name, "model");
  std::vector<CheckResult> cpu = On("cpu-only");
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_EQ(cpu[0].status, CheckStatus::kSkip);
  std::vector<CheckResult> cpu_expected = On("cpu-only", {8, ""});
  EXPECT_EQ(Worst(cpu_expected), CheckStatus::kFail);
  // NVIDIA: NVLink is not visible in sysfs.
  bool nvlink_skipped = false;
  for (const CheckResult& r : On("h100-8")) nvlink_skipped |= r.name == "nvlink" && r.status == CheckStatus::kSkip;
  EXPECT_TRUE(nvlink_skipped);
}

}  // namespace
}  // namespace primus::preflight
