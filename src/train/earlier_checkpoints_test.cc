#include "train/earlier_checkpoints.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <utime.h>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::train {
namespace {

void Touch(const std::string& path, time_t when) {
  ASSERT_TRUE(MakeDirs(DirName(path)).ok());
  ASSERT_TRUE(WriteFileAtomic(path, "x").ok());
  utimbuf times{when, when};
  ASSERT_EQ(::utime(path.c_str(), &times), 0);
}

TEST(EarlierCheckpointsTest, TheNewestEarlierRunOfTheSameExperimentWins) {
  ScopedTempDir workspace("earlier");
  const std::string ws = workspace.path();
  Touch(ws + "/gpt_20261101_100000/checkpoints/step_50.pt", 1000);
  Touch(ws + "/gpt_20261101_100000/checkpoints/step_100.pt", 2000);
  Touch(ws + "/gpt_20261102_100000/checkpoints/step_30.pt", 3000);   // newer, though fewer steps
  Touch(ws + "/gpt_20261102_100000/metadata.json", 3000);
  ASSERT_TRUE(WriteFileAtomic(ws + "/gpt_20261102_100000/metadata.json", R"({"status": "interrupted"})").ok());
  Touch(ws + "/gpt_20261102_100000/checkpoints/step_30.pt.tmp", 4000);
  Touch(ws + "/gpt-other_20261103_100000/checkpoints/step_90.pt", 5000);  // another experiment
  Touch(ws + "/gptx_20261103_100000/checkpoints/step_90.pt", 5000);       // another name
  ASSERT_TRUE(MakeDirs(ws + "/gpt_20261104_100000/checkpoints").ok());   // this run: empty
  // The newest of all, but it finished: its command run again trains again.
  Touch(ws + "/gpt_20261103_120000/checkpoints/step_200.pt", 6000);
  Touch(ws + "/gpt_20261103_120000/metadata.json", 6000);
  ASSERT_TRUE(WriteFileAtomic(ws + "/gpt_20261103_120000/metadata.json", R"({"status": "succeeded"})").ok());
  auto found = FindEarlierCheckpoints(ws, "gpt", ws + "/gpt_20261104_100000");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->dir, ws + "/gpt_20261102_100000/checkpoints");
  EXPECT_EQ(found->newest_step, 30);
}

TEST(EarlierCheckpointsTest, NothingToResumeAndLinksAreNotFollowed) {
  ScopedTempDir workspace("earlier-none");
  const std::string ws = workspace.path();
  EXPECT_FALSE(FindEarlierCheckpoints(ws, "gpt", ws + "/gpt_now"));
  EXPECT_FALSE(FindEarlierCheckpoints(ws + "/missing", "gpt", ws + "/gpt_now"));
  Touch(ws + "/elsewhere/checkpoints/step_10.pt", 1000);
  ASSERT_EQ(::symlink((ws + "/elsewhere").c_str(), (ws + "/gpt_20261101_100000").c_str()), 0);
  ASSERT_TRUE(MakeDirs(ws + "/gpt_20261102_100000").ok());
  ASSERT_EQ(::symlink((ws + "/elsewhere/checkpoints").c_str(), (ws + "/gpt_20261102_100000/checkpoints").c_str()), 0);
  EXPECT_FALSE(FindEarlierCheckpoints(ws, "gpt", ws + "/gpt_now")) << "a planted link is not a run of ours";
  // This run's own checkpoints are not an earlier run's.
  Touch(ws + "/gpt_20261103_100000/checkpoints/step_10.pt", 1000);
  EXPECT_FALSE(FindEarlierCheckpoints(ws, "gpt", ws + "/gpt_20261103_100000"));
}

}  // namespace
}  // namespace primus::train
