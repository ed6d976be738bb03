#include "cli/man_page.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace primus::cli {
namespace {

TEST(ManPageTest, OnePagePerModeAndTask) {
  std::vector<std::string> names = ManPageNames();
  for (const char* name : {"primus-cli", "primus-cli-direct", "primus-cli-slurm", "primus-cli-train", "primus-cli-benchmark"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

TEST(ManPageTest, SectionsAndOptionsFromTheTables) {
  auto page = ManPage("primus-cli-benchmark");
  ASSERT_TRUE(page.ok());
  for (const char* section : {".TH PRIMUS-CLI-BENCHMARK 1", ".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH OPTIONS", ".SS gemm"}) {
    EXPECT_NE(page->find(section), std::string::npos) << section;
  }
  EXPECT_NE(page->find("\\fB\\-\\-dtype\\fR \\fIbf16|fp16|fp32|tf32|fp8\\fR"), std::string::npos);
  auto top = ManPage("primus-cli");
  ASSERT_TRUE(top.ok());
  EXPECT_NE(top->find(".SH EXIT STATUS"), std::string::npos);
  EXPECT_NE(top->find("\\fB\\-\\-log\\-level\\fR"), std::string::npos);
}

TEST(ManPageTest, UnknownPageIsAUsageErrorWithASuggestion) {
  auto page = ManPage("primus-cli-trian");
  ASSERT_FALSE(page.ok());
  EXPECT_NE(page.error().message.find("did you mean 'primus-cli-train'?"), std::string::npos) << page.error().message;
}

}  // namespace
}  // namespace primus::cli
