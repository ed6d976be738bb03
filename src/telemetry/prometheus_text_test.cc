#include "telemetry/prometheus_text.h"

#include <gtest/gtest.h>

#include <string>

namespace primus::telemetry {
namespace {

using Json = nlohmann::json;

// The example of docs/monitor.md: one node with one GPU and one worker.
Json DocumentedView() {
  return Json::parse(R"({"format": "primus-job-telemetry/1",
    "job": {"run_id": "20261125-093000-1a2b3c", "coordinator": "host1", "time": 1764060000.2,
            "state": "running", "generation": 0, "restarts": 1, "nnodes": 2, "world_size": 16,
            "interval_s": 5, "step": 120, "total_steps": 200, "progress": 0.6, "eta_s": 33.6,
            "loss": 3.21, "tokens_per_s": 19752.0, "median_step_time_s": 0.42},
    "stragglers": [
      {"kind": "rank", "rank": 2, "node_rank": 1, "host": "host2", "step_time_s": 0.61,
       "median_step_time_s": 0.42, "ratio": 1.45, "samples": 3},
      {"kind": "gpu", "node_rank": 1, "host": "host2", "gpu": 0, "utilization_percent": 41,
       "median_utilization_percent": 96, "samples": 3}],
    "nodes": [{"node_rank": 1, "host": "host2", "time": 1764060000.123, "generation": 0, "age_s": 0.5,
      "host_stats": {"cpus": 16, "cpu_percent": 153.2, "mem_used_bytes": 8123456789, "mem_total_bytes": 134000000000,
                     "net": [{"interface": "eth0", "rx_bytes": 123, "tx_bytes": 456,
                              "rx_bytes_per_s": 1.5e6, "tx_bytes_per_s": 1.4e6}]},
      "gpus": [{"index": 0, "bus_id": "0000:03:00.0", "vendor": "amd", "utilization_percent": 97,
                "memory_used_bytes": 1, "memory_total_bytes": 2, "power_watts": 612.5,
                "temperature_c": 71, "clock_mhz": 2100}],
      "workers": [{"rank": 2, "local_rank": 0, "pid": 1234, "state": "running", "cpu_percent": 99.5,
                   "rss_bytes": 123456, "step": 120, "total_steps": 200, "loss": 3.21,
                   "tokens_per_s": 1234.5, "step_time_s": 0.42, "metrics_time": 1764059999.9}]}]})");
}

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.starts_with(line + "\n");
}

TEST(PrometheusTextTest, EverySeriesOfTheDocumentedViewWithItsLabels) {
  std::string text = RenderPrometheusText(DocumentedView());
  EXPECT_TRUE(Has(text, "# HELP primus_job_steps_total Lowest step any rank reported (a restart from a checkpoint resets it).")) << text;
  EXPECT_TRUE(Has(text, "# TYPE primus_job_steps_total counter"));
  EXPECT_TRUE(Has(text, "primus_job_steps_total 120"));
  EXPECT_TRUE(Has(text, "primus_job_total_steps 200"));
  EXPECT_TRUE(Has(text, "primus_job_progress_ratio 0.6"));
  EXPECT_TRUE(Has(text, "primus_job_eta_seconds 33.6"));
  EXPECT_TRUE(Has(text, "primus_job_loss 3.21"));
  EXPECT_TRUE(Has(text, "primus_job_tokens_per_second 19752"));
  EXPECT_TRUE(Has(text, "# TYPE primus_job_restarts_total counter"));
  EXPECT_TRUE(Has(text, "primus_job_restarts_total 1"));
  EXPECT_TRUE(Has(text, "primus_job_generation 0"));
  EXPECT_TRUE(Has(text, "primus_job_nodes 2"));
  EXPECT_TRUE(Has(text, "primus_job_world_size 16"));
  EXPECT_TRUE(Has(text, "primus_job_stragglers 2"));

  const std::string rank = R"({node="1",host="host2",rank="2",local_rank="0"})";
  EXPECT_TRUE(Has(text, "primus_rank_steps_total" + rank + " 120"));
  EXPECT_TRUE(Has(text, "primus_rank_loss" + rank + " 3.21"));
  EXPECT_TRUE(Has(text, "primus_rank_tokens_per_second" + rank + " 1234.5"));
  EXPECT_TRUE(Has(text, "primus_rank_step_time_seconds" + rank + " 0.42"));
  EXPECT_TRUE(Has(text, "primus_rank_cpu_cores" + rank + " 0.995"));
  EXPECT_TRUE(Has(text, "primus_rank_rss_bytes" + rank + " 123456"));
  EXPECT_TRUE(Has(text, "primus_rank_running" + rank + " 1"));
  EXPECT_TRUE(Has(text, "primus_rank_straggler" + rank + " 1"));

  const std::string gpu = R"({node="1",host="host2",gpu="0"})";
  EXPECT_TRUE(Has(text, "primus_gpu_utilization_ratio" + gpu + " 0.97"));
  EXPECT_TRUE(Has(text, "primus_gpu_memory_used_bytes" + gpu + " 1"));
  EXPECT_TRUE(Has(text, "primus_gpu_memory_total_bytes" + gpu + " 2"));
  EXPECT_TRUE(Has(text, "primus_gpu_power_watts" + gpu + " 612.5"));
  EXPECT_TRUE(Has(text, "primus_gpu_temperature_celsius" + gpu + " 71"));
  EXPECT_TRUE(Has(text, "primus_gpu_clock_hertz" + gpu + " 2100000000"));
  EXPECT_TRUE(Has(text, "primus_gpu_straggler" + gpu + " 1"));

  const std::string node = R"({node="1",host="host2"})";
  EXPECT_TRUE(Has(text, "primus_node_cpu_cores" + node + " 1.532"));
  EXPECT_TRUE(Has(text, "primus_node_memory_used_bytes" + node + " 8123456789"));
  EXPECT_TRUE(Has(text, "primus_node_memory_total_bytes" + node + " 134000000000"));
  EXPECT_TRUE(Has(text, "primus_node_report_age_seconds" + node + " 0.5"));
  const std::string net = R"({node="1",host="host2",interface="eth0"})";
  EXPECT_TRUE(Has(text, "# TYPE primus_node_network_receive_bytes_total counter"));
  EXPECT_TRUE(Has(text, "primus_node_network_receive_bytes_total" + net + " 123"));
  EXPECT_TRUE(Has(text, "primus_node_network_transmit_bytes_total" + net + " 456"));
  EXPECT_TRUE(text.ends_with("\n"));
}

TEST(PrometheusTextTest, JobInfoCarriesTheNamesAndFrameworkFiguresAreInBaseUnits) {
  Json view = DocumentedView();
  view["job"]["experiment"] = "llama3-8b";
  view["job"]["backend"] = "primus";
  view["job"]["framework"] = "megatron";
  Json& worker = view["nodes"][0]["workers"][0];  // rank 2 on node 1
  worker["tflops_per_gpu"] = 412.5;
  worker["mfu"] = 0.45;
  worker["lr"] = 3e-4;
  worker["grad_norm"] = 1.25;
  worker["memory_bytes"] = 1024;
  std::string text = RenderPrometheusText(view);
  EXPECT_TRUE(Has(text, R"(primus_job_info{run_id="20261125-093000-1a2b3c",experiment="llama3-8b",backend="primus",framework="megatron"} 1)"))
      << text;
  const std::string rank = R"({node="1",host="host2",rank="2",local_rank="0"})";
  EXPECT_TRUE(Has(text, "primus_rank_model_flops_per_second" + rank + " 412500000000000")) << text;
  EXPECT_TRUE(Has(text, "primus_rank_mfu_ratio" + rank + " 0.45"));
  EXPECT_TRUE(Has(text, "primus_rank_learning_rate" + rank + " 3e-04"));
  EXPECT_TRUE(Has(text, "primus_rank_grad_norm" + rank + " 1.25"));
  EXPECT_TRUE(Has(text, "primus_rank_device_memory_bytes" + rank + " 1024"));
  EXPECT_EQ(text.find("primus_rank_step_phase_seconds"), std::string::npos) << "no rank said where its step went";
  worker["time_parts"] = {{"forward-backward", 0.75}, {"all-grads-sync", 0.125}, {"optimizer", 0.0625}};
  text = RenderPrometheusText(view);
  const std::string phase = R"({node="1",host="host2",rank="2",local_rank="0",phase=")";
  EXPECT_TRUE(Has(text, "primus_rank_step_phase_seconds" + phase + R"(compute"} 0.625)")) << text;
  EXPECT_TRUE(Has(text, "primus_rank_step_phase_seconds" + phase + R"(communication"} 0.125)")) << text;
  EXPECT_TRUE(Has(text, "primus_rank_step_phase_seconds" + phase + R"(optimizer"} 0.0625)")) << text;
  // A view without the names still says which run it is.
  EXPECT_TRUE(Has(RenderPrometheusText(DocumentedView()),
                  R"(primus_job_info{run_id="20261125-093000-1a2b3c",experiment="",backend="",framework=""} 1)"));
}

TEST(PrometheusTextTest, AnAbsentValueLeavesItsSeriesOut) {
  Json view = DocumentedView();
  view["job"].erase("eta_s");
  view["job"]["loss"] = nullptr;       // unknown written as null
  view["job"]["step"] = "120";         // not a number
  view["nodes"][0]["workers"][0].erase("loss");
  view["nodes"][0]["gpus"][0].erase("power_watts");
  std::string text = RenderPrometheusText(view);
  // Nothing else had the value, so the whole family (HELP and TYPE too) goes.
  EXPECT_EQ(text.find("primus_job_eta_seconds"), std::string::npos) << text;
  EXPECT_EQ(text.find("primus_job_loss"), std::string::npos);
  EXPECT_EQ(text.find("primus_job_steps_total "), std::string::npos);
  EXPECT_EQ(text.find("primus_rank_loss"), std::string::npos);
  EXPECT_EQ(text.find("primus_gpu_power_watts"), std::string::npos);
  EXPECT_NE(text.find("primus_job_total_steps 200"), std::string::npos);
}

TEST(PrometheusTextTest, StragglerSeriesOnlyWhereTheViewJudgedThem) {
  Json view = DocumentedView();
  view["nodes"][0]["workers"].push_back({{"rank", 3}, {"local_rank", 1}, {"state", "exited"}});
  std::string judged = RenderPrometheusText(view);
  EXPECT_TRUE(Has(judged, R"(primus_rank_straggler{node="1",host="host2",rank="3",local_rank="1"} 0)")) << judged;
  EXPECT_TRUE(Has(judged, R"(primus_rank_running{node="1",host="host2",rank="3",local_rank="1"} 0)"));
  view.erase("stragglers");
  std::string unjudged = RenderPrometheusText(view);
  EXPECT_EQ(unjudged.find("straggler"), std::string::npos) << unjudged;
}

TEST(PrometheusTextTest, LabelValuesAreEscaped) {
  Json view = DocumentedView();
  view["nodes"][0]["host"] = "we\"ird\\host\nname";
  std::string text = RenderPrometheusText(view);
  EXPECT_TRUE(Has(text, R"(primus_node_cpu_cores{node="1",host="we\"ird\\host\nname"} 1.532)")) << text;
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), R"(a\"b\\c\nd)");
}

TEST(PrometheusTextTest, SpecialFloatsAndLargeIntegersAsTheFormatWritesThem) {
  Json view = {{"job", {{"loss", std::nan("")}, {"eta_s", INFINITY}, {"step", 18446744073709551615ull}}}};
  std::string text = RenderPrometheusText(view);
  EXPECT_TRUE(Has(text, "primus_job_loss NaN")) << text;
  EXPECT_TRUE(Has(text, "primus_job_eta_seconds +Inf"));
  EXPECT_TRUE(Has(text, "primus_job_steps_total 18446744073709551615"));
}

TEST(PrometheusTextTest, WhatIsNotAViewGivesNoSeries) {
  EXPECT_EQ(RenderPrometheusText(Json()), "");
  EXPECT_EQ(RenderPrometheusText(Json::array({1, 2})), "");
  EXPECT_EQ(RenderPrometheusText(Json{{"job", 3}, {"nodes", "x"}}), "");
  // A worker without a rank cannot be told apart from another: left out.
  Json view = {{"nodes", {{{"node_rank", 0}, {"workers", {{{"pid", 5}, {"state", "running"}}}}}}}};
  EXPECT_EQ(RenderPrometheusText(view).find("primus_rank_running"), std::string::npos);
}

TEST(PrometheusTextTest, EachFamilyIsOneBlockWithAllItsNodes) {
  Json view = DocumentedView();
  Json second = view["nodes"][0];
  second["node_rank"] = 0;
  second["host"] = "host1";
  second["workers"][0]["rank"] = 0;
  view["nodes"].push_back(second);
  std::string text = RenderPrometheusText(view);
  size_t first = text.find("primus_rank_steps_total{node=\"1\"");
  size_t other = text.find("primus_rank_steps_total{node=\"0\"");
  size_t next_family = text.find("# HELP primus_rank_loss");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(other, std::string::npos);
  EXPECT_LT(first, next_family);
  EXPECT_LT(other, next_family);
  // HELP/TYPE once per family.
  EXPECT_EQ(text.find("# TYPE primus_rank_steps_total counter"), text.rfind("# TYPE primus_rank_steps_total counter"));
}

}  // namespace
}  // namespace primus::telemetry
