#include "agent/endings_log.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "agent/failure_report.h"

namespace primus::agent {
namespace {

TEST(EndingsLogTest, OneStampedLinePerWorkerSayingHowItEnded) {
  std::vector<WorkerEnding> endings(4);
  endings[0] = {.rank = 0, .local_rank = 0, .pid = 10, .signal = SIGTERM, .stopped_by_agent = true, .ended_at = 1.5e9};
  endings[1] = {.rank = 1, .local_rank = 1, .pid = 11, .exit_code = 137, .signal = SIGKILL, .ended_at = 1.5e9};
  endings[2] = {.rank = 2, .local_rank = 2, .pid = 12, .exit_code = 3, .ended_at = 1.5e9};
  endings[3] = {.rank = 3, .local_rank = 3, .pid = 13, .hung = true, .ended_at = 1.5e9, .hang_timeout_s = 30};
  std::string text = FormatEndings(endings);
  EXPECT_NE(text.find(" O rank 0: stopped by the agent (SIGTERM) (local rank 0, pid 10)\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" E rank 1: ended with signal 9 (SIGKILL) (local rank 1, pid 11)\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" E rank 2: ended with exit code 3 (local rank 2, pid 12)\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" E rank 3: hung: no output and no heartbeat for 30 s"), std::string::npos) << text;
  // Each line starts with the rank logs' 26-character stamp.
  EXPECT_EQ(text.substr(0, 26), FormatTimestamp(1.5e9));
  EXPECT_EQ(text[26], ' ');
}

}  // namespace
}  // namespace primus::agent
