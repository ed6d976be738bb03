#include "train/framework_needs.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "util/strings.h"

namespace primus::train {
namespace {

class FrameworkNeedsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/primus-needs-XXXXXX";
    dir_ = mkdtemp(pattern);
    std::ofstream(dir_ + "/train.py") << "print('hi')\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // The experiment of `body` (the torch backend's script is train.py).
  ExperimentConfig Load(const std::string& body) {
    std::string path = dir_ + "/exp.yaml";
    std::ofstream(path) << body;
    ExperimentRequest request;
    request.file = path;
    request.environment = Environment({{"HOME", "/root"}, {"MEGATRON_PATH", dir_}});
    auto loaded = LoadExperiment(request);
    EXPECT_TRUE(loaded.ok()) << loaded.error().message;
    return loaded.ok() ? *loaded : ExperimentConfig{};
  }
  std::string dir_;
};

TEST_F(FrameworkNeedsTest, TheDeviceSaysWhetherTheExampleTrainerTakesAGpu) {
  std::string script = "torch: {script: " + dir_ + "/train.py}\n";
  ExperimentConfig cpu = Load(script + "training: {device: cpu}\n");
  EXPECT_FALSE(NeedsOf(cpu, 8).gpu_per_worker) << "a CPU run on a GPU host takes no GPU";
  EXPECT_EQ(NeedsOf(cpu, 8).modules, std::vector<std::string>{"torch"});
  ExperimentConfig cuda = Load(script + "training: {device: cuda}\n");
  EXPECT_TRUE(NeedsOf(cuda, 0).gpu_per_worker);
  ExperimentConfig automatic = Load(script);
  EXPECT_TRUE(NeedsOf(automatic, 2).gpu_per_worker) << "auto takes the GPUs there are";
  EXPECT_FALSE(NeedsOf(automatic, 0).gpu_per_worker) << "auto runs on the CPU where there are none";
  ExperimentConfig own = Load("torch: {script: " + dir_ + "/train.py, training_flags: false}\n");
  EXPECT_FALSE(NeedsOf(own, 8).gpu_per_worker) << "a script of one's own chooses its device";
  EXPECT_TRUE(NeedsOf(own, 8).modules.empty());
}

TEST_F(FrameworkNeedsTest, FrameworkBackendsNeedAGpuAndTheirModules) {
  ExperimentConfig titan = Load("backend: torchtitan\nmodel: {name: llama3, flavor: debugmodel}\n");
  FrameworkNeeds needs = NeedsOf(titan, 0);
  EXPECT_TRUE(needs.gpu_per_worker);
  EXPECT_EQ(needs.modules, (std::vector<std::string>{"torch", "torchtitan"}));
  ExperimentConfig own = Load("backend: command\ncommand: {argv: [./run.sh]}\n");
  EXPECT_FALSE(NeedsOf(own, 8).gpu_per_worker) << "nothing is known of a command of one's own";
  EXPECT_TRUE(NeedsOf(own, 8).modules.empty());
}

TEST_F(FrameworkNeedsTest, MoreWorkersThanGpusIsRefusedNamingBothAndTheFix) {
  FrameworkNeeds needs{true, "the megatron backend", {"torch"}};
  EXPECT_TRUE(CheckGpusFit(needs, 8, 8, "node1", "").ok());
  Status over = CheckGpusFit(needs, 8, 4, "node1", "CUDA_VISIBLE_DEVICES=0,1,2,3");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().message,
            "8 worker(s) per node would each take a GPU (the megatron backend), but on node1 4 GPU(s) are visible "
            "(CUDA_VISIBLE_DEVICES=0,1,2,3)");
  EXPECT_NE(over.error().hint.find("--nproc-per-node 4"), std::string::npos) << over.error().hint;
  Status none = CheckGpusFit(needs, 1, 0, "node1", "");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no GPU is visible"), std::string::npos);
  EXPECT_TRUE(CheckGpusFit(FrameworkNeeds{}, 64, 0, "node1", "").ok()) << "a CPU job takes no GPU";
}

TEST_F(FrameworkNeedsTest, OnlyTheModulesAskedForCountAsMissing) {
  FrameworkNeeds needs{true, "the torchtitan backend", {"torch", "torchtitan"}};
  EXPECT_TRUE(CheckModulesFound(needs, "", "python3", "torchtitan").ok());
  // A site hook's own print is not a missing module.
  Status missing = CheckModulesFound(needs, "hello from sitecustomize\ntorchtitan\n", "/venv/bin/python", "torchtitan");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            "the torchtitan backend's workers need torchtitan, which /venv/bin/python cannot import (no worker was "
            "started)");
  std::vector<std::string> args = FindModulesArgs(needs);
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[0], "-c");
  EXPECT_EQ(args[2], "torch") << "module names are arguments, not program text";
}

}  // namespace
}  // namespace primus::train
