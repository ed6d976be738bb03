#include "benchmark/gemm_request.h"

#include <gtest/gtest.h>

namespace primus::benchmark {
namespace {

TEST(GemmRequestTest, DefaultsDependOnTheDevice) {
  auto request = ParseGemmRequest({});
  ASSERT_TRUE(request.ok());
  GemmPlan gpu = PlanGemm(*request, true);
  ASSERT_EQ(gpu.shapes.size(), 1u);
  EXPECT_EQ(gpu.shapes[0].m, 8192);
  EXPECT_EQ(gpu.shapes[0].k, 8192);
  EXPECT_EQ(gpu.iters, 100);
  EXPECT_EQ(gpu.warmup, 20);
  EXPECT_EQ(gpu.dtype, GemmDtype::kBf16);
  GemmPlan cpu = PlanGemm(*request, false);
  EXPECT_EQ(cpu.shapes[0].m, 1024);
  EXPECT_EQ(cpu.iters, 10);
}

TEST(GemmRequestTest, NAndKDefaultToM) {
  auto request = ParseGemmRequest({"-M", "4096", "--K", "1024", "--trans-a", "--dtype", "fp8"});
  ASSERT_TRUE(request.ok()) << request.error().message;
  GemmPlan plan = PlanGemm(*request, true);
  EXPECT_EQ(plan.shapes[0].m, 4096);
  EXPECT_EQ(plan.shapes[0].n, 4096);
  EXPECT_EQ(plan.shapes[0].k, 1024);
  EXPECT_TRUE(plan.shapes[0].trans_a);
  EXPECT_FALSE(plan.shapes[0].trans_b);
  EXPECT_EQ(plan.dtype, GemmDtype::kFp8);
}

TEST(GemmRequestTest, SweepAndDuration) {
  auto request = ParseGemmRequest({"--sweep", "-M", "1024", "--duration", "2.5"});
  ASSERT_TRUE(request.ok());
  GemmPlan plan = PlanGemm(*request, true);
  ASSERT_EQ(plan.shapes.size(), 3u);
  EXPECT_EQ(plan.shapes[2].n, 1024);
  EXPECT_EQ(plan.iters, 0);
  EXPECT_DOUBLE_EQ(plan.duration_s, 2.5);
}

TEST(GemmRequestTest, BadInputNamesTheFlag) {
  auto dtype = ParseGemmRequest({"--dtype", "bf61"});
  ASSERT_FALSE(dtype.ok());
  EXPECT_EQ(dtype.error().code, ExitCode::kUsage);
  EXPECT_NE(dtype.error().message.find("did you mean 'bf16'"), std::string::npos) << dtype.error().message;
  auto size = ParseGemmRequest({"-M", "0"});
  ASSERT_FALSE(size.ok());
  EXPECT_NE(size.error().message.find("-M"), std::string::npos);
  EXPECT_FALSE(ParseGemmRequest({"--iters", "5", "--duration", "1"}).ok());
  EXPECT_FALSE(ParseGemmRequest({"--sweep", "-N", "128"}).ok());
  auto plot = ParseGemmRequest({"--plot", "out.png"});
  ASSERT_FALSE(plot.ok());
  EXPECT_NE(plot.error().message.find("SVG"), std::string::npos);
  EXPECT_FALSE(ParseGemmRequest({"--bogus"}).ok());
  EXPECT_FALSE(ParseGemmRequest({"--device", "tpu"}).ok());
  EXPECT_FALSE(ParseGemmRequest({"stray"}).ok());
}

TEST(GemmRequestTest, ShapeListAndOutputFile) {
  auto request = ParseGemmRequest({"--shape", "attn_qkv.fwd=12288x2048x4096:TN", "--shape=64x32x16", "--output-file",
                                   "out/gemm.csv", "--append"});
  ASSERT_TRUE(request.ok()) << request.error().Format();
  GemmPlan plan = PlanGemm(*request, false);
  ASSERT_EQ(plan.shapes.size(), 2u);
  EXPECT_EQ(plan.shapes[0].name, "attn_qkv.fwd");
  EXPECT_EQ(plan.shapes[0].m, 12288);
  EXPECT_EQ(plan.shapes[0].k, 4096);
  EXPECT_TRUE(plan.shapes[0].trans_a);
  EXPECT_FALSE(plan.shapes[0].trans_b);
  EXPECT_EQ(plan.shapes[0].Describe(), "attn_qkv.fwd 12288x2048x4096 TN");
  EXPECT_EQ(plan.shapes[1].Describe(), "64x32x16 NN");
  EXPECT_EQ(GemmShapeArgument(plan.shapes[0]), "attn_qkv.fwd=12288x2048x4096:TN");
  EXPECT_EQ(request->output_file, "out/gemm.csv");
  EXPECT_TRUE(request->append);

  for (const char* bad : {"12x12", "12x12x0", "a=1x2x3:XN", "=1x2x3"}) {
    auto shape = ParseGemmRequest({"--shape", bad});
    ASSERT_FALSE(shape.ok()) << bad;
    EXPECT_NE(shape.error().message.find("--shape '"), std::string::npos) << shape.error().message;
  }
  auto mixed = ParseGemmRequest({"--shape", "8x8x8", "-M", "16"});
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.error().message.find("-M cannot be given with it"), std::string::npos);
  auto format = ParseGemmRequest({"--output-file", "gemm.txt"});
  ASSERT_FALSE(format.ok());
  EXPECT_NE(format.error().message.find("--output-file gemm.txt"), std::string::npos);
  EXPECT_FALSE(ParseGemmRequest({"--append"}).ok());
}

TEST(GemmRequestTest, JsonAndCsvOnStdoutOutputIsAFile) {
  auto json = ParseGemmRequest({"--json", "--output", "gemm.jsonl"});
  ASSERT_TRUE(json.ok()) << json.error().Format();
  EXPECT_EQ(json->output, ReportFormat::kJson);
  EXPECT_EQ(json->output_file, "gemm.jsonl");
  EXPECT_TRUE(json->warnings.empty());
  auto csv = ParseGemmRequest({"--csv"});
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ(csv->output, ReportFormat::kCsv);
  auto table = ParseGemmRequest({});
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(table->output, ReportFormat::kTable);
  EXPECT_TRUE(table->output_file.empty());
  auto bad = ParseGemmRequest({"--output", "gemm.txt"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("--output gemm.txt"), std::string::npos) << bad.error().message;
}

TEST(GemmRequestTest, TheOldFormatSpellingStillWorksWithANote) {
  for (auto [word, format] : {std::pair{"json", ReportFormat::kJson}, std::pair{"CSV", ReportFormat::kCsv},
                              std::pair{"table", ReportFormat::kTable}}) {
    auto request = ParseGemmRequest({"--output", word});
    ASSERT_TRUE(request.ok()) << word;
    EXPECT_EQ(request->output, format) << word;
    EXPECT_TRUE(request->output_file.empty()) << word;
    ASSERT_EQ(request->warnings.size(), 1u) << word;
    EXPECT_NE(request->warnings[0].find(std::string("--output ") + word + " is deprecated: use "), std::string::npos)
        << request->warnings[0];
  }
  auto json = ParseGemmRequest({"--output=json"});
  ASSERT_TRUE(json.ok());
  EXPECT_NE(json->warnings.at(0).find("use --json"), std::string::npos) << json->warnings[0];
}

}  // namespace
}  // namespace primus::benchmark
