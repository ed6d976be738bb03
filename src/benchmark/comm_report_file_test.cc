#include "benchmark/comm_report_file.h"

#include <gtest/gtest.h>

namespace primus::benchmark {
namespace {

TEST(CommReportFileTest, OneRowPerCollectiveAndSize) {
  nlohmann::json report = nlohmann::json::parse(R"({
    "backend": "gloo 0.0.0", "config": {"datatype": "bfloat16", "iterations": 5, "warmup_iters": 1, "validation": 0},
    "devices": [{}, {}],
    "collectives": [{"collective": "allreduce", "slowest_rank": {"rank": 1, "host": "n2", "percent_above_mean": 3.5},
      "results": [{"size": 1024, "count": 512, "type": "bfloat16",
                   "out_of_place": {"time": 12.345, "alg_bw": 0.08, "bus_bw": 0.08, "nwrong": null},
                   "in_place": {"time": 11.0, "alg_bw": 0.09, "bus_bw": 0.09, "nwrong": 0}}]}]})");
  ReportDocument doc = CommReportDocument(report, "benchmark rccl", "lab-a");
  EXPECT_EQ(doc.settings[0], "cluster: lab-a");
  EXPECT_EQ(doc.settings[2], "ranks: 2");
  EXPECT_EQ(doc.settings.back(), "allreduce: slowest rank 1 on n2 (3.5% above the mean rank)");
  ASSERT_EQ(doc.rows.size(), 1u);
  EXPECT_EQ(doc.rows[0], (std::vector<std::string>{"allreduce", "1024", "512", "bfloat16", "", "", "12.35", "0.08", "0.08",
                                                   "N/A", "11.00", "0.09", "0.09", "0"}));
  // One set of names: the columns are the JSON's fields, and so are the records'.
  ASSERT_EQ(doc.records.size(), 1u);
  std::vector<std::string> keys;
  for (const auto& [key, value] : doc.records[0].items()) keys.push_back(key);
  EXPECT_EQ(keys, doc.header);
  EXPECT_EQ(doc.records[0]["collective"], "allreduce");
  EXPECT_EQ(doc.records[0]["size"], 1024);
  EXPECT_EQ(doc.records[0]["in_place_time"], 11.0);
  EXPECT_EQ(doc.json["backend"], "gloo 0.0.0");
}

}  // namespace
}  // namespace primus::benchmark
