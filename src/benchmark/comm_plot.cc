#include "benchmark/comm_plot.h"

#include <fmt/format.h>

namespace primus::benchmark {

PlotSpec BusBandwidthPlot(const nlohmann::json& report) {
  PlotSpec plot;
  size_t ranks = report.contains("devices") ? report["devices"].size() : 0;
  std::string type = report.contains("config") ? report["config"].value("datatype", "") : "";
  plot.title = fmt::format("bus bandwidth, {} ranks, {}", ranks, type);
  plot.x_label = "size (bytes)";
  plot.y_label = "busbw (GB/s)";
  if (!report.contains("collectives")) return plot;
  for (const auto& section : report["collectives"]) {
    std::string name = section.value("name", "?");
    PlotSeries out{name + " out-of-place", {}};
    PlotSeries in{name + " in-place", {}};
    for (const auto& row : section["results"]) {
      double size = row.value("size", 0.0);
      out.points.emplace_back(size, row["out_of_place"].value("bus_bw", 0.0));
      in.points.emplace_back(size, row["in_place"].value("bus_bw", 0.0));
    }
    plot.series.push_back(out);
    plot.series.push_back(in);
  }
  return plot;
}

}  // namespace primus::benchmark
