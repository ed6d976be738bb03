// Our lines against nccl-tests' own printf formats (src/util.cu, src/common.cu).
#include "benchmark/nccl_tests_format.h"

#include <gtest/gtest.h>

#include "util/strings.h"

namespace primus::benchmark {
namespace {

TEST(NcclTestsFormatTest, FloatFieldLikeGetFloatStr) {
  EXPECT_EQ(FloatField(12.3456, 7), "  12.35");
  EXPECT_EQ(FloatField(12345.6, 7), "12345.6");
  EXPECT_EQ(FloatField(123456.4, 7), " 123456");
  EXPECT_EQ(FloatField(12345678.0, 7), "1.2e+07");
  EXPECT_EQ(FloatField(0.0, 6), "  0.00");
  EXPECT_EQ(FloatField(1234.5, 6), "1234.5");
  EXPECT_EQ(FloatField(123456.0, 6), "123456");
}

TEST(NcclTestsFormatTest, RowMatchesTheColumnWidths) {
  CommRow row{1048576, 262144, "float", "sum", -1, {123.45, 8.49, 12.74, 0}, {120.1, 8.73, 13.10, 0}};
  EXPECT_EQ(FormatRow(row),
            "     1048576        262144     float     sum      -1   123.45    8.49   12.74       0   120.10    8.73   13.10       0\n");
  row.in_place.wrong = -1;
  EXPECT_TRUE(FormatRow(row).ends_with("  13.10    N/A\n")) << FormatRow(row);
}

TEST(NcclTestsFormatTest, HeaderAndFooterLines) {
  CommRequest request;
  request.min_bytes = 8;
  request.max_bytes = 1 << 20;
  request.step_factor = 2;
  RankLine rank{0, 4242, "node1", {3, "0000:0c:00", "NVIDIA H100 80GB HBM3"}};
  std::string header = FormatSectionHeader(Collective::kAllReduce, "NCCL 2.28.9", request, {rank});
  std::vector<std::string> lines = Split(header, '\n');
  ASSERT_GE(lines.size(), 10u) << header;
  EXPECT_EQ(lines[0], "# primus-cli " PRIMUS_VERSION " benchmark comm: NCCL 2.28.9");
  EXPECT_EQ(lines[1], "# Collective test starting: all_reduce_perf");
  EXPECT_EQ(lines[2], "# nThread 1 nGpus 1 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 "
                      "agg iters: 1 validation: 1 graph: 0");
  EXPECT_EQ(lines[4], "# Using devices");
  EXPECT_EQ(lines[5], "#  Rank  0 Group  0 Pid   4242 on      node1 device  3 [0000:0c:00] NVIDIA H100 80GB HBM3");
  EXPECT_EQ(lines[7], "#                                                              out-of-place                       in-place          ");
  EXPECT_EQ(lines[8], "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong ");
  EXPECT_EQ(lines[9], "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         ");

  CommSection section;
  section.op = Collective::kAllReduce;
  section.errors = 2;
  section.average_busbw = 12.5;
  section.slowest = {1, "node2", 77, 10.5, 3.25};
  std::string footer = FormatSectionFooter(section);
  EXPECT_EQ(footer,
            "# Out of bounds values : 2 FAILED\n"
            "# Avg bus bandwidth    : 12.5 \n"
            "# Slowest rank         : 1 on node2 (pid 77): 10.50 us per iteration, 3.2% above the mean rank\n"
            "#\n# Collective test concluded: all_reduce_perf\n#\n\n");
}

TEST(NcclTestsFormatTest, JsonKeepsNcclTestsKeys) {
  CommRequest request;
  CommSection section;
  section.rows.push_back({8, 2, "float", "sum", -1, {10, 0, 0, 0}, {11, 0, 0, -1}});
  nlohmann::ordered_json json = CommReportJson("gloo", request, {{0, 1, "h", {}}}, {section});
  const auto& row = json["collectives"][0]["results"][0];
  EXPECT_EQ(row["size"], 8);
  EXPECT_EQ(row["out_of_place"]["time"], 10.0);
  EXPECT_TRUE(row["in_place"]["nwrong"].is_null());
  EXPECT_EQ(json["collectives"][0]["name"], "all_reduce_perf");
  EXPECT_EQ(json["devices"][0]["hostname"], "h");
  EXPECT_EQ(json["config"]["validation"], 1);
}

}  // namespace
}  // namespace primus::benchmark
