#include "agent/launch_view.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace primus::agent {
namespace {

TEST(LaunchViewTest, TheJobViewShapeWithThisNodesWorkers) {
  LaunchView view;
  view.run_id = "r1";
  view.host = "host1";
  view.state = "running";
  view.nnodes = 2;
  view.world_size = 4;
  view.generation = 1;
  view.restarts = 1;
  view.workers = {{0, 0, getpid(), true}, {1, 1, 999999999, false}};
  nlohmann::json json = LaunchViewJson(view);
  EXPECT_EQ(json["format"], "primus-job-telemetry/1");
  EXPECT_EQ(json["job"]["run_id"], "r1");
  EXPECT_EQ(json["job"]["coordinator"], "host1");
  EXPECT_EQ(json["job"]["state"], "running");
  EXPECT_EQ(json["job"]["nnodes"], 2);
  EXPECT_EQ(json["job"]["world_size"], 4);
  EXPECT_EQ(json["job"]["generation"], 1);
  EXPECT_EQ(json["job"]["restarts"], 1);
  EXPECT_GT(json["job"]["time"].get<double>(), 1.7e9);
  ASSERT_EQ(json["nodes"].size(), 1u);
  const nlohmann::json& node = json["nodes"][0];
  EXPECT_EQ(node["node_rank"], 0);
  EXPECT_EQ(node["host"], "host1");
  ASSERT_EQ(node["workers"].size(), 2u);
  EXPECT_EQ(node["workers"][0]["pid"], getpid());
  EXPECT_EQ(node["workers"][0]["state"], "running");  // this test, reading its own stat
  EXPECT_EQ(node["workers"][1]["rank"], 1);
  EXPECT_EQ(node["workers"][1]["local_rank"], 1);
  EXPECT_EQ(node["workers"][1]["state"], "exited");
}

TEST(LaunchViewTest, OnlyNodeZeroNamesItselfTheCoordinator) {
  LaunchView view;
  view.node_rank = 1;
  EXPECT_FALSE(LaunchViewJson(view)["job"].contains("coordinator"));
}

TEST(LaunchViewTest, ProcessStatesInWords) {
  pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  ASSERT_GT(child, 0);
  // Asleep in pause() once it got there.
  std::string state;
  for (int i = 0; i < 200 && state != "sleeping"; ++i) {
    state = ProcessStateOf(child);
    usleep(5000);
  }
  EXPECT_EQ(state, "sleeping");
  kill(child, SIGSTOP);
  for (int i = 0; i < 200 && state != "stopped"; ++i) {
    state = ProcessStateOf(child);
    usleep(5000);
  }
  EXPECT_EQ(state, "stopped");
  kill(child, SIGKILL);
  for (int i = 0; i < 200 && state != "zombie"; ++i) {
    state = ProcessStateOf(child);
    usleep(5000);
  }
  EXPECT_EQ(state, "zombie");
  waitpid(child, nullptr, 0);
  EXPECT_EQ(ProcessStateOf(child), "");
}

}  // namespace
}  // namespace primus::agent
