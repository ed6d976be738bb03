#include "preflight/host_checks.h"

#include <gtest/gtest.h>

#include "platform/test_fixtures.h"

namespace primus::preflight {
namespace {

const CheckResult& Find(const std::vector<CheckResult>& results, const std::string& name) {
  for (const CheckResult& r : results) {
    if (r.name == name || r.name.starts_with(name + " ")) return r;
  }
  static CheckResult none{"", "(missing)", CheckStatus::kSkip, "", "", ""};
  ADD_FAILURE() << "no check named " << name;
  return none;
}

HostFacts Healthy() {
  HostFacts facts;
  facts.memlock_bytes = -1;
  facts.shm_bytes = int64_t{64} << 30;
  facts.nofile = 1048576;
  facts.workspace = "/ws";
  facts.workspace_free_bytes = int64_t{500} << 30;
  facts.mem_available_bytes = int64_t{1500} << 30;
  facts.mem_total_bytes = int64_t{2000} << 30;
  facts.numa_balancing = "0";
  facts.kernel_cmdline = "ro iommu=pt";
  facts.amd_gpus = true;
  facts.rdma = true;
  return facts;
}

TEST(HostChecksTest, AHealthyAmdHostPassesEverything) {
  std::vector<CheckResult> results = CheckHost(Healthy());
  EXPECT_EQ(Worst(results), CheckStatus::kPass);
  EXPECT_EQ(Find(results, "iommu=pt").status, CheckStatus::kPass);
  EXPECT_EQ(Find(results, "numa_balancing").status, CheckStatus::kPass);
}

TEST(HostChecksTest, EachBadSettingGetsItsStatusAndFix) {
  HostFacts facts = Healthy();
  facts.memlock_bytes = 64 << 10;
  facts.shm_bytes = 64 << 20;  // Docker's default
  facts.nofile = 1024;
  facts.workspace_free_bytes = int64_t{5} << 30;
  facts.mem_available_bytes = int64_t{100} << 30;
  facts.numa_balancing = "1";
  facts.kernel_cmdline = "ro quiet";
  std::vector<CheckResult> results = CheckHost(facts);
  EXPECT_EQ(Find(results, "memlock").status, CheckStatus::kFail);  // RDMA present
  EXPECT_EQ(Find(results, "memlock").value, "64 KiB");
  EXPECT_NE(Find(results, "memlock").fix.find("ulimit -l unlimited"), std::string::npos);
  EXPECT_EQ(Find(results, "/dev/shm").status, CheckStatus::kFail);
  EXPECT_NE(Find(results, "/dev/shm").fix.find("--shm-size"), std::string::npos);
  EXPECT_EQ(Find(results, "open files").status, CheckStatus::kWarn);
  EXPECT_EQ(Find(results, "disk").status, CheckStatus::kFail);
  EXPECT_EQ(Find(results, "free memory").status, CheckStatus::kFail);
  EXPECT_EQ(Find(results, "numa_balancing").status, CheckStatus::kWarn);
  EXPECT_NE(Find(results, "numa_balancing").fix.find("kernel.numa_balancing=0"), std::string::npos);
  EXPECT_EQ(Find(results, "iommu=pt").status, CheckStatus::kWarn);
  // Without RDMA a small memlock only warns; NVIDIA/CPU hosts skip the AMD settings.
  facts.rdma = false;
  facts.amd_gpus = false;
  results = CheckHost(facts);
  EXPECT_EQ(Find(results, "memlock").status, CheckStatus::kWarn);
  for (const CheckResult& r : results) EXPECT_NE(r.name, "iommu=pt");
}

TEST(HostChecksTest, FactsComeFromTheProcfsRoot) {
  HostFacts facts = ReadHostFacts(platform::FixtureRoots("mi300x-8"), "/tmp");
  EXPECT_EQ(facts.numa_balancing, "0");
  EXPECT_NE(facts.kernel_cmdline.find("iommu=pt"), std::string::npos);
  EXPECT_GT(facts.mem_total_bytes, int64_t{1} << 40);
  EXPECT_GT(facts.workspace_free_bytes, 0);
}

}  // namespace
}  // namespace primus::preflight
