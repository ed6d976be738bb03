#include "util/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/files.h"
#include "util/strings.h"
#include "util/xml_escape.h"

namespace primus {
namespace {

// The report's inline charts.
constexpr double kWidth = 900;
constexpr double kLeft = 70, kRight = 180, kTop = 36, kBottom = 46;  // the legend sits on the right
// Whole files.
constexpr double kFileWidth = 900, kFileHeight = 500;
constexpr double kFileLeft = 80, kFileRight = 260, kFileTop = 50, kFileBottom = 60;
const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

const char* Color(size_t i) { return kColors[i % (sizeof(kColors) / sizeof(kColors[0]))]; }

// A "nice" step (1, 2 or 5 times a power of ten) giving about `ticks` ticks.
double NiceStep(double span, int ticks) {
  if (!(span > 0) || !std::isfinite(span)) return 1;
  double raw = span / ticks;
  double power = std::pow(10, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= factor * power) return factor * power;
  }
  return 10 * power;
}

// An axis from lo to hi rounded out to whole steps.
struct Axis {
  double lo = 0, hi = 1, step = 1;
};

Axis MakeAxis(double lo, double hi, int ticks, bool from_zero) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (from_zero) lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
  if (hi == lo) lo -= lo == 0 ? 0 : std::abs(lo) * 0.1, hi += hi == 0 ? 1 : std::abs(hi) * 0.1;
  Axis axis;
  axis.step = NiceStep(hi - lo, ticks);
  axis.lo = std::floor(lo / axis.step) * axis.step;
  axis.hi = std::ceil(hi / axis.step) * axis.step;
  if (axis.hi <= axis.lo) axis.hi = axis.lo + axis.step;
  return axis;
}

std::string Tick(double value) { return fmt::format("{:.6g}", std::abs(value) < 1e-12 ? 0.0 : value); }

std::string SvgOpen(const std::string& id, const std::string& kind, double height, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"{0}\" data-chart=\"{1}\" class=\"chart\" viewBox=\"0 0 {2} {3}\" "
      "width=\"{2}\" height=\"{3}\" font-family=\"sans-serif\" font-size=\"12\" role=\"img\" aria-label=\"{4}\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{5}\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">{4}</text>\n",
      EscapeXml(id), kind, kWidth, height, EscapeXml(title), kLeft + (kWidth - kLeft - kRight) / 2);
}

// Grid, ticks and labels of a plot area (x from `x`, y from `y`).
std::string Frame(const Axis& x, const Axis& y, double height, const std::string& x_label, const std::string& y_label,
                  bool x_ticks = true) {
  double plot_w = kWidth - kLeft - kRight, plot_h = height - kTop - kBottom;
  auto sx = [&](double v) { return kLeft + (v - x.lo) / (x.hi - x.lo) * plot_w; };
  auto sy = [&](double v) { return kTop + plot_h - (v - y.lo) / (y.hi - y.lo) * plot_h; };
  std::string svg;
  for (double v = y.lo; v <= y.hi + y.step / 1000; v += y.step) {
    svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#e4e4e4\"/>\n", kLeft, sy(v),
                       kLeft + plot_w, sy(v));
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 6, sy(v) + 4, Tick(v));
  }
  for (double v = x.lo; x_ticks && v <= x.hi + x.step / 1000; v += x.step) {
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#f0f0f0\"/>\n", sx(v), kTop,
                       kTop + plot_h);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", sx(v), kTop + plot_h + 16, Tick(v));
  }
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", kLeft, kTop,
                     plot_w, plot_h);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kLeft + plot_w / 2, height - 8,
                     EscapeXml(x_label));
  svg += fmt::format("<text x=\"16\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {0})\">{1}</text>\n",
                     kTop + plot_h / 2, EscapeXml(y_label));
  return svg;
}

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double at = q * static_cast<double>(sorted.size() - 1);
  size_t low = static_cast<size_t>(std::floor(at));
  size_t high = std::min(low + 1, sorted.size() - 1);
  return sorted[low] + (sorted[high] - sorted[low]) * (at - static_cast<double>(low));
}

}  // namespace

std::string ByteSizeLabel(double bytes) {
  const char* units[] = {"", "K", "M", "G", "T"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{:g}{}", bytes, units[unit]);
}

std::string RenderSvgPlot(const PlotSpec& spec) {
  double x_min = INFINITY, x_max = -INFINITY, y_max = 0;
  for (const PlotSeries& series : spec.series) {
    for (auto [x, y] : series.points) {
      if (spec.log2_x && x <= 0) continue;
      double px = spec.log2_x ? std::log2(x) : x;
      x_min = std::min(x_min, px);
      x_max = std::max(x_max, px);
      y_max = std::max(y_max, y);
    }
  }
  if (!std::isfinite(x_min)) x_min = 0, x_max = 1;
  if (x_max == x_min) x_min -= 1, x_max += 1;
  double y_step = NiceStep(y_max > 0 ? y_max : 1, 5);
  double y_top = std::max(y_step, std::ceil((y_max > 0 ? y_max : 1) / y_step) * y_step);
  double plot_w = kFileWidth - kFileLeft - kFileRight, plot_h = kFileHeight - kFileTop - kFileBottom;
  auto sx = [&](double x) { return kFileLeft + ((spec.log2_x ? std::log2(x) : x) - x_min) / (x_max - x_min) * plot_w; };
  auto sy = [&](double y) { return kFileTop + plot_h - y / y_top * plot_h; };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"28\" font-size=\"16\" text-anchor=\"middle\">{3}</text>\n",
      kFileWidth, kFileHeight, kFileLeft + plot_w / 2, EscapeXml(spec.title));
  // Axes, grid and ticks.
  for (double y = 0; y <= y_top + y_step / 2; y += y_step) {
    svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", kFileLeft, sy(y), kFileLeft + plot_w, sy(y));
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n", kFileLeft - 6, sy(y) + 4, y);
  }
  int first = static_cast<int>(std::ceil(x_min)), last = static_cast<int>(std::floor(x_max));
  int every = std::max(1, (last - first + 1) / 12);
  for (int e = first; spec.log2_x && e <= last; e += every) {
    double x = std::ldexp(1.0, e);
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>\n", sx(x), kFileTop, kFileTop + plot_h);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", sx(x), kFileTop + plot_h + 18,
                       ByteSizeLabel(x));
  }
  if (!spec.log2_x) {
    double x_step = NiceStep(x_max - x_min, 8);
    for (double x = std::ceil(x_min / x_step) * x_step; x <= x_max + x_step / 1000; x += x_step) {
      svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>\n", sx(x), kFileTop,
                         kFileTop + plot_h);
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:g}</text>\n", sx(x), kFileTop + plot_h + 18, x);
    }
  }
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n", kFileLeft, kFileTop,
                     plot_w, plot_h);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kFileLeft + plot_w / 2, kFileHeight - 15,
                     EscapeXml(spec.x_label));
  svg += fmt::format("<text x=\"20\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 20 {0})\">{1}</text>\n",
                     kFileTop + plot_h / 2, EscapeXml(spec.y_label));
  // Series and legend.
  for (size_t i = 0; i < spec.series.size(); ++i) {
    const PlotSeries& series = spec.series[i];
    const char* color = Color(i);
    std::string points;
    for (auto [x, y] : series.points) {
      if (spec.log2_x && x <= 0) continue;
      points += fmt::format("{:.1f},{:.1f} ", sx(x), sy(y));
    }
    svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n", color, Trim(points));
    for (auto [x, y] : series.points) {
      if (spec.log2_x && x <= 0) continue;
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", sx(x), sy(y), color);
    }
    double ly = kFileTop + 10 + 20 * static_cast<double>(i);
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"2\"/>\n",
                       kFileLeft + plot_w + 15, ly, kFileLeft + plot_w + 40, color);
    svg += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", kFileLeft + plot_w + 45, ly + 4, EscapeXml(series.name));
  }
  return svg + "</svg>\n";
}

Status WriteSvgPlot(const std::string& path, const PlotSpec& spec) { return WriteFileAtomic(path, RenderSvgPlot(spec), kUserOutputMode); }

std::string RenderSvgPanels(const std::vector<PlotSpec>& panels) {
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\">\n", kFileWidth,
      kFileHeight * static_cast<double>(panels.size()));
  for (size_t i = 0; i < panels.size(); ++i) {
    // A nested <svg> is positioned by its x/y attributes.
    std::string panel = RenderSvgPlot(panels[i]);
    panel.insert(4, fmt::format(" x=\"0\" y=\"{}\"", kFileHeight * static_cast<double>(i)));
    svg += panel;
  }
  return svg + "</svg>\n";
}

std::vector<ChartPoint> Downsample(const std::vector<ChartPoint>& points, size_t max_points) {
  if (points.size() <= max_points || max_points < 4) return points;
  // The first and last points, and between them buckets of two points each.
  size_t buckets = (max_points - 2) / 2;
  size_t inner = points.size() - 2;
  std::vector<ChartPoint> out;
  out.reserve(max_points);
  out.push_back(points.front());
  for (size_t b = 0; b < buckets; ++b) {
    size_t begin = 1 + b * inner / buckets, end = 1 + (b + 1) * inner / buckets;
    if (begin >= end) continue;
    size_t low = begin, high = begin;
    for (size_t i = begin; i < end; ++i) {
      if (points[i].second < points[low].second) low = i;
      if (points[i].second > points[high].second) high = i;
    }
    out.push_back(points[std::min(low, high)]);
    if (low != high) out.push_back(points[std::max(low, high)]);
  }
  out.push_back(points.back());
  return out;
}

std::string RenderLineChart(const LineChart& chart) {
  constexpr double kHeight = 320;
  double x_min = INFINITY, x_max = -INFINITY, y_min = INFINITY, y_max = -INFINITY;
  for (const ChartSeries& series : chart.series) {
    for (auto [x, y] : series.points) {
      x_min = std::min(x_min, x), x_max = std::max(x_max, x);
      y_min = std::min(y_min, y), y_max = std::max(y_max, y);
    }
  }
  for (const ChartMarker& marker : chart.markers) x_min = std::min(x_min, marker.x), x_max = std::max(x_max, marker.x);
  Axis x = MakeAxis(x_min, x_max, 8, false);
  // Lines start where the data starts, not at a rounded-down tick.
  if (std::isfinite(x_min) && x_max > x_min) x.lo = x_min, x.hi = x_max;
  Axis y = MakeAxis(y_min, y_max, 5, chart.y_from_zero);
  double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto sx = [&](double v) { return kLeft + (v - x.lo) / (x.hi - x.lo) * plot_w; };
  auto sy = [&](double v) { return kTop + plot_h - (v - y.lo) / (y.hi - y.lo) * plot_h; };

  std::string svg = SvgOpen(chart.id, "line", kHeight, chart.title);
  // Rounded x ticks inside the data's own span.
  Axis ticks = MakeAxis(x.lo, x.hi, 8, false);
  for (double v = ticks.lo; v <= x.hi + ticks.step / 1000; v += ticks.step) {
    if (v < x.lo - ticks.step / 1000) continue;
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#f0f0f0\"/>\n", sx(v), kTop,
                       kTop + plot_h);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", sx(v), kTop + plot_h + 16, Tick(v));
  }
  svg += Frame(x, y, kHeight, chart.x_label, chart.y_label, /*x_ticks=*/false);
  for (const ChartMarker& marker : chart.markers) {
    // A label in the right half is written to the left of its line, so it stays inside the plot (off the legend).
    bool label_left = sx(marker.x) > kLeft + plot_w / 2;
    svg += fmt::format(
        "<g class=\"marker\"><title>{0}</title><line x1=\"{1:.1f}\" y1=\"{2}\" x2=\"{1:.1f}\" y2=\"{3}\" stroke=\"#999\" "
        "stroke-dasharray=\"4 3\"/><text x=\"{4:.1f}\" y=\"{5}\" text-anchor=\"{6}\" font-size=\"10\" "
        "fill=\"#666\">{0}</text></g>\n",
        EscapeXml(marker.label), sx(marker.x), kTop, kTop + plot_h, sx(marker.x) + (label_left ? -3 : 3), kTop + 11,
        label_left ? "end" : "start");
  }
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const ChartSeries& series = chart.series[i];
    std::vector<ChartPoint> drawn = Downsample(series.points);
    std::string points;
    points.reserve(drawn.size() * 12);
    for (auto [px, py] : drawn) points += fmt::format("{:.1f},{:.1f} ", sx(px), sy(py));
    if (!points.empty()) points.pop_back();
    svg += fmt::format(
        "<polyline class=\"series\" data-series=\"{}\" data-points=\"{}\" data-source-points=\"{}\" fill=\"none\" "
        "stroke=\"{}\" stroke-width=\"1.6\" stroke-linejoin=\"round\" points=\"{}\"/>\n",
        EscapeXml(series.name), drawn.size(), series.points.size(), Color(i), points);
    if (drawn.size() == 1) {
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", sx(drawn[0].first),
                         sy(drawn[0].second), Color(i));
    }
    double ly = kTop + 8 + 18 * static_cast<double>(i);
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"2\"/>\n",
                       kLeft + plot_w + 12, ly, kLeft + plot_w + 34, Color(i));
    svg += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", kLeft + plot_w + 40, ly + 4, EscapeXml(series.name));
  }
  return svg + "</svg>\n";
}

std::string RenderBoxChart(const BoxChart& chart) {
  constexpr double kHeight = 340;
  constexpr size_t kMaxDots = 200;
  double y_max = 0;
  for (const BoxGroup& group : chart.groups) {
    for (double v : group.values) y_max = std::max(y_max, v);
  }
  Axis y = MakeAxis(0, y_max, 5, true);
  double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto sy = [&](double v) { return kTop + plot_h - (v - y.lo) / (y.hi - y.lo) * plot_h; };
  double slot = plot_w / static_cast<double>(std::max<size_t>(1, chart.groups.size()));
  double box_w = std::min(36.0, slot * 0.45);

  std::string svg = SvgOpen(chart.id, "box", kHeight, chart.title);
  svg += Frame({0, 1, 1}, y, kHeight, "", chart.y_label, /*x_ticks=*/false);
  for (size_t g = 0; g < chart.groups.size(); ++g) {
    const BoxGroup& group = chart.groups[g];
    double center = kLeft + slot * (static_cast<double>(g) + 0.5);
    std::vector<double> sorted = group.values;
    std::sort(sorted.begin(), sorted.end());
    double q1 = Quantile(sorted, 0.25), median = Quantile(sorted, 0.5), q3 = Quantile(sorted, 0.75);
    double low = sorted.empty() ? 0 : sorted.front(), high = sorted.empty() ? 0 : sorted.back();
    svg += fmt::format("<g class=\"box\" data-group=\"{}\" data-values=\"{}\" data-median=\"{:.6g}\">", EscapeXml(group.label),
                       group.values.size(), median);
    svg += fmt::format("<title>{}: {} values, median {:.4g}, quartiles {:.4g} to {:.4g}, range {:.4g} to {:.4g}</title>",
                       EscapeXml(group.label), group.values.size(), median, q1, q3, low, high);
    double box_x = center - box_w, dot_x = center + box_w * 0.6;
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#555\"/>", box_x + box_w / 2,
                       sy(low), sy(high));
    svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#cfe0f3\" stroke=\"#1f77b4\"/>",
                       box_x, sy(q3), box_w, std::max(1.0, sy(q1) - sy(q3)));
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#d62728\" stroke-width=\"2\"/>",
                       box_x, sy(median), box_x + box_w, sy(median));
    // The strip: up to kMaxDots values in their own order, spread sideways.
    size_t count = group.values.size(), shown = std::min(count, kMaxDots);
    for (size_t k = 0; k < shown; ++k) {
      double v = group.values[k * count / shown];
      double jitter = (static_cast<double>((k * 37) % 17) / 16.0) * box_w * 0.8;
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"1.6\" fill=\"#1f77b4\" fill-opacity=\"0.5\"/>",
                         dot_x + jitter, sy(v));
    }
    svg += "</g>\n";
    bool rotate = slot < 60;
    svg += fmt::format("<text x=\"{0:.1f}\" y=\"{1}\" text-anchor=\"{2}\"{3}>{4}</text>\n", center, kTop + plot_h + 14,
                       rotate ? "end" : "middle",
                       rotate ? fmt::format(" font-size=\"9\" transform=\"rotate(-45 {:.1f} {})\"", center, kTop + plot_h + 14)
                              : std::string(),
                       EscapeXml(group.label));
  }
  return svg + "</svg>\n";
}

std::string RenderStackedBarChart(const StackedBarChart& chart) {
  constexpr double kHeight = 320;
  double y_max = 0;
  for (const StackedBar& bar : chart.bars) {
    double total = 0;
    for (double v : bar.values) total += std::max(0.0, v);
    y_max = std::max(y_max, total);
  }
  Axis y = MakeAxis(0, y_max, 5, true);
  double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto sy = [&](double v) { return kTop + plot_h - (v - y.lo) / (y.hi - y.lo) * plot_h; };
  double slot = plot_w / static_cast<double>(std::max<size_t>(1, chart.bars.size()));
  double bar_w = std::max(1.0, std::min(40.0, slot * 0.7));

  std::string svg = SvgOpen(chart.id, "stacked", kHeight, chart.title);
  svg += Frame({0, 1, 1}, y, kHeight, "", chart.y_label, /*x_ticks=*/false);
  // Labels: all of them when they fit, else about 16 spread evenly.
  size_t label_every = std::max<size_t>(1, (chart.bars.size() + 15) / 16);
  for (size_t b = 0; b < chart.bars.size(); ++b) {
    const StackedBar& bar = chart.bars[b];
    double center = kLeft + slot * (static_cast<double>(b) + 0.5);
    svg += fmt::format("<g class=\"bar\" data-label=\"{}\"{}>", EscapeXml(bar.label), bar.marked ? " data-marked=\"1\"" : "");
    double base = 0;
    for (size_t layer = 0; layer < bar.values.size() && layer < chart.layers.size(); ++layer) {
      double v = std::max(0.0, bar.values[layer]);
      if (v <= 0) continue;
      svg += fmt::format(
          "<rect data-layer=\"{0}\" data-value=\"{1:.6g}\" x=\"{2:.1f}\" y=\"{3:.1f}\" width=\"{4:.1f}\" height=\"{5:.1f}\" "
          "fill=\"{6}\"><title>{7}: {0} {1:.4g}</title></rect>",
          EscapeXml(chart.layers[layer]), v, center - bar_w / 2, sy(base + v), bar_w, std::max(0.5, sy(base) - sy(base + v)),
          Color(layer), EscapeXml(bar.label));
      base += v;
    }
    if (bar.marked) {
      svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#111\" "
                         "stroke-width=\"2\"/>",
                         center - bar_w / 2, sy(base), bar_w, std::max(0.5, sy(0) - sy(base)));
    }
    svg += "</g>\n";
    if (b % label_every == 0) {
      bool rotate = slot * static_cast<double>(label_every) < 60;
      svg += fmt::format("<text x=\"{0:.1f}\" y=\"{1}\" text-anchor=\"{2}\"{3}>{4}</text>\n", center, kTop + plot_h + 14,
                         rotate ? "end" : "middle",
                         rotate ? fmt::format(" font-size=\"9\" transform=\"rotate(-45 {:.1f} {})\"", center, kTop + plot_h + 14)
                                : std::string(),
                         EscapeXml(bar.label));
    }
  }
  for (size_t layer = 0; layer < chart.layers.size(); ++layer) {
    double ly = kTop + 8 + 18 * static_cast<double>(layer);
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\"/>\n", kLeft + plot_w + 12, ly - 5,
                       Color(layer));
    svg += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", kLeft + plot_w + 32, ly + 4, EscapeXml(chart.layers[layer]));
  }
  return svg + "</svg>\n";
}

std::string RenderTimeline(const Timeline& timeline) {
  constexpr double kRow = 30;
  double height = kTop + kRow * static_cast<double>(std::max<size_t>(1, timeline.rows.size())) + kBottom;
  double x_min = INFINITY, x_max = -INFINITY;
  for (const TimelineSpan& span : timeline.spans) x_min = std::min(x_min, span.start), x_max = std::max(x_max, span.end);
  for (const TimelineMark& mark : timeline.marks) x_min = std::min(x_min, mark.x), x_max = std::max(x_max, mark.x);
  Axis x = MakeAxis(x_min, x_max, 8, true);
  double plot_w = kWidth - kLeft - kRight;
  auto sx = [&](double v) { return kLeft + (v - x.lo) / (x.hi - x.lo) * plot_w; };
  auto row_y = [&](size_t row) { return kTop + kRow * (static_cast<double>(row) + 0.5); };

  std::string svg = SvgOpen(timeline.id, "timeline", height, timeline.title);
  double plot_h = height - kTop - kBottom;
  for (double v = x.lo; v <= x.hi + x.step / 1000; v += x.step) {
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>\n", sx(v), kTop,
                       kTop + plot_h);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", sx(v), kTop + plot_h + 16, Tick(v));
  }
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", kLeft, kTop,
                     plot_w, plot_h);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kLeft + plot_w / 2, height - 8,
                     EscapeXml(timeline.x_label));
  for (size_t row = 0; row < timeline.rows.size(); ++row) {
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 6, row_y(row) + 4,
                       EscapeXml(timeline.rows[row]));
  }
  for (const TimelineSpan& span : timeline.spans) {
    svg += fmt::format(
        "<rect class=\"span\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" rx=\"3\" fill=\"#cfe0f3\" "
        "stroke=\"#1f77b4\"><title>{}</title></rect>\n",
        sx(span.start), row_y(span.row) - 9, std::max(2.0, sx(span.end) - sx(span.start)), 18, EscapeXml(span.label));
  }
  for (const TimelineMark& mark : timeline.marks) {
    svg += fmt::format(
        "<circle class=\"mark{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\" stroke=\"white\"><title>{}</title></circle>\n",
        mark.failure ? " failure" : "", sx(mark.x), row_y(mark.row), mark.failure ? 7 : 4,
        mark.failure ? "#d62728" : "#2ca02c", EscapeXml(mark.label));
  }
  // Legend.
  double lx = kLeft + plot_w + 14;
  svg += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"#2ca02c\"/><text x=\"{}\" y=\"{}\">worker ended</text>\n", lx,
                     kTop + 8, lx + 10, kTop + 12);
  svg += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"6\" fill=\"#d62728\"/><text x=\"{}\" y=\"{}\">failure</text>\n", lx,
                     kTop + 28, lx + 10, kTop + 32);
  return svg + "</svg>\n";
}

Status CheckSvgPlotPath(const std::string& value, const std::string& example) {
  if (ToLower(value).ends_with(".svg")) return Status::Ok();
  return UsageError("--plot writes SVG: name the file *.svg, not '" + value + "'", "write " + example);
}

}  // namespace primus
