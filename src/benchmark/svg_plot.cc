#include "benchmark/svg_plot.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "util/files.h"
#include "util/strings.h"

namespace primus::benchmark {
namespace {

constexpr double kWidth = 900, kHeight = 500;
constexpr double kLeft = 80, kRight = 260, kTop = 50, kBottom = 60;  // the legend sits on the right
const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string Escape(const std::string& text) {
  return ReplaceAll(ReplaceAll(ReplaceAll(text, "&", "&amp;"), "<", "&lt;"), ">", "&gt;");
}

// A "nice" step (1, 2 or 5 times a power of ten) giving about `ticks` ticks.
double NiceStep(double span, int ticks) {
  double raw = span / ticks;
  double power = std::pow(10, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= factor * power) return factor * power;
  }
  return 10 * power;
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
  double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto sx = [&](double x) { return kLeft + ((spec.log2_x ? std::log2(x) : x) - x_min) / (x_max - x_min) * plot_w; };
  auto sy = [&](double y) { return kTop + plot_h - y / y_top * plot_h; };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"28\" font-size=\"16\" text-anchor=\"middle\">{3}</text>\n",
      kWidth, kHeight, kLeft + plot_w / 2, Escape(spec.title));
  // Axes, grid and ticks.
  for (double y = 0; y <= y_top + y_step / 2; y += y_step) {
    svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", kLeft, sy(y), kLeft + plot_w, sy(y));
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n", kLeft - 6, sy(y) + 4, y);
  }
  int first = static_cast<int>(std::ceil(x_min)), last = static_cast<int>(std::floor(x_max));
  int every = std::max(1, (last - first + 1) / 12);
  for (int e = first; spec.log2_x && e <= last; e += every) {
    double x = std::ldexp(1.0, e);
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>\n", sx(x), kTop, kTop + plot_h);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", sx(x), kTop + plot_h + 18,
                       ByteSizeLabel(x));
  }
  if (!spec.log2_x) {
    double x_step = NiceStep(x_max - x_min, 8);
    for (double x = std::ceil(x_min / x_step) * x_step; x <= x_max + x_step / 1000; x += x_step) {
      svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>\n", sx(x), kTop,
                         kTop + plot_h);
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:g}</text>\n", sx(x), kTop + plot_h + 18, x);
    }
  }
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n", kLeft, kTop,
                     plot_w, plot_h);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kLeft + plot_w / 2, kHeight - 15,
                     Escape(spec.x_label));
  svg += fmt::format("<text x=\"20\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 20 {0})\">{1}</text>\n",
                     kTop + plot_h / 2, Escape(spec.y_label));
  // Series and legend.
  for (size_t i = 0; i < spec.series.size(); ++i) {
    const PlotSeries& series = spec.series[i];
    const char* color = kColors[i % (sizeof(kColors) / sizeof(kColors[0]))];
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
    double ly = kTop + 10 + 20 * static_cast<double>(i);
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"2\"/>\n",
                       kLeft + plot_w + 15, ly, kLeft + plot_w + 40, color);
    svg += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", kLeft + plot_w + 45, ly + 4, Escape(series.name));
  }
  return svg + "</svg>\n";
}

Status WriteSvgPlot(const std::string& path, const PlotSpec& spec) { return WriteFileAtomic(path, RenderSvgPlot(spec), kUserOutputMode); }

std::string RenderSvgPanels(const std::vector<PlotSpec>& panels) {
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\">\n", kWidth,
      kHeight * static_cast<double>(panels.size()));
  for (size_t i = 0; i < panels.size(); ++i) {
    // A nested <svg> is positioned by its x/y attributes.
    std::string panel = RenderSvgPlot(panels[i]);
    panel.insert(4, fmt::format(" x=\"0\" y=\"{}\"", kHeight * static_cast<double>(i)));
    svg += panel;
  }
  return svg + "</svg>\n";
}

}  // namespace primus::benchmark
