#include "preflight/perf_checks.h"

#include <gtest/gtest.h>

namespace primus::preflight {
namespace {

std::vector<std::string> Names(const std::vector<CheckResult>& results) {
  std::vector<std::string> names;
  for (const CheckResult& r : results) names.push_back(r.name);
  return names;
}

TEST(PerfChecksTest, TestsAsPrimusNamesThem) {
  auto all = ParsePerfTests("all", PerfTests{});
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->gemm && all->all_reduce && all->all_to_all);
  auto some = ParsePerfTests(" GEMM , intra-alltoall", QuickPerfTests());
  ASSERT_TRUE(some.ok()) << some.error().Format();
  EXPECT_TRUE(some->gemm);
  EXPECT_FALSE(some->all_reduce);
  EXPECT_TRUE(some->all_to_all);
  EXPECT_TRUE(some->quick) << "the preset's sizes and iterations stay";
  EXPECT_EQ(some->sizes_mb, (std::vector<int>{64, 1024}));

  auto inter = ParsePerfTests("gemm,inter-allreduce", PerfTests{});
  ASSERT_FALSE(inter.ok());
  EXPECT_EQ(inter.error().code, ExitCode::kUsage);
  EXPECT_NE(inter.error().message.find("--tests inter-allreduce: preflight measures collectives between this node's GPUs only"),
            std::string::npos);
  EXPECT_NE(inter.error().hint.find("benchmark comm --op allreduce"), std::string::npos);
  auto typo = ParsePerfTests("intra-allredcue", PerfTests{});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().message.find("did you mean 'intra-allreduce'"), std::string::npos) << typo.error().message;
  EXPECT_FALSE(ParsePerfTests(",,", PerfTests{}).ok());
}

TEST(PerfChecksTest, SizesAndDescription) {
  auto sizes = ParseSizesMb("2, 64,1024", "--comm-sizes-mb");
  ASSERT_TRUE(sizes.ok());
  EXPECT_EQ(*sizes, (std::vector<int>{2, 64, 1024}));
  auto bad = ParseSizesMb("64,1.5", "--comm-sizes-mb");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("--comm-sizes-mb: '1.5' is not a whole number of MiB"), std::string::npos);
  EXPECT_EQ(DescribePerfTests(PerfTests{}), "gemm (bf16 8192^3, 20 iterations), all-reduce at 64 MiB");
  EXPECT_EQ(DescribePerfTests(QuickPerfTests()), "gemm (bf16 8192^3, 10 iterations), all-reduce at 64, 1024 MiB");
}

TEST(PerfChecksTest, WithoutGpusEachSelectedTestIsSkipped) {
  platform::HostInfo cpu_only;
  PerfTests tests;
  tests.all_to_all = true;
  std::vector<CheckResult> results = CheckPerf(cpu_only, "/nonexistent/primus-cli", 5, tests);
  EXPECT_EQ(Names(results), (std::vector<std::string>{"gemm", "all-reduce", "all-to-all"}));
  for (const CheckResult& r : results) EXPECT_EQ(r.status, CheckStatus::kSkip) << r.name;
  tests.gemm = tests.all_reduce = false;
  EXPECT_EQ(Names(CheckPerf(cpu_only, "/nonexistent/primus-cli", 5, tests)), std::vector<std::string>{"all-to-all"});
}

TEST(PerfChecksTest, GemmVerdictAgainstThePeak) {
  EXPECT_EQ(GemmVerdict("gemm GPU0", 700, 1307).status, CheckStatus::kPass);
  EXPECT_EQ(GemmVerdict("gemm GPU0", 600, 1307).status, CheckStatus::kWarn);
  EXPECT_EQ(GemmVerdict("gemm GPU0", 200, 1307).status, CheckStatus::kFail);
}

}  // namespace
}  // namespace primus::preflight
