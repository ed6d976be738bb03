#include "benchmark/comm_report_file.h"

#include <fmt/format.h>

namespace primus::benchmark {
namespace {

std::string Number(const nlohmann::json& value, const char* format) {
  if (!value.is_number()) return "";
  return fmt::format(fmt::runtime(format), value.get<double>());
}

std::string Wrong(const nlohmann::json& half) {
  const auto& wrong = half.contains("nwrong") ? half["nwrong"] : nlohmann::json();
  return wrong.is_number() ? std::to_string(wrong.get<int64_t>()) : "N/A";
}

}  // namespace

ReportDocument CommReportDocument(const nlohmann::json& report, const std::string& title, const std::string& cluster) {
  ReportDocument doc;
  doc.title = title;
  const nlohmann::json config = report.value("config", nlohmann::json::object());
  if (!cluster.empty()) doc.settings.push_back("cluster: " + cluster);
  doc.settings.push_back("backend: " + report.value("backend", std::string("?")));
  doc.settings.push_back(fmt::format("ranks: {}", report.contains("devices") ? report["devices"].size() : 0));
  doc.settings.push_back("datatype: " + config.value("datatype", std::string("?")));
  doc.settings.push_back(fmt::format("iterations: {}, warm-up: {}", config.value("iterations", 0), config.value("warmup_iters", 0)));
  doc.settings.push_back(config.value("validation", 0) > 0 ? "results checked" : "results not checked");
  // The JSON's field names (nccl-tests' -J), its in_place object's with an
  // in_place_ prefix: time in microseconds, bandwidths in GB/s.
  doc.header = {"collective", "size",    "count",  "type",          "redop",           "root",           "time",
                "alg_bw",     "bus_bw",  "nwrong", "in_place_time", "in_place_alg_bw", "in_place_bus_bw", "in_place_nwrong"};
  for (const auto& section : report.value("collectives", nlohmann::json::array())) {
    std::string name = section.value("collective", std::string("?"));
    if (section.contains("slowest_rank") && section["slowest_rank"].is_object()) {
      const auto& slow = section["slowest_rank"];
      doc.settings.push_back(fmt::format("{}: slowest rank {} on {} ({:.1f}% above the mean rank)", name, slow.value("rank", -1),
                                         slow.value("host", std::string("?")), slow.value("percent_above_mean", 0.0)));
    }
    for (const auto& row : section.value("results", nlohmann::json::array())) {
      const auto& out = row["out_of_place"];
      const auto& in = row["in_place"];
      std::vector<std::string> cells = {name,
                                        std::to_string(row.value("size", int64_t{0})),
                                        std::to_string(row.value("count", int64_t{0})),
                                        row.value("type", std::string()),
                                        row.value("redop", std::string()),
                                        row.contains("root") && row["root"].is_number() ? row["root"].dump() : "",
                                        Number(out["time"], "{:.2f}"),
                                        Number(out["alg_bw"], "{:.2f}"),
                                        Number(out["bus_bw"], "{:.2f}"),
                                        Wrong(out),
                                        Number(in["time"], "{:.2f}"),
                                        Number(in["alg_bw"], "{:.2f}"),
                                        Number(in["bus_bw"], "{:.2f}"),
                                        Wrong(in)};
      // .jsonl: the same fields, flat, with the JSON's values.
      nlohmann::ordered_json record = {{"collective", name}};
      for (const char* key : {"size", "count", "type", "redop", "root"}) {
        record[key] = row.contains(key) ? nlohmann::ordered_json::parse(row[key].dump()) : nullptr;
      }
      for (const auto& [prefix, half] : {std::pair{"", &out}, std::pair{"in_place_", &in}}) {
        for (const char* key : {"time", "alg_bw", "bus_bw", "nwrong"}) {
          record[std::string(prefix) + key] =
              half->is_object() && half->contains(key) ? nlohmann::ordered_json::parse((*half)[key].dump()) : nullptr;
        }
      }
      doc.rows.push_back(std::move(cells));
      doc.records.push_back(record);
    }
  }
  doc.json = nlohmann::ordered_json::parse(report.dump());
  return doc;
}

}  // namespace primus::benchmark
