#include "agent/launch_summary.h"

#include <gtest/gtest.h>

namespace primus::agent {
namespace {

TEST(LaunchSummaryTest, SingleNodeWithAFreePort) {
  LaunchSpec spec;
  spec.argv = {"python3", "train.py", "--lr", "3e-4 x"};
  spec.nproc_per_node = 2;
  EXPECT_EQ(DescribeLaunch(spec),
            "world: 1 node x 2 workers = world size 2; this node is node rank 0 (global ranks 0-1)\n"
            "master: 127.0.0.1, free port chosen at launch\n"
            "worker command (once per local rank): python3 train.py --lr '3e-4 x'\n");
}

// An elastic c10d job: no node rank or master port is known before the start.
TEST(LaunchSummaryTest, ElasticJobSaysWhereItMeetsAndWhenItStarts) {
  LaunchSpec spec;
  spec.argv = {"python3", "-u", "t.py"};
  spec.nproc_per_node = 8;
  spec.nnodes = 4;
  spec.min_nnodes = 2;
  spec.rendezvous = "c10d";
  spec.master_addr = "node0";
  spec.control_port = 29400;
  spec.last_call_timeout_s = 30;
  EXPECT_EQ(DescribeLaunch(spec),
            "world: 2 to 4 (elastic) nodes x 8 workers; node ranks are handed out as nodes join\n"
            "rendezvous: c10d; the agent on node0 that binds port 29400 first coordinates\n"
            "starts once 2 nodes joined and the last call (30 s) passed; a lost node restarts the survivors while "
            "at least 2 remain\n"
            "master: the coordinator's host, a free port chosen for each generation\n"
            "worker command (once per local rank): python3 -u t.py\n");
}

TEST(LaunchSummaryTest, OneWorker) {
  LaunchSpec spec;
  spec.argv = {"/bin/true"};
  spec.master_port = 29500;
  EXPECT_EQ(DescribeLaunch(spec).substr(0, 82),
            "world: 1 node x 1 worker = world size 1; this node is node rank 0 (global rank 0)\n");
}

TEST(LaunchSummaryTest, ConsoleStreamsRoleRunIdAndOmpRule) {
  LaunchSpec spec;
  spec.argv = {"python3", "-u", "t.py"};
  spec.nproc_per_node = 2;
  spec.master_port = 29500;
  spec.role = "trainer";
  spec.run_id = "job7";
  spec.local_ranks_filter = {0};
  spec.redirects.all = 3;
  spec.tee.by_local_rank = {{0, 2}};
  spec.omp_threads = LaunchSpec::OmpThreads::kTorchrun;
  EXPECT_EQ(DescribeLaunch(spec),
            "world: 1 node x 2 workers = world size 2; this node is node rank 0 (global ranks 0-1)\n"
            "master: 127.0.0.1:29500\n"
            "worker command (once per local rank): python3 -u t.py\n"
            "role: trainer\n"
            "run id: job7\n"
            "console shows local ranks: 0 (on every node)\n"
            "kept off the console (redirects; 1 stdout, 2 stderr, 3 both): 3; shown anyway (tee): 0:2; the log files "
            "keep everything\n"
            "OMP_NUM_THREADS: 1 where unset (torchrun's rule)\n");
}

TEST(LaunchSummaryTest, MultiNodeWithBinding) {
  LaunchSpec spec;
  spec.argv = {"/bin/true"};
  spec.nnodes = 4;
  spec.node_rank = 2;
  spec.nproc_per_node = 2;
  spec.master_addr = "10.0.0.1";
  spec.master_port = 29500;
  spec.placements = {{{0, 1, 2, 3, 8}, 5}, {}};
  std::string text = DescribeLaunch(spec);
  EXPECT_NE(text.find("world: 4 nodes x 2 workers = world size 8; this node is node rank 2 (global ranks 4-5)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("master: 10.0.0.1:29500\n"), std::string::npos);
  EXPECT_NE(text.find("  local rank 0: CPUs 0-3,8, OMP_NUM_THREADS=5\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  local rank 1: not bound"), std::string::npos);
}

}  // namespace
}  // namespace primus::agent
