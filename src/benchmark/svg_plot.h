// A line chart as a self-contained SVG file, written by our own few lines
// rather than a plotting package: --plot of `benchmark gemm` (TFLOPS against
// size) and `benchmark comm` (bus bandwidth against size). The x axis is
// logarithmic (base 2) when asked, as sizes double from row to row.
#pragma once

#include <string>
#include <vector>

#include "util/error.h"

namespace primus::benchmark {

struct PlotSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), x > 0 on a log axis
};

struct PlotSpec {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log2_x = true;
  std::vector<PlotSeries> series;
};

std::string RenderSvgPlot(const PlotSpec& spec);
Status WriteSvgPlot(const std::string& path, const PlotSpec& spec);
// Several charts stacked top to bottom in one SVG file (`analyze run`: loss
// and throughput over the same time axis).
std::string RenderSvgPanels(const std::vector<PlotSpec>& panels);

// "1K", "32M", "8G" for byte sizes on axis labels; plain numbers otherwise.
std::string ByteSizeLabel(double bytes);

}  // namespace primus::benchmark
