#include "telemetry/node_sample.h"

#include <gtest/gtest.h>

#include "telemetry/telemetry_test_util.h"

namespace primus::telemetry {
namespace {

// The node sample of docs/monitor.md, as written there.
const char* kDocSample = R"({"node_rank": 1, "host": "host2", "time": 1764060000.123, "generation": 0,
 "host_stats": {"cpus": 16, "cpu_percent": 153.2, "mem_used_bytes": 8123456789, "mem_total_bytes": 134000000000,
                "net": [{"interface": "eth0", "rx_bytes": 123, "tx_bytes": 456,
                         "rx_bytes_per_s": 1.5e6, "tx_bytes_per_s": 1.4e6}]},
 "gpus": [{"index": 0, "bus_id": "0000:03:00.0", "vendor": "amd", "utilization_percent": 97,
           "memory_used_bytes": 1, "memory_total_bytes": 2, "power_watts": 612.5,
           "temperature_c": 71, "clock_mhz": 2100}],
 "workers": [{"rank": 2, "local_rank": 0, "pid": 1234, "state": "running", "cpu_percent": 99.5,
              "rss_bytes": 123456, "step": 120, "total_steps": 200, "loss": 3.21,
              "tokens_per_s": 1234.5, "step_time_s": 0.42, "metrics_time": 1764059999.9}]})";

TEST(NodeSampleTest, TheDocumentedSampleRoundTripsExactly) {
  Json doc = Json::parse(kDocSample);
  NodeSample sample = NodeSampleFromJson(doc);
  EXPECT_EQ(sample.node_rank, 1);
  EXPECT_EQ(sample.host, "host2");
  ASSERT_EQ(sample.workers.size(), 1u);
  EXPECT_EQ(sample.workers[0].metrics.step, 120);
  EXPECT_EQ(sample.gpus[0].clock_mhz, 2100);
  EXPECT_EQ(ToJson(sample), doc);
}

TEST(NodeSampleTest, UnknownValuesAreLeftOutNeverMinusOneOrZero) {
  NodeSample sample;
  sample.host = "h";
  sample.gpus.push_back(MakeGpu(0, "0000:03:00.0", "amd"));
  sample.workers.push_back(MakeWorker(3, 1, 99, "exited"));
  Json json = ToJson(sample);
  EXPECT_FALSE(json["host_stats"].contains("cpu_percent"));
  EXPECT_FALSE(json["gpus"][0].contains("utilization_percent"));
  EXPECT_FALSE(json["gpus"][0].contains("power_watts"));
  EXPECT_FALSE(json["workers"][0].contains("step"));
  EXPECT_FALSE(json["workers"][0].contains("rss_bytes"));
  EXPECT_FALSE(json.contains("age_s"));
  EXPECT_EQ(json["workers"][0]["state"], "exited");
}

TEST(NodeSampleTest, APeersOddMessageReadsAsUnknownsWithoutThrowing) {
  NodeSample sample = NodeSampleFromJson(Json::parse(
      R"({"node_rank": "one", "host_stats": [], "gpus": {"x": 1}, "workers": [{"rank": 1, "step": "ten", "loss": null}]})"));
  EXPECT_EQ(sample.node_rank, 0);
  EXPECT_TRUE(sample.gpus.empty());
  ASSERT_EQ(sample.workers.size(), 1u);
  EXPECT_FALSE(sample.workers[0].metrics.step);
  EXPECT_FALSE(sample.workers[0].metrics.loss);
  EXPECT_NO_THROW(NodeSampleFromJson(Json("text")));
}

TEST(NodeSampleTest, MetricsLinesNeedAnObjectAndKeepOnlyTheirFields) {
  EXPECT_FALSE(MetricsFromJson(Json::array()));
  auto metrics = MetricsFromJson(Json::parse(R"({"step": 7, "loss": 2.5, "metrics_time": 5, "extra": "x"})"));
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->step, 7);
  EXPECT_EQ(metrics->loss, 2.5);
  EXPECT_FALSE(metrics->metrics_time);  // the agent sets it, not the worker
  EXPECT_FALSE(metrics->tokens_per_s);
}

}  // namespace
}  // namespace primus::telemetry
