// Help, manuals and completion cover every command, and help fits in 100
// columns (docs/cli.md, "One style"): a mode or task added without them, or
// a help line grown too wide, fails here.
#include "cli/help.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "cli/completion.h"
#include "cli/man_page.h"
#include "runtime/runtime.h"
#include "tasks/task.h"
#include "util/strings.h"

namespace primus::cli {
namespace {

std::vector<std::string> Commands() {
  std::vector<std::string> names = runtime::RuntimeRegistry::Global().Names();
  for (const std::string& task : tasks::TaskRegistry::Global().Names()) names.push_back(task);
  return names;
}

void ExpectNarrow(const std::string& what, const std::string& text) {
  for (const std::string& line : Split(text, '\n')) {
    EXPECT_LE(line.size(), kHelpWidth) << what << " --help has a line of " << line.size() << " columns:\n" << line;
  }
}

TEST(HelpTest, EveryHelpPageFitsInAHundredColumns) {
  ExpectNarrow("primus-cli", OverviewHelp());
  std::vector<std::string> topics = Commands();
  ASSERT_GE(topics.size(), 15u) << "every mode and task registered";
  for (const char* builtin : {"torchrun", "config", "completion"}) topics.push_back(builtin);
  for (const std::string& topic : topics) {
    Result<std::string> help = TopicHelp(topic);
    ASSERT_TRUE(help.ok()) << topic << ": " << help.error().message;
    ExpectNarrow(topic, *help);
  }
}

TEST(HelpTest, EveryModeAndTaskHasAManPageAndCompletes) {
  std::vector<std::string> pages = ManPageNames();
  std::vector<std::string> top = Complete({""}).words;
  std::vector<std::string> names = Commands();
  for (const char* builtin : {"torchrun", "config", "completion"}) names.push_back(builtin);
  for (const std::string& name : names) {
    EXPECT_NE(std::find(pages.begin(), pages.end(), "primus-cli-" + name), pages.end()) << name << " has no man page";
    EXPECT_NE(std::find(top.begin(), top.end(), name), top.end()) << name << " is not completed";
    EXPECT_TRUE(ManPage("primus-cli-" + name).ok()) << name;
  }
}

}  // namespace
}  // namespace primus::cli
