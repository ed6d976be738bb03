#include "benchmark/svg_plot.h"

#include <gtest/gtest.h>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::benchmark {
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

}  // namespace
}  // namespace primus::benchmark
