#include "util/svg_chart.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus {
namespace {

size_t Count(const std::string& text, const std::string& word) {
  size_t count = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++count;
  return count;
}

TEST(SvgPlotTest, OneLinePerSeriesWithItsPointsAndEscapedText) {
  PlotSpec spec{"busbw <2 ranks> & more", "size", "GB/s", true,
                {{"all_reduce", {{8, 0.1}, {1024, 1.0}, {1 << 20, 10.0}}}, {"all_gather", {{8, 0.2}, {1 << 20, 5.0}}}}};
  std::string svg = RenderSvgPlot(spec);
  EXPECT_TRUE(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_TRUE(svg.ends_with("</svg>\n"));
  EXPECT_EQ(Count(svg, "<polyline"), 2u);
  EXPECT_EQ(Count(svg, "<circle"), 5u);
  EXPECT_NE(svg.find("busbw &lt;2 ranks&gt; &amp; more"), std::string::npos);
  EXPECT_NE(svg.find(">1M<"), std::string::npos) << "byte-size tick labels";
  ScopedTempDir dir("plot");
  ASSERT_TRUE(WriteSvgPlot(dir.path() + "/p.svg", spec).ok());
  EXPECT_EQ(*ReadFile(dir.path() + "/p.svg"), svg);
}

TEST(SvgPlotTest, EmptyAndFlatDataStillDraw) {
  EXPECT_NE(RenderSvgPlot({"t", "x", "y", true, {}}).find("</svg>"), std::string::npos);
  EXPECT_NE(RenderSvgPlot({"t", "x", "y", true, {{"zero", {{8, 0}, {16, 0}}}}}).find("<polyline"), std::string::npos);
}

TEST(SvgPlotTest, ByteSizeLabels) {
  EXPECT_EQ(ByteSizeLabel(8), "8");
  EXPECT_EQ(ByteSizeLabel(1024), "1K");
  EXPECT_EQ(ByteSizeLabel(128 << 20), "128M");
  EXPECT_EQ(ByteSizeLabel(double{8} * (1 << 30)), "8G");
}

}  // namespace
}  // namespace primus::benchmark

namespace primus::benchmark {
namespace {

TEST(SvgPlotTest, LinearAxisHasNumberedTicksAndPanelsStack) {
  PlotSpec loss{"loss", "seconds", "loss", false, {{"loss", {{0, 5.5}, {10, 3.0}, {20, 2.3}}}}};
  std::string svg = RenderSvgPlot(loss);
  for (const char* tick : {">0</text>", ">10</text>", ">20</text>"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick << "\n" << svg;
  }
  PlotSpec rate{"throughput", "seconds", "tokens/s", false, {{"tokens/s", {{0, 100}, {20, 200}}}}};
  std::string both = RenderSvgPanels({loss, rate});
  EXPECT_NE(both.find("height=\"1000\""), std::string::npos);
  EXPECT_NE(both.find("<svg x=\"0\" y=\"500\""), std::string::npos) << both.substr(0, 400);
  EXPECT_NE(both.find(">throughput</text>"), std::string::npos);
}

// Occurrences that do not overlap.
size_t CountApart(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++count;
  return count;
}

TEST(SvgChartTest, ShortSeriesAreDrawnPointForPoint) {
  LineChart chart{"loss-chart", "loss", "step", "loss", {{"loss", {{1, 5.0}, {2, 4.0}, {3, 3.5}}}}, {}, false};
  std::string svg = RenderLineChart(chart);
  EXPECT_NE(svg.find("id=\"loss-chart\""), std::string::npos);
  EXPECT_NE(svg.find("data-points=\"3\" data-source-points=\"3\""), std::string::npos) << svg;
  size_t points = svg.find(" points=\"", svg.find("<polyline")) + 1;
  std::string list = svg.substr(points + 8, svg.find('"', points + 8) - points - 8);
  EXPECT_EQ(CountApart(list, ","), 3u) << list;
}

// 100k steps: the page stays small, and the spikes stay visible.
TEST(SvgChartTest, LongSeriesAreDownsampledKeepingTheirExtremes) {
  std::vector<ChartPoint> points;
  for (int step = 1; step <= 100000; ++step) points.emplace_back(step, step == 54321 ? 50.0 : 3.0 + std::sin(step));
  std::vector<ChartPoint> drawn = Downsample(points);
  EXPECT_LE(drawn.size(), kMaxSeriesPoints);
  EXPECT_GE(drawn.size(), kMaxSeriesPoints - 2);
  EXPECT_EQ(drawn.front(), points.front());
  EXPECT_EQ(drawn.back(), points.back());
  EXPECT_TRUE(std::any_of(drawn.begin(), drawn.end(), [](const ChartPoint& p) { return p.second == 50.0; }));
  EXPECT_TRUE(std::is_sorted(drawn.begin(), drawn.end()));

  std::string svg = RenderLineChart({"c", "t", "x", "y", {{"loss", points}}, {}, false});
  EXPECT_NE(svg.find(fmt::format("data-points=\"{}\" data-source-points=\"100000\"", drawn.size())), std::string::npos);
  EXPECT_LT(svg.size(), 64u * 1024) << "a 100k-step series draws in tens of kilobytes";
}

// A restart late in the run is labelled to the left of its line: the label
// stays inside the plot instead of running into the legend.
TEST(SvgChartTest, AMarkerLabelStaysInsideThePlot) {
  LineChart chart{"tps", "throughput", "s", "tokens/s", {{"attempt 0", {{0, 1.0}, {10, 2.0}}}}, {}, false};
  chart.markers = {{1, "restart: attempt 1"}, {9.5, "restart: attempt 2"}};
  std::string svg = RenderLineChart(chart);
  auto text_element = [&](const std::string& label) {  // "<text ...>" of the label
    size_t end = svg.find(">" + label + "</text>");
    if (end == std::string::npos) return std::string();
    size_t start = svg.rfind("<text", end);
    return svg.substr(start, end - start);
  };
  EXPECT_NE(text_element("restart: attempt 1").find("text-anchor=\"start\""), std::string::npos) << svg;
  EXPECT_NE(text_element("restart: attempt 2").find("text-anchor=\"end\""), std::string::npos) << svg;
}

TEST(SvgChartTest, BoxChartSummarisesEachGroupAndBoundsItsDots) {
  std::vector<double> many(10000, 0.4);
  many[17] = 2.0;
  BoxChart chart{"step-time-chart", "step time per rank", "seconds", {{"rank 0", {0.4, 0.5, 0.6}}, {"rank 1", many}}};
  std::string svg = RenderBoxChart(chart);
  EXPECT_NE(svg.find("data-group=\"rank 0\" data-values=\"3\" data-median=\"0.5\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("data-group=\"rank 1\" data-values=\"10000\""), std::string::npos);
  EXPECT_LE(CountApart(svg, "<circle"), 3u + 200u);
}

TEST(SvgChartTest, EveryLabelIsText) {
  LineChart line{"x\"><script>", "<b>t</b>", "<i>", "y&", {{"<script>alert(1)</script>", {{0, 1}, {1, 2}}}},
                 {{0.5, "<img src=x onerror=alert(1)>"}}, true};
  BoxChart box{"b", "<t>", "<y>", {{"<rank>", {1, 2}}}};
  Timeline timeline{"t", "<t>", "<x>", {"<row>"}, {{0, 0, 1, "<span>"}}, {{0, 0.5, "<mark onclick=x>", true}}};
  StackedBarChart stacked{"s", "<t>", "<y>", {"<mark>"}, {{"<rank>", {1}, true}}};
  for (const std::string& svg :
       {RenderLineChart(line), RenderBoxChart(box), RenderTimeline(timeline), RenderStackedBarChart(stacked)}) {
    EXPECT_EQ(svg.find("<script"), std::string::npos) << svg;
    EXPECT_EQ(svg.find("<img"), std::string::npos) << svg;
    EXPECT_EQ(svg.find("<b>"), std::string::npos) << svg;
    EXPECT_EQ(svg.find("<rank>"), std::string::npos) << svg;
    EXPECT_EQ(svg.find("<mark"), std::string::npos) << svg;
  }
  EXPECT_NE(RenderLineChart(line).find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
}

TEST(SvgChartTest, StackedBarsCarryEachLayersValueAndMarkOne) {
  StackedBarChart chart{"parts", "seconds per step", "s", {"compute", "communication", "data"},
                        {{"rank 0", {0.1, 0.3, 0.0}, false}, {"rank 1", {0.38, 0.01, 0.01}, true}}};
  std::string svg = RenderStackedBarChart(chart);
  EXPECT_EQ(CountApart(svg, "class=\"bar\""), 2u);
  EXPECT_NE(svg.find("data-label=\"rank 1\" data-marked=\"1\"><rect data-layer=\"compute\" data-value=\"0.38\""),
            std::string::npos)
      << svg;
  EXPECT_EQ(CountApart(svg, "data-layer=\"data\""), 1u) << "a zero layer draws nothing";
  EXPECT_EQ(CountApart(svg, "data-marked"), 1u);
  // A thousand bars keep about 16 labels.
  StackedBarChart wide{"w", "w", "s", {"a"}, {}};
  for (int i = 0; i < 1000; ++i) wide.bars.push_back({"step " + std::to_string(i), {1.0}, false});
  EXPECT_LE(CountApart(RenderStackedBarChart(wide), "<text"), 16u + 1u + 10u) << "labels, the legend and the axis";
}

TEST(SvgChartTest, TimelineMarksFailuresApart) {
  Timeline timeline{"attempts", "attempts", "s", {"attempt 0", "attempt 1"},
                    {{0, 0, 40, "a0"}, {1, 60, 100, "a1"}},
                    {{0, 40, "rank 3: ended with exit code 1", true}, {1, 100, "rank 0: exited 0", false}}};
  std::string svg = RenderTimeline(timeline);
  EXPECT_EQ(CountApart(svg, "class=\"mark failure\""), 1u);
  EXPECT_EQ(CountApart(svg, "class=\"mark\""), 1u);
  EXPECT_EQ(CountApart(svg, "class=\"span\""), 2u);
}

TEST(SvgChartTest, PlotFlagMustNameAnSvgFile) {
  EXPECT_TRUE(CheckSvgPlotPath("out/TFLOPS.SVG", "--plot tflops.svg").ok());
  Status png = CheckSvgPlotPath("busbw.png", "--plot busbw.svg");
  ASSERT_FALSE(png.ok());
  EXPECT_EQ(png.error().code, ExitCode::kUsage);
  EXPECT_NE(png.error().message.find("not 'busbw.png'"), std::string::npos);
  EXPECT_EQ(png.error().hint, "write --plot busbw.svg");
}

}  // namespace
}  // namespace primus
