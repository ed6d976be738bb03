// A first contact through the real binary: `init` writes an experiment for
// every template and backend that passes --dry-run at the size it was written
// for; the shipped examples plan at any worker count; and a launch that
// cannot work (more workers than visible GPUs, an interpreter without the
// framework) is refused before anything is created or started.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "run_process.h"

namespace primus::testing {
namespace {

namespace fs = std::filesystem;

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class FirstContactTest : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(dir_.path() + "/megatron"); }
  // A user in an empty directory on a host without GPUs (the cpu-only
  // fixture, so that a GPU machine running the suite sees the same);
  // Megatron-LM's checkout is only named (the compiled table checks).
  ProcessOptions User() const { return OnHost("cpu-only", ""); }
  ProcessOptions OnGpuFixture(const std::string& visible) const { return OnHost("h100-8", visible); }
  ProcessOptions OnHost(const std::string& fixture_name, const std::string& visible) const {
    ProcessOptions options = IsolatedOptions(dir_.path(), {"MEGATRON_PATH", "TORCHTITAN_PATH", "CUDA_VISIBLE_DEVICES",
                                                           "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                                                           "PRIMUS_DIRECT_NPROC_PER_NODE"});
    options.env["MEGATRON_PATH"] = dir_.path() + "/megatron";
    std::string fixture = std::string(PRIMUS_SOURCE_DIR) + "/tests/fixtures/hosts/" + fixture_name;
    options.env["PRIMUS_SYSFS_ROOT"] = fixture + "/sys";
    options.env["PRIMUS_PROCFS_ROOT"] = fixture + "/proc";
    options.env["PRIMUS_ETC_ROOT"] = fixture + "/etc";
    if (!visible.empty()) options.env["CUDA_VISIBLE_DEVICES"] = visible;
    return options;
  }
  TempDir dir_;
};

TEST_F(FirstContactTest, EveryTemplateOfInitPassesDryRunAtTheSizeItWasWrittenFor) {
  ProcessResult list = RunPrimus({"init", "--list", "--json"}, User());
  ASSERT_EQ(list.exit_code, 0) << list.all();
  nlohmann::json templates = nlohmann::json::parse(list.out);
  std::vector<std::string> models;
  for (const auto& model : templates) models.push_back(model["model"]);
  EXPECT_EQ(models, (std::vector<std::string>{"gpt2-124m", "llama3-8b", "deepseek-v2-lite", "mixtral-8x7b", "qwen3-8b"}));
  int planned = 0;
  for (const auto& model : templates) {
    for (const std::string backend : model["backends"]) {
      for (auto [gpus, nodes] : {std::pair{8, 1}, std::pair{8, 4}, std::pair{4, 2}}) {
        std::string file = fmt::format("{}-{}-{}x{}.yaml", std::string(model["model"]), backend, nodes, gpus);
        std::string what = file + ": ";
        ProcessResult init = RunPrimus({"init", model["model"], "--backend", backend, "--gpus", std::to_string(gpus),
                                        "--nodes", std::to_string(nodes), "-o", file, "--json"},
                                       User());
        ASSERT_EQ(init.exit_code, 0) << what << init.all();
        nlohmann::json written = nlohmann::json::parse(init.out);
        EXPECT_EQ(written["file"], file);
        EXPECT_EQ(written["gpus_from"], "given");
        ProcessResult plan = RunPrimus({"--dry-run", "direct", "--node-rank", "0", "--master-addr", "127.0.0.1", "--",
                                        "train", "pretrain", "--config", file},
                                       User());
        ASSERT_EQ(plan.exit_code, 0) << what << plan.all() << "\n" << Slurp(dir_.path() + "/" + file);
        int world = gpus * nodes;
        EXPECT_TRUE(Has(plan.out, fmt::format("world size {} ({} x {})", world, nodes, gpus))) << what << plan.out;
        const nlohmann::json& layout = written["layout"];
        EXPECT_TRUE(Has(plan.out, fmt::format("TP {} PP {} CP 1 EP {} DP {}, global batch {} =", int(layout["tensor"]),
                                              int(layout["pipeline"]), int(layout["expert"]),
                                              int(layout["data_parallel"]), int(layout["global_batch"]))))
            << what << "the plan is the layout init said\n"
            << plan.out;
        // Planned on a host without GPUs: said, not refused.
        EXPECT_TRUE(Has(plan.out, "note: on this host the launch would stop")) << what << plan.out;
        ++planned;
      }
    }
  }
  EXPECT_EQ(planned, 13 * 3) << "5 models: 13 model x backend pairs";
  EXPECT_FALSE(fs::exists(dir_.path() + "/output")) << "--dry-run creates no experiment directory";
}

TEST_F(FirstContactTest, WithoutGpusInitWritesTheExampleTrainerOnTheCpuAndNeverOverwrites) {
  ProcessResult init = RunPrimus({"init", "llama3-8b"}, User());  // no GPU on this host (no fixture)
  ASSERT_EQ(init.exit_code, 0) << init.all();
  EXPECT_TRUE(Has(init.out, "wrote llama3-8b-torch.yaml: Llama-3-8B on the example trainer, 1 node(s) x 2 CPU worker(s)"))
      << init.out;
  EXPECT_TRUE(Has(init.out, "primus-cli --dry-run direct -- train pretrain --config llama3-8b-torch.yaml")) << init.out;
  std::string yaml = Slurp(dir_.path() + "/llama3-8b-torch.yaml");
  EXPECT_TRUE(Has(yaml, "device: cpu")) << yaml;
  EXPECT_TRUE(Has(yaml, "torch: {script: \"" + std::string(PRIMUS_SOURCE_DIR) + "/examples/gpt/train.py\"}")) << yaml;
  ProcessResult plan = RunPrimus({"--dry-run", "direct", "--", "train", "pretrain", "--config", "llama3-8b-torch.yaml"},
                                 User());
  EXPECT_EQ(plan.exit_code, 0) << plan.all();
  EXPECT_FALSE(Has(plan.out, "would stop")) << "a CPU template fits this host\n" << plan.out;

  // Megatron without GPUs found or given: the fix is named.
  ProcessResult megatron = RunPrimus({"init", "llama3-8b", "--backend", "megatron"}, User());
  EXPECT_EQ(megatron.exit_code, 2);
  EXPECT_TRUE(Has(megatron.err, "no GPU was found or given")) << megatron.err;
  EXPECT_TRUE(Has(megatron.err, "--gpus 8")) << megatron.err;

  // An existing file is kept; a link planted in its place is not written through.
  ProcessResult again = RunPrimus({"init", "llama3-8b"}, User());
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_TRUE(Has(again.err, "primus-cli: error: init: llama3-8b-torch.yaml exists")) << again.err;
  dir_.Write("victim.txt", "keep me\n");
  ASSERT_EQ(symlink((dir_.path() + "/victim.txt").c_str(), (dir_.path() + "/planted.yaml").c_str()), 0);
  EXPECT_EQ(RunPrimus({"init", "gpt2-124m", "-o", "planted.yaml"}, User()).exit_code, 2);
  ProcessResult forced = RunPrimus({"init", "gpt2-124m", "-o", "planted.yaml", "--force"}, User());
  EXPECT_EQ(forced.exit_code, 0) << forced.all();
  EXPECT_EQ(Slurp(dir_.path() + "/victim.txt"), "keep me\n") << "the link is replaced, never followed";
  EXPECT_FALSE(fs::is_symlink(dir_.path() + "/planted.yaml"));

  // --dry-run writes nothing; - writes to standard output.
  ProcessResult dry = RunPrimus({"--dry-run", "init", "qwen3-8b", "--gpus", "8"}, User());
  EXPECT_EQ(dry.exit_code, 0) << dry.all();
  EXPECT_TRUE(Has(dry.out, "would write qwen3-8b-megatron.yaml")) << dry.out;
  EXPECT_FALSE(fs::exists(dir_.path() + "/qwen3-8b-megatron.yaml"));
  ProcessResult out = RunPrimus({"init", "qwen3-8b", "--gpus", "8", "-o", "-"}, User());
  EXPECT_TRUE(Has(out.out, "backend: megatron\n")) << out.all();

  ProcessResult typo = RunPrimus({"init", "mixtrl-8x7b"}, User());
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_TRUE(Has(typo.err, "did you mean 'mixtral-8x7b'")) << typo.err;
}

TEST_F(FirstContactTest, InitSizesForTheGpusVisibleHere) {
  ProcessResult init = RunPrimus({"init", "deepseek-v2-lite", "--json"}, OnGpuFixture("0,1,2,3"));
  ASSERT_EQ(init.exit_code, 0) << init.all();
  nlohmann::json written = nlohmann::json::parse(init.out);
  EXPECT_EQ(written["gpus_per_node"], 4) << "CUDA_VISIBLE_DEVICES shows 4 of the fixture's 8";
  EXPECT_EQ(written["gpus_from"], "visible here");
  EXPECT_EQ(written["backend"], "megatron");
  EXPECT_EQ(written["layout"]["expert"], 4);
}

TEST_F(FirstContactTest, ShippedExamplesPlanAtAnyWorkerCount) {
  std::string examples = std::string(PRIMUS_SOURCE_DIR) + "/examples";
  ProcessOptions options = User();
  options.cwd = PRIMUS_SOURCE_DIR;
  std::vector<std::pair<std::string, std::vector<int>>> cases = {
      {"gpt/configs/tiny-cpu.yaml", {1, 2, 3, 4, 8}},
      {"gpt/configs/small-gpu.yaml", {1, 2, 4, 8}},
      {"gpt/configs/gpt2-124m-gpu.yaml", {1, 2, 4, 8}},
      {"megatron/llama3_8b.yaml", {1, 2, 8, 16}},
      {"megatron/mixtral_tiny.yaml", {1, 2, 8}},
  };
  for (const auto& [file, counts] : cases) {
    for (int workers : counts) {
      ProcessResult plan = RunPrimus({"--dry-run", "direct", "--nproc-per-node", std::to_string(workers), "--", "train",
                                      "pretrain", "--config", examples + "/" + file},
                                     options);
      EXPECT_EQ(plan.exit_code, 0) << file << " x" << workers << ": " << plan.all();
    }
  }
  // direct --single: one worker, the global batch follows.
  ProcessResult single = RunPrimus(
      {"--dry-run", "direct", "--single", "--", "train", "pretrain", "--config", examples + "/gpt/configs/tiny-cpu.yaml"},
      options);
  EXPECT_EQ(single.exit_code, 0) << single.all();
  EXPECT_TRUE(Has(single.out, "world size 1 (1 x 1), TP 1 PP 1 CP 1 EP 1 DP 1, global batch 4 = 4 x 1 x 1")) << single.out;
}

TEST_F(FirstContactTest, MoreWorkersThanVisibleGpusAreRefusedBeforeAnythingIsCreated) {
  dir_.Write("train.py", "print('never started')\n");
  dir_.Write("exp.yaml", "backend: torch\ntorch: {script: train.py}\ntraining: {device: cuda}\nworkspace: out\n");
  std::vector<std::string> argv = {"direct", "--nproc-per-node", "4", "--", "train", "pretrain", "--config", "exp.yaml"};
  ProcessResult refused = RunPrimus(argv, OnGpuFixture("0,1"));
  EXPECT_EQ(refused.exit_code, 4) << refused.all();
  EXPECT_TRUE(Has(refused.err, "primus-cli: error: 4 worker(s) per node would each take a GPU (training.device cuda), "
                               "but on dgx-h100-012 2 GPU(s) are visible (CUDA_VISIBLE_DEVICES=0,1)"))
      << refused.err;
  EXPECT_TRUE(Has(refused.err, "hint: give --nproc-per-node 2")) << refused.err;
  EXPECT_FALSE(fs::exists(dir_.path() + "/out")) << "refused before the experiment directory exists";
  EXPECT_FALSE(Has(refused.all(), "never started"));
  // AMD: HIP_VISIBLE_DEVICES is what the runtime read, not the CUDA_VISIBLE_DEVICES beside it.
  ProcessOptions amd = OnHost("mi300x-8", "0");
  amd.env["HIP_VISIBLE_DEVICES"] = "0,1";
  ProcessResult on_amd = RunPrimus(argv, amd);
  EXPECT_EQ(on_amd.exit_code, 4) << on_amd.all();
  EXPECT_TRUE(Has(on_amd.err, "2 GPU(s) are visible (HIP_VISIBLE_DEVICES=0,1)\n")) << on_amd.err;
  // The same on a host without GPUs; a CPU run there is fine.
  ProcessResult none = RunPrimus(argv, User());
  EXPECT_EQ(none.exit_code, 4);
  EXPECT_TRUE(Has(none.err, "no GPU is visible")) << none.err;
  EXPECT_TRUE(Has(none.err, "training.device=cpu")) << none.err;
  // --dry-run says it and plans on.
  std::vector<std::string> dry = argv;
  dry.insert(dry.begin(), "--dry-run");
  ProcessResult plan = RunPrimus(dry, OnGpuFixture("0,1"));
  EXPECT_EQ(plan.exit_code, 0) << plan.all();
  EXPECT_TRUE(Has(plan.out, "note: on this host the launch would stop: 4 worker(s) per node")) << plan.out;
}

TEST_F(FirstContactTest, AnInterpreterWithoutTheFrameworkIsRefusedBeforeAnythingIsCreated) {
  // An interpreter that cannot see the system's site-packages: no torch.
  dir_.Write("bare-python", "#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n");
  ASSERT_EQ(chmod((dir_.path() + "/bare-python").c_str(), 0755), 0);
  dir_.Write("train.py", "print('never started')\n");
  dir_.Write("exp.yaml", "backend: torch\ntorch: {script: train.py}\ntraining: {device: cpu}\nworkspace: out\n"
                         "python: {interpreter: " + dir_.path() + "/bare-python}\n");
  ProcessResult refused = RunPrimus({"direct", "--", "train", "pretrain", "--config", "exp.yaml"}, User());
  EXPECT_EQ(refused.exit_code, 4) << refused.all();
  EXPECT_TRUE(Has(refused.err, "the torch backend's workers need torch, which " + dir_.path() +
                                   "/bare-python cannot import (no worker was started)"))
      << refused.err;
  EXPECT_FALSE(fs::exists(dir_.path() + "/out"));
  // TorchTitan needs its own module too, found from the directory the job runs in.
  dir_.Write("tt.yaml", "backend: torchtitan\nmodel: {name: llama3, flavor: debugmodel}\nworkspace: out\n"
                        "python: {interpreter: /usr/bin/python3}\n");
  ProcessResult probe = RunProcess({"/usr/bin/python3", "-c", "import importlib.util as u, sys; "
                                    "sys.exit(0 if u.find_spec('torch') and not u.find_spec('torchtitan') else 1)"});
  if (probe.exit_code == 0) {  // Debian's python3 has torch and not TorchTitan, as scripts/setup.sh installs it
    ProcessResult titan = RunPrimus({"direct", "--", "train", "pretrain", "--config", "tt.yaml"}, OnGpuFixture("0"));
    EXPECT_EQ(titan.exit_code, 4) << titan.all();
    EXPECT_TRUE(Has(titan.err, "the torchtitan backend's workers need torchtitan, which /usr/bin/python3 cannot import"))
        << titan.err;
  } else {
    ADD_FAILURE() << "/usr/bin/python3 should have torch and not torchtitan here (scripts/setup.sh)";
  }
  // --no-preflight skips the checks.
  ProcessResult skipped =
      RunPrimus({"direct", "--", "train", "pretrain", "--config", "exp.yaml", "--no-preflight"}, User());
  EXPECT_FALSE(Has(skipped.err, "cannot import")) << skipped.all();
  EXPECT_TRUE(Has(skipped.all(), "never started")) << "the worker ran (python -S runs a plain script)\n" << skipped.all();
}

}  // namespace
}  // namespace primus::testing
