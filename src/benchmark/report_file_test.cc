#include "benchmark/report_file.h"

#include <gtest/gtest.h>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::benchmark {
namespace {

ReportDocument Sample() {
  ReportDocument doc;
  doc.title = "benchmark gemm";
  doc.settings = {"dtype: bf16"};
  doc.header = {"name", "tflops"};
  doc.rows = {{"attn|qkv", "1.5"}, {"with,comma", "2"}};
  doc.json = {{"results", 2}};
  doc.records = {{{"name", "a"}}, {{"name", "b"}}};
  return doc;
}

TEST(ReportFileTest, FormatFollowsTheName) {
  EXPECT_EQ(*ReportFileFormatFor("out/r.md", false, "--output-file"), ReportFileFormat::kMarkdown);
  EXPECT_EQ(*ReportFileFormatFor("R.CSV", false, "--output-file"), ReportFileFormat::kCsv);
  EXPECT_EQ(*ReportFileFormatFor("r.tsv", false, "--output-file"), ReportFileFormat::kTsv);
  EXPECT_EQ(*ReportFileFormatFor("r.jsonl", true, "--output-file"), ReportFileFormat::kJsonl);
  EXPECT_EQ(*ReportFileFormatFor("r.json", false, "--output-file"), ReportFileFormat::kJson);
  auto gz = ReportFileFormatFor("r.csv.gz", false, "--output-file");
  ASSERT_FALSE(gz.ok());
  EXPECT_EQ(gz.error().code, ExitCode::kUsage);
  EXPECT_NE(gz.error().hint.find("write r.csv and compress it"), std::string::npos);
  auto other = ReportFileFormatFor("r.txt", false, "--output-file");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("--output-file r.txt: the name must end in .md, .csv"), std::string::npos);
  EXPECT_FALSE(ReportFileFormatFor("r.json", true, "--output-file").ok()) << "a JSON document takes no appended rows";
}

TEST(ReportFileTest, EachFormat) {
  ReportDocument doc = Sample();
  EXPECT_EQ(FormatReportDocument(doc, ReportFileFormat::kMarkdown, false),
            "# benchmark gemm\n\n- dtype: bf16\n\n| name | tflops |\n|---|---|\n| attn\\|qkv | 1.5 |\n| with,comma | 2 |\n");
  EXPECT_EQ(FormatReportDocument(doc, ReportFileFormat::kCsv, false), "name,tflops\nattn|qkv,1.5\n\"with,comma\",2\n");
  EXPECT_EQ(FormatReportDocument(doc, ReportFileFormat::kTsv, true), "attn|qkv\t1.5\nwith,comma\t2\n");
  EXPECT_EQ(FormatReportDocument(doc, ReportFileFormat::kJsonl, false), "{\"name\":\"a\"}\n{\"name\":\"b\"}\n");
  EXPECT_EQ(FormatReportDocument(doc, ReportFileFormat::kJson, false), "{\n  \"results\": 2\n}\n");
}

TEST(ReportFileTest, AppendAddsRowsOnly) {
  ScopedTempDir dir("report");
  std::string path = dir.path() + "/sub/r.csv";
  ASSERT_TRUE(WriteReportFile(path, Sample(), ReportFileFormat::kCsv, true).ok());
  ASSERT_TRUE(WriteReportFile(path, Sample(), ReportFileFormat::kCsv, true).ok());
  EXPECT_EQ(*ReadFile(path), "name,tflops\nattn|qkv,1.5\n\"with,comma\",2\nattn|qkv,1.5\n\"with,comma\",2\n");
  ASSERT_TRUE(WriteReportFile(path, Sample(), ReportFileFormat::kCsv, false).ok());
  EXPECT_EQ(*ReadFile(path), "name,tflops\nattn|qkv,1.5\n\"with,comma\",2\n") << "without --append: replaced";
}

TEST(ReportFileTest, NodesOtherThanZeroGetTheirOwnFile) {
  EXPECT_EQ(NodeReportPath("out/gemm.md", 0), "out/gemm.md");
  EXPECT_EQ(NodeReportPath("out/gemm.md", 2), "out/gemm.node2.md");
  EXPECT_EQ(NodeReportPath("./rccl_report.csv", 1), "./rccl_report.node1.csv");
  EXPECT_EQ(NodeReportPath("dir.d/report", 3), "dir.d/report.node3");
}

}  // namespace
}  // namespace primus::benchmark
