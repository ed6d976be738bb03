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

// Every page ends in examples of whole command lines, and a task with
// subtask pages (benchmark gemm --help) shows that subtask alone.
TEST(HelpTest, EveryHelpPageHasExamplesAndSubtaskPagesAreScoped) {
  std::vector<std::string> topics = Commands();
  for (const char* builtin : {"torchrun", "config", "completion"}) topics.push_back(builtin);
  for (const std::string& topic : topics) {
    Result<std::string> help = TopicHelp(topic);
    ASSERT_TRUE(help.ok()) << topic;
    bool examples = help->find("\nExamples:\n") != std::string::npos || help->find("\nExample:\n") != std::string::npos ||
                    help->find("\nexamples:\n") != std::string::npos || help->find("\nExample: ") != std::string::npos;
    EXPECT_TRUE(examples) << topic << " --help has no examples:\n" << *help;
  }
  for (const std::string& name : tasks::TaskRegistry::Global().Names()) {
    const tasks::Task* task = tasks::TaskRegistry::Global().Find(name);
    for (const std::string& subtask : task->subtasks()) {
      std::string page = task->subtask_help(subtask);
      if (page.empty()) continue;
      ExpectNarrow(name + " " + subtask, page);
      EXPECT_NE(page.find(name + " " + subtask), std::string::npos) << page;
      EXPECT_NE(page.find("Example"), std::string::npos) << name << " " << subtask << " has no example";
      for (const std::string& other : task->subtasks()) {
        if (other == subtask || other.find(subtask) != std::string::npos || subtask.find(other) != std::string::npos) continue;
        EXPECT_EQ(page.find(" " + other + " options:"), std::string::npos) << name << " " << subtask << " shows " << other;
      }
    }
  }
  const tasks::Task* benchmark = tasks::TaskRegistry::Global().Find("benchmark");
  ASSERT_NE(benchmark, nullptr);
  std::string gemm = benchmark->subtask_help("gemm");
  EXPECT_EQ(gemm.find("--op"), std::string::npos) << "comm's options are not gemm's:\n" << gemm;
  EXPECT_EQ(benchmark->subtask_help("rccl").find("not here"), std::string::npos) << "refused flags are not advertised";
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
