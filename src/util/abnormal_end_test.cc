#include "util/abnormal_end.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace primus {
namespace {

TEST(AbnormalEndTest, ARecordFinishedTheNormalWayIsNotRunAgain) {
  int runs = 0;
  { AbnormalEndRecord record([&](const std::string&) { ++runs; }); }
  FinishRecordsAbnormally("later");
  EXPECT_EQ(runs, 0);
}

TEST(AbnormalEndTest, AnExceptionUnwindingThroughTheGuardFinishesTheRecord) {
  std::string said;
  try {
    AbnormalEndRecord record([&](const std::string& why) { said = why; });
    throw std::runtime_error("escaped");
  } catch (const std::exception&) {
  }
  EXPECT_NE(said.find("an exception escaped"), std::string::npos) << said;
}

TEST(AbnormalEndTest, TheLastResortFinishesEveryOpenRecordOnceNewestFirst) {
  std::string order;
  AbnormalEndRecord first([&](const std::string&) { order += "1"; });
  AbnormalEndRecord second([&](const std::string&) { order += "2"; });
  FinishRecordsAbnormally("why");
  FinishRecordsAbnormally("again");
  EXPECT_EQ(order, "21");
}

}  // namespace
}  // namespace primus
