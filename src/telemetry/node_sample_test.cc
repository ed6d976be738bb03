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

TEST(NodeSampleTest, TimePartsRoundTripAndHostileOnesAreLeftOut) {
  TrainingMetrics metrics;
  metrics.step = 5;
  metrics.time_parts = {{"compute", 0.5, std::nullopt, std::nullopt}, {"forward-backward", 0.9, 0.8, 3}};
  auto back = ParseMetricsLine(MetricsLineJson(metrics).dump());
  ASSERT_TRUE(back);
  ASSERT_EQ(back->time_parts.size(), 2u);
  EXPECT_EQ(back->time_parts[1].name, "forward-backward");
  EXPECT_DOUBLE_EQ(back->time_parts[1].seconds, 0.9);
  EXPECT_DOUBLE_EQ(*back->time_parts[1].fastest_seconds, 0.8);
  EXPECT_EQ(back->time_parts[1].slowest_rank, 3);
  EXPECT_EQ(MetricsLineJson(metrics)["time_parts"]["compute"], 0.5) << "a plain number when only seconds are known";

  std::string hostile = R"({"step": 1, "time_parts": {"ok": 1, "bad name": 1, "neg": -1, "huge": 1e300,
      "obj": {"s": 2, "slowest_rank": -4, "fastest_s": "x"}, "str": "1", "nested": {"x": 1}}})";
  back = ParseMetricsLine(hostile);
  ASSERT_TRUE(back);
  std::vector<std::string> names;
  for (const StepTimePart& part : back->time_parts) names.push_back(part.name);
  EXPECT_EQ(names, (std::vector<std::string>{"obj", "ok"}));  // nlohmann orders object keys
  EXPECT_FALSE(back->time_parts[0].slowest_rank);
  EXPECT_FALSE(back->time_parts[0].fastest_seconds);

  std::string many = R"({"step": 1, "time_parts": {)";
  for (int i = 0; i < 100; ++i) many += (i ? "," : "") + std::string("\"p") + std::to_string(i) + "\": 1";
  back = ParseMetricsLine(many + "}}");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->time_parts.size(), kMaxStepTimeParts);
}

}  // namespace
}  // namespace primus::telemetry
