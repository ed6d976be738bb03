#include "runtime/bad_node_relaunch.h"

#include <gtest/gtest.h>

namespace primus::runtime {
namespace {

TEST(BadNodeRelaunchTest, RunsAgainWithoutTheBadHostWhileSparesRemain) {
  RelaunchPlan plan;
  plan.nodes = 2;
  plan.pool = {"n1", "n2", "n3", "n4"};
  plan.max_relaunches = 3;
  std::vector<std::pair<std::vector<std::string>, int>> runs;  // excluded, spare
  auto code = RunExcludingBadNodes(plan, [&](const std::vector<std::string>& excluded, int spare, int) -> Result<StepEnd> {
    runs.emplace_back(excluded, spare);
    if (runs.size() == 1) return StepEnd{7, {"n2"}};
    if (runs.size() == 2) return StepEnd{7, {"n3"}};
    return StepEnd{0, {}};
  });
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 0);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].second, 2);
  EXPECT_EQ(runs[1].first, std::vector<std::string>{"n2"});
  EXPECT_EQ(runs[1].second, 1);
  EXPECT_EQ(runs[2].first, (std::vector<std::string>{"n2", "n3"}));
  EXPECT_EQ(runs[2].second, 0);
}

TEST(BadNodeRelaunchTest, EndsWhenNoSpareOrNoRestartIsLeft) {
  RelaunchPlan plan;
  plan.nodes = 2;
  plan.pool = {"n1", "n2", "n3"};
  plan.max_relaunches = 5;
  int runs = 0;
  auto always_bad = [&](const std::vector<std::string>& excluded, int, int) -> Result<StepEnd> {
    ++runs;
    return StepEnd{5, {excluded.empty() ? "n1" : "n3"}};
  };
  auto code = RunExcludingBadNodes(plan, always_bad);
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 5);
  EXPECT_EQ(runs, 2) << "after n1 and n3 only n2 is left for a 2-node job";
  plan.pool = {"n1", "n2", "n3", "n4"};
  plan.max_relaunches = 0;
  runs = 0;
  EXPECT_EQ(*RunExcludingBadNodes(plan, always_bad), 5);
  EXPECT_EQ(runs, 1) << "no restart is left";
  // A failure that names no bad node ends at once, with its code.
  runs = 0;
  plan.max_relaunches = 5;
  auto failed = RunExcludingBadNodes(plan, [&](const std::vector<std::string>&, int, int) -> Result<StepEnd> {
    ++runs;
    return StepEnd{9, {}};
  });
  EXPECT_EQ(*failed, 9);
  EXPECT_EQ(runs, 1);
}

TEST(BadNodeRelaunchTest, WithNoSpareLeftABatchJobGoesOnElsewhere) {
  RelaunchPlan plan;  // a batch job of 2 nodes in its allocation of 2
  plan.nodes = 2;
  plan.pool = {"n1", "n2"};
  plan.max_relaunches = 3;
  plan.restarts_before = 1;
  std::vector<std::string> went_on_without;
  int went_on_as = -1;
  plan.continue_elsewhere = [&](const std::vector<std::string>& excluded, int restart) -> Result<int> {
    went_on_without = excluded;
    went_on_as = restart;
    return 5;
  };
  std::vector<int> spares;
  auto code = RunExcludingBadNodes(plan, [&](const std::vector<std::string>&, int spare, int) -> Result<StepEnd> {
    spares.push_back(spare);
    return StepEnd{5, {"n2"}};
  });
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 5);
  EXPECT_EQ(spares, std::vector<int>{1}) << "the agents may leave a node out: the job has somewhere to go";
  EXPECT_EQ(went_on_without, std::vector<std::string>{"n2"});
  EXPECT_EQ(went_on_as, 2) << "the scheduler's restart counts before ours";
  // Restarts count the scheduler's: with max 1 and one made, none is left.
  plan.max_relaunches = 1;
  went_on_as = -1;
  code = RunExcludingBadNodes(plan, [&](const std::vector<std::string>&, int, int) -> Result<StepEnd> {
    return StepEnd{5, {"n2"}};
  });
  EXPECT_EQ(*code, 5);
  EXPECT_EQ(went_on_as, -1);
}

TEST(BadNodeRelaunchTest, WithoutAPoolTheSchedulerFindsNodes) {
  RelaunchPlan plan;  // srun outside an allocation
  plan.nodes = 2;
  plan.max_relaunches = 1;
  std::vector<int> spares;
  auto code = RunExcludingBadNodes(plan, [&](const std::vector<std::string>& excluded, int spare, int) -> Result<StepEnd> {
    spares.push_back(spare);
    return excluded.empty() ? StepEnd{5, {"n2"}} : StepEnd{0, {}};
  });
  EXPECT_EQ(*code, 0);
  EXPECT_EQ(spares, (std::vector<int>{1, 1}));
  EXPECT_EQ(SpareNodesOption(2), (std::vector<std::string>{"--set", "direct.spare_nodes=2"}));
}

}  // namespace
}  // namespace primus::runtime
