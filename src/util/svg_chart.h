// Charts as SVG, drawn by our own few lines rather than a plotting package;
// the one SVG module of primus-cli:
//   - whole files with a marker on every point, over a linear or a log2 x
//     axis: `benchmark gemm|comm --plot` (TFLOPS or bus bandwidth against
//     size), `analyze run --plot` (panels stacked over one time axis);
//   - elements to inline in the HTML run report (`analyze run --html`): line
//     charts of many thousands of points as bounded polylines, a
//     box-and-strip chart (one box per group, e.g. step times per rank) and a
//     timeline of spans and marks (attempts and how each worker ended); they
//     carry data attributes (`data-series`, `data-points`) saying what was
//     drawn.
// Both kinds share one palette, one tick rule and one escaping: every text
// that reaches the SVG goes through EscapeXml.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "util/error.h"

namespace primus {

// ---- Whole files (benchmark and analyze --plot)

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

// A --plot flag's value must name an .svg file; `example` is the hint's
// example ("--plot tflops.svg").
Status CheckSvgPlotPath(const std::string& value, const std::string& example);
// Several charts stacked top to bottom in one SVG file (`analyze run`: loss
// and throughput over the same time axis).
std::string RenderSvgPanels(const std::vector<PlotSpec>& panels);

// "1K", "32M", "8G" for byte sizes on axis labels; plain numbers otherwise.
std::string ByteSizeLabel(double bytes);

// ---- Elements of the HTML run report

using ChartPoint = std::pair<double, double>;  // (x, y)

// The most points one series draws; longer series are downsampled.
inline constexpr size_t kMaxSeriesPoints = 2000;

// At most `max_points` of `points` (in x order as given): the first and last,
// and per bucket of neighbours its lowest and highest y, so spikes survive.
// Fewer points than that come back as they are.
std::vector<ChartPoint> Downsample(const std::vector<ChartPoint>& points, size_t max_points = kMaxSeriesPoints);

struct ChartSeries {
  std::string name;
  std::vector<ChartPoint> points;
};

struct ChartMarker {  // a dashed vertical line across the chart, e.g. a restart
  double x = 0;
  std::string label;
};

struct LineChart {
  std::string id;  // the <svg> element's id
  std::string title, x_label, y_label;
  std::vector<ChartSeries> series;
  std::vector<ChartMarker> markers;
  bool y_from_zero = true;  // false: the y axis spans the data (a loss curve)
};
std::string RenderLineChart(const LineChart& chart);

struct BoxGroup {
  std::string label;
  std::vector<double> values;
};

struct BoxChart {
  std::string id, title, y_label;
  std::vector<BoxGroup> groups;
};
// Per group: the box from the first to the third quartile, the median, the
// whiskers to the lowest and highest value, and up to 200 of the values as
// dots beside it.
std::string RenderBoxChart(const BoxChart& chart);

struct StackedBar {
  std::string label;
  std::vector<double> values;  // one per layer, bottom first; negatives are drawn as 0
  bool marked = false;         // drawn with a heavy outline (e.g. the slowest rank)
};

struct StackedBarChart {
  std::string id, title, y_label;
  std::vector<std::string> layers;  // the legend, bottom first
  std::vector<StackedBar> bars;
};
// One bar per entry, its layers stacked in the legend's colours; each layer
// segment carries its label, layer and value (data- attributes and a hover title).
std::string RenderStackedBarChart(const StackedBarChart& chart);

struct TimelineSpan {
  size_t row = 0;
  double start = 0, end = 0;
  std::string label;  // shown on hover
};

struct TimelineMark {
  size_t row = 0;
  double x = 0;
  std::string label;  // shown on hover
  bool failure = false;
};

struct Timeline {
  std::string id, title, x_label;
  std::vector<std::string> rows;
  std::vector<TimelineSpan> spans;
  std::vector<TimelineMark> marks;
};
std::string RenderTimeline(const Timeline& timeline);

}  // namespace primus
