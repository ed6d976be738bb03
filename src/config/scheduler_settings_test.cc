#include "config/scheduler_settings.h"

#include <gtest/gtest.h>

namespace primus::config {
namespace {

TEST(SchedulerSettingsTest, UnknownPlatformIsAUsageError) {
  Result<SchedulerSettings> found = DetectScheduler(Environment({}), "slurmm");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().code, ExitCode::kUsage);
  EXPECT_NE(found.error().hint.find("auto, slurm"), std::string::npos);
}

TEST(SchedulerSettingsTest, NothingDetectedInsideAnAgentsWorker) {
  Result<SchedulerSettings> found = DetectScheduler(
      Environment({{"LOCAL_RANK", "0"}, {"TORCHELASTIC_RUN_ID", "x"}, {"WORLD_SIZE", "2"}, {"RANK", "1"},
                   {"MASTER_ADDR", "10.0.0.1"}}),
      "auto");
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->scheduler, "");
  EXPECT_TRUE(found->settings.empty());
}

// Inside a container the Slurm variables are gone; the container runtime
// carries the requeue count as PRIMUS_SCHEDULER_RESTARTS (platform none).
TEST(SchedulerSettingsTest, RestartsCarriedIntoAContainerCount) {
  Result<SchedulerSettings> found = DetectScheduler(Environment({{"PRIMUS_SCHEDULER_RESTARTS", "2"}}), "none");
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->restart_count, 2);

  Result<SchedulerSettings> bad = DetectScheduler(Environment({{"PRIMUS_SCHEDULER_RESTARTS", "two"}}), "none");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ExitCode::kUnavailable);
  EXPECT_NE(bad.error().message.find("PRIMUS_SCHEDULER_RESTARTS=two"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace primus::config
