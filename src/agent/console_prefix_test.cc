#include "agent/console_prefix.h"

#include <gtest/gtest.h>

namespace primus::agent {
namespace {

PrefixFields Fields() { return {"node7", 13, 5, 1, "err"}; }

TEST(ConsolePrefixTest, RendersTheDefaultTemplate) {
  auto prefix = ConsolePrefix::Parse("[{host}:{rank}] ");
  ASSERT_TRUE(prefix.ok());
  EXPECT_EQ(prefix->Render(Fields()), "[node7:13] ");
}

TEST(ConsolePrefixTest, RendersEveryFieldAndLiteralBraces) {
  auto prefix = ConsolePrefix::Parse("{{{node_rank}/{local_rank}}} {stream}|");
  ASSERT_TRUE(prefix.ok());
  EXPECT_EQ(prefix->Render(Fields()), "{1/5} err|");
}

TEST(ConsolePrefixTest, EmptyTemplateRendersNothing) {
  auto prefix = ConsolePrefix::Parse("");
  ASSERT_TRUE(prefix.ok());
  EXPECT_EQ(prefix->Render(Fields()), "");
}

TEST(ConsolePrefixTest, UnknownOrUnbalancedPlaceholdersAreUsageErrors) {
  for (const char* bad : {"[{hots}] ", "[{rank] ", "rank}"}) {
    auto prefix = ConsolePrefix::Parse(bad);
    ASSERT_FALSE(prefix.ok()) << bad;
    EXPECT_EQ(prefix.error().code, ExitCode::kUsage);
  }
  EXPECT_NE(ConsolePrefix::Parse("{hots}").error().message.find("{hots}"), std::string::npos);
}

}  // namespace
}  // namespace primus::agent
