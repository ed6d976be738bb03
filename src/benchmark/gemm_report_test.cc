#include "benchmark/gemm_report.h"

#include <gtest/gtest.h>

namespace primus::benchmark {
namespace {

GemmResult Result(int rank, double tflops, bool passed = true) {
  GemmResult r;
  r.rank = rank;
  r.local_rank = rank;
  r.host = "node1";
  r.device = "NVIDIA H100 80GB HBM3";
  r.device_id = "0000:0" + std::to_string(rank) + ":00.0";
  r.library = "cuBLASLt 13.1.0";
  r.shape = {8192, 8192, 8192, false, false};
  r.dtype_requested = r.dtype_used = "bf16";
  r.rotation_sets = 2;
  r.rotation_bytes = int64_t{768} << 20;
  r.timing = {100, 1.4, 1.3, 1.4, 1.5};
  r.tflops = tflops;
  r.peak_tflops = 989.4;
  r.percent_of_peak = 100 * tflops / 989.4;
  r.check = {true, passed, "sampled", 64, passed ? 0 : 3, passed ? 1e-3 : 0.5, 1e-2, passed ? "" : "D[0,0] = 0, expected 1"};
  return r;
}

TEST(GemmReportTest, SlowestGpuIsNamedAndFlaggedBelowTheMedian) {
  std::vector<GemmResult> results = {Result(0, 790), Result(1, 785), Result(2, 700), Result(3, 792)};
  auto slowest = FindSlowestDevices(results);
  ASSERT_EQ(slowest.size(), 1u);
  EXPECT_EQ(slowest[0].rank, 2);
  EXPECT_TRUE(slowest[0].flagged);
  std::string table = FormatGemmTable(results);
  EXPECT_NE(table.find("<- SLOW"), std::string::npos) << table;
  EXPECT_NE(table.find("warning: slow GPU"), std::string::npos) << table;

  std::vector<GemmResult> even = {Result(0, 790), Result(1, 780)};
  auto mild = FindSlowestDevices(even);
  ASSERT_EQ(mild.size(), 1u);
  EXPECT_EQ(mild[0].rank, 1);
  EXPECT_FALSE(mild[0].flagged) << "1% below the median is noise";
  EXPECT_TRUE(FindSlowestDevices({Result(0, 790)}).empty()) << "one GPU has nothing to compare with";
}

TEST(GemmReportTest, TableShowsRatesPeakAndFailedChecks) {
  std::string table = FormatGemmTable({Result(0, 790), Result(1, 780, false)});
  for (const char* word : {"TFLOPS", "%peak", "GB/s", "FLOP/B", "790.00", "79.8", "ok (sampled 64)", "FAILED 3 of 64",
                           "error: rank 1", "cuBLASLt 13.1.0", "device events"}) {
    EXPECT_NE(table.find(word), std::string::npos) << word << "\n" << table;
  }
}

TEST(GemmReportTest, CsvAndJsonCarryEveryResult) {
  std::vector<GemmResult> results = {Result(0, 790), Result(1, 780)};
  std::string csv = FormatGemmCsv(results);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  EXPECT_TRUE(csv.starts_with("rank,host,device,device_id,library,m,n,k,"));
  nlohmann::ordered_json json = GemmReportJson(results);
  ASSERT_EQ(json["results"].size(), 2u);
  auto back = GemmResultFromJson(json["results"][1]);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->rank, 1);
  EXPECT_EQ(back->shape.k, 8192);
  EXPECT_DOUBLE_EQ(back->tflops, 780);
  EXPECT_EQ(back->check.mode, "sampled");
  EXPECT_EQ(json["slowest"][0]["rank"], 1);
  EXPECT_FALSE(GemmResultFromJson(nlohmann::json{{"rank", 1}}).ok());
}

TEST(GemmReportTest, PlotHasOneSeriesPerRank) {
  std::vector<GemmResult> results = {Result(0, 790), Result(1, 780)};
  results.push_back(Result(0, 500));
  results.back().shape = {4096, 4096, 4096};
  PlotSpec plot = GemmPlot(results);
  ASSERT_EQ(plot.series.size(), 2u);
  EXPECT_EQ(plot.series[0].points.size(), 2u);
}

}  // namespace
}  // namespace primus::benchmark
