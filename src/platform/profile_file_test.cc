#include "platform/profile_file.h"

#include <gtest/gtest.h>

#include "platform/builtin_profiles.h"

namespace primus::platform {
namespace {

TEST(ProfileFileTest, ParsesAssignmentsCommentsAndQuotes) {
  Diagnostics diagnostics;
  ProfileFile file = ParseProfile(
      "# a header\n"
      "\n"
      "HSA_NO_SCRATCH_RECLAIM=1   # keep scratch\n"
      "export NCCL_DEBUG=WARN\n"
      "NCCL_TELEMETRY_LOG_PATH=\"/tmp/a b # not a comment\"  # the path\n"
      "NCCL_IB_HCA=^mlx5#1\n"
      "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n"
      "EMPTY=\n",
      "site.env", diagnostics);
  EXPECT_TRUE(diagnostics.warnings().empty());
  ASSERT_EQ(file.settings.size(), 6u);
  EXPECT_EQ(file.settings[0].name, "HSA_NO_SCRATCH_RECLAIM");
  EXPECT_EQ(file.settings[0].value, "1");
  EXPECT_EQ(file.settings[0].comment, "keep scratch");
  EXPECT_EQ(file.settings[0].line, 3);
  EXPECT_EQ(file.settings[1].name, "NCCL_DEBUG");
  EXPECT_EQ(file.settings[2].value, "/tmp/a b # not a comment");
  EXPECT_EQ(file.settings[2].comment, "the path");
  EXPECT_EQ(file.settings[3].value, "^mlx5#1");  // '#' starts a comment only after a blank
  EXPECT_EQ(file.settings[4].value, "expandable_segments:True");
  EXPECT_EQ(file.settings[5].value, "");
}

TEST(ProfileFileTest, MalformedLinesAreSkippedWithFileAndLine) {
  Diagnostics diagnostics;
  ProfileFile file = ParseProfile("GOOD=1\nthis is not an assignment\n2BAD=x\nQUOTE=\"open\nOK=2\n",
                                  "/home/u/.config/primus/profiles/base.env", diagnostics);
  ASSERT_EQ(file.settings.size(), 2u);
  EXPECT_EQ(file.settings[1].name, "OK");
  ASSERT_EQ(diagnostics.warnings().size(), 3u);
  EXPECT_NE(diagnostics.warnings()[0].find("/home/u/.config/primus/profiles/base.env:2"), std::string::npos);
  EXPECT_NE(diagnostics.warnings()[1].find("base.env:3"), std::string::npos);
  EXPECT_NE(diagnostics.warnings()[2].find("base.env:4"), std::string::npos);
}

TEST(ProfileFileTest, VariableNames) {
  EXPECT_TRUE(IsVariableName("NCCL_IB_HCA"));
  EXPECT_TRUE(IsVariableName("_x1"));
  EXPECT_FALSE(IsVariableName("1X"));
  EXPECT_FALSE(IsVariableName("A-B"));
  EXPECT_FALSE(IsVariableName(""));
}

// The shipped profiles parse cleanly, and every value says where it comes from.
TEST(ProfileFileTest, EveryShippedSettingHasAComment) {
  ASSERT_FALSE(BuiltinProfileFiles().empty());
  for (const BuiltinProfileFile& builtin : BuiltinProfileFiles()) {
    Diagnostics diagnostics;
    ProfileFile file = ParseProfile(builtin.text, std::string(builtin.path), diagnostics);
    EXPECT_TRUE(diagnostics.warnings().empty()) << builtin.path;
    EXPECT_FALSE(file.settings.empty()) << builtin.path;
    for (const ProfileSetting& setting : file.settings) {
      EXPECT_FALSE(setting.comment.empty()) << builtin.path << ":" << setting.line;
      EXPECT_EQ(setting.name.find("VISIBLE_DEVICES"), std::string::npos)
          << builtin.path << ": profiles never choose the visible GPUs";
    }
  }
}

}  // namespace
}  // namespace primus::platform
