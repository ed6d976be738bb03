// Primus-format experiments and Primus's own subcommands through the Primus
// backend, against a Primus installation fixture: tests/fixtures/primus/main.py
// as primus/cli/main.py (it records what each worker was started with) around
// the real presets of Primus fd1eeabb (unpacked from ../shared/upstream/). The real
// Primus drives GPU frameworks that cannot run here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_process.h"
#include "upstream_archive.h"

namespace primus::testing {
namespace {

namespace fs = std::filesystem;

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class PrimusBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    install_ = dir_.path() + "/Primus";
    fs::create_directories(install_ + "/primus/cli/subcommands");
    fs::copy_file(std::string(PRIMUS_SOURCE_DIR) + "/tests/fixtures/primus/main.py", install_ + "/primus/cli/main.py");
    for (const char* name : {"train", "benchmark", "preflight", "projection", "data", "node_smoke"}) {
      std::ofstream(install_ + "/primus/cli/subcommands/" + name + ".py");
    }
    std::ofstream(install_ + "/primus/__init__.py") << "__version__ = \"26.5\"\n";
    auto release = UnpackUpstream("primus-fd1eeabb.tar.gz", dir_.path());
    if (!release.ok()) GTEST_SKIP() << release.error().message;
    fs::create_directory_symlink(*release + "/primus/configs", install_ + "/primus/configs");
    work_ = dir_.path() + "/work";
    fs::create_directories(work_);
    // A Primus-format experiment: extends, ${VAR:default}, the real module and model presets.
    dir_.Write("work/base.yaml",
               "work_group: ${PRIMUS_TEAM:amd}\nuser_name: ${PRIMUS_USER:root}\nworkspace: " + work_ + "/output\n");
    dir_.Write("work/exp.yaml",
               "extends: [base.yaml]\nexp_name: ${PRIMUS_EXP_NAME:llama_tiny}\n"
               "env:\n  HF_TOKEN: hf_abcdefghijklmnopqrstuvwx\n"
               "modules:\n  pre_trainer:\n    framework: megatron\n    config: pre_trainer.yaml\n"
               "    model: llama3.1_8B.yaml\n    overrides:\n      train_iters: 5\n      micro_batch_size: 1\n"
               "      global_batch_size: 16\n      tensor_model_parallel_size: 2\n      stderr_sink_level: DEBUG\n"
               "      lr_decay_iters: null\n      moe_token_dispatcher_type: alltoall\n");
  }
  ProcessResult Primus(std::vector<std::string> args, bool with_install = true) {
    ProcessOptions options;
    options.cwd = work_;
    options.env["NO_COLOR"] = "1";
    options.env["PRIMUS_PATH"] = with_install ? std::optional<std::string>(install_) : std::nullopt;
    options.env["PRIMUS_FIXTURE_RECORD"] = dir_.path() + "/records";
    options.timeout_s = 120;
    return RunPrimus(args, options);
  }
  std::vector<nlohmann::json> Records() const {
    std::vector<nlohmann::json> records;
    if (!fs::exists(dir_.path() + "/records")) return records;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir_.path() + "/records")) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) records.push_back(nlohmann::json::parse(Slurp(file)));
    return records;
  }
  TempDir dir_;
  std::string install_, work_;
};

TEST_F(PrimusBackendTest, ExperimentRunsThroughPrimusWithItsOverridesVerbatim) {
  ProcessResult result = Primus({"direct", "--nproc-per-node", "2", "--", "train", "pretrain", "--config", "exp.yaml",
                                 "--micro_batch_size", "1", "lr=0.0002", "--data_path", "/data", "--no-preflight"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  std::vector<nlohmann::json> records = Records();
  ASSERT_EQ(records.size(), 2u) << result.all();
  std::vector<std::string> expected = {"train", "pretrain", "--config", work_ + "/exp.yaml", "--micro_batch_size", "1",
                                       "lr=0.0002", "--data_path", "/data"};
  for (size_t rank = 0; rank < records.size(); ++rank) {
    EXPECT_EQ(records[rank]["argv"].get<std::vector<std::string>>(), expected);
    EXPECT_EQ(records[rank]["env"]["RANK"], std::to_string(rank));
    EXPECT_EQ(records[rank]["env"]["WORLD_SIZE"], "2");
    EXPECT_EQ(records[rank]["env"]["PRIMUS_PATH"], install_);
    EXPECT_TRUE(records[rank]["env"]["PRIMUS_JOB_TOKEN"].is_null());
    EXPECT_TRUE(records[rank]["config_exists"].get<bool>());
  }
  EXPECT_TRUE(Has(result.err, "through Primus 26.5 at " + install_ + " (PRIMUS_PATH)")) << result.err;
  EXPECT_TRUE(Has(result.err, "module pre_trainer: megatron, config pre_trainer.yaml, model llama3.1_8B.yaml; TP 2 PP 1 CP 1 EP 1, DP 1, global batch 16 = 1 x 1 x 16"))
      << result.err;

  // The snapshot: the Primus file itself (secrets redacted), and the Primus version for --replay.
  std::vector<fs::path> experiments;
  for (const auto& entry : fs::directory_iterator(work_ + "/output")) experiments.push_back(entry.path());
  ASSERT_EQ(experiments.size(), 1u);
  EXPECT_TRUE(experiments[0].filename().string().starts_with("llama_tiny_"));
  std::string resolved = Slurp(experiments[0] / "config/resolved.yaml");
  EXPECT_TRUE(Has(resolved, "stderr_sink_level: DEBUG")) << resolved;
  EXPECT_FALSE(Has(resolved, "hf_abcdefghijklmnopqrstuvwx")) << resolved;
  // A model setting with "token" inside its name is not a secret: a replay needs it.
  EXPECT_TRUE(Has(resolved, "moe_token_dispatcher_type: alltoall")) << resolved;
  nlohmann::json system = nlohmann::json::parse(Slurp(experiments[0] / "env/system_info.json"));
  EXPECT_EQ(system["primus_backend"], "26.5 at " + install_);
  nlohmann::json metadata = nlohmann::json::parse(Slurp(experiments[0] / "metadata.json"));
  EXPECT_EQ(metadata["status"], "succeeded");
}

TEST_F(PrimusBackendTest, DryRunNamesTheInstallationAndStartsNothing) {
  ProcessResult result = Primus({"--dry-run", "direct", "--nproc-per-node", "8", "--", "train", "pretrain", "--config",
                                 "exp.yaml", "--tensor_model_parallel_size", "4"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_TRUE(Has(result.out, "through Primus 26.5 at " + install_ + " (found by PRIMUS_PATH), world size 8")) << result.out;
  EXPECT_TRUE(Has(result.out, "TP 4 PP 1 CP 1 EP 1, DP 2, global batch 16 = 1 x 2 x 8")) << result.out;
  EXPECT_TRUE(Has(result.out, "python3 " + install_ + "/primus/cli/main.py train pretrain --config " + work_ +
                                  "/exp.yaml --tensor_model_parallel_size 4"))
      << result.out;
  EXPECT_TRUE(Records().empty());
  EXPECT_FALSE(fs::exists(work_ + "/output"));
}

TEST_F(PrimusBackendTest, LayoutThatCannotWorkStopsBeforeAnythingStarts) {
  ProcessResult result = Primus({"direct", "--nproc-per-node", "8", "--", "train", "pretrain", "--config", "exp.yaml",
                                 "--tensor_model_parallel_size", "3", "--no-preflight"});
  EXPECT_EQ(result.exit_code, 3) << result.all();
  EXPECT_TRUE(Has(result.err, "tensor_model_parallel_size 3 (flag --tensor_model_parallel_size 3)")) << result.err;
  EXPECT_TRUE(Has(result.err, "does not divide the world size 8")) << result.err;
  EXPECT_TRUE(Records().empty());
  EXPECT_FALSE(fs::exists(work_ + "/output"));
}

TEST_F(PrimusBackendTest, WithoutPrimusAPrimusExperimentIsExit4NeverHalfTranslated) {
  for (bool dry_run : {true, false}) {
    std::vector<std::string> args = {"direct", "--", "train", "pretrain", "--config", "exp.yaml"};
    if (dry_run) args.insert(args.begin(), "--dry-run");
    ProcessResult result = Primus(args, /*with_install=*/false);
    EXPECT_EQ(result.exit_code, 4) << result.all();
    EXPECT_TRUE(Has(result.err, "exp.yaml is a Primus-format experiment (modules:), which runs through Primus; no Primus "
                                "installation was found"))
        << result.err;
    EXPECT_TRUE(Has(result.err, "export PRIMUS_PATH=")) << result.err;
    EXPECT_FALSE(Has(result.all(), "pretrain_gpt.py"));
  }
  ProcessOptions options;
  options.cwd = work_;
  options.env["PRIMUS_PATH"] = work_;
  ProcessResult broken = RunPrimus({"--dry-run", "direct", "--", "train", "pretrain", "--config", "exp.yaml"}, options);
  EXPECT_EQ(broken.exit_code, 4);
  EXPECT_TRUE(Has(broken.err, "PRIMUS_PATH=" + work_ + " has no primus/cli/main.py")) << broken.err;
}

TEST_F(PrimusBackendTest, PosttrainRunsPrimusPosttrainAndUnknownModulesAreNamed) {
  dir_.Write("work/sft.yaml",
             "exp_name: sft\nworkspace: " + work_ + "/output\nmodules:\n  post_trainer:\n    framework: megatron_bridge\n"
             "    overrides: {peft: lora}\n");
  ProcessResult result = Primus({"--dry-run", "direct", "--", "train", "posttrain", "--config", "sft.yaml"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_TRUE(Has(result.out, "main.py train posttrain --config " + work_ + "/sft.yaml")) << result.out;
  EXPECT_TRUE(Has(result.out, "module post_trainer: megatron_bridge; layout: Primus checks it")) << result.out;

  dir_.Write("work/eval.yaml", "exp_name: e\nmodules:\n  evaluator: {framework: megatron}\n");
  result = Primus({"--dry-run", "direct", "--", "train", "pretrain", "--config", "eval.yaml"});
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_TRUE(Has(result.err, "train pretrain runs the module 'pre_trainer', and this experiment has evaluator")) << result.err;
}

TEST_F(PrimusBackendTest, PrimusOnlySubcommandsGoToPrimusCli) {
  ProcessResult result = Primus({"direct", "--nproc-per-node", "2", "--", "projection", "performance", "--config", "x.yaml"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  std::vector<nlohmann::json> records = Records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["argv"].get<std::vector<std::string>>(),
            (std::vector<std::string>{"projection", "performance", "--config", "x.yaml"}));
  // node_smoke: one process per node, as Primus runs it.
  fs::remove_all(dir_.path() + "/records");
  result = Primus({"direct", "--", "node_smoke", "--dump-path", "out"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_EQ(Records().size(), 1u);
  // Without an installation: exit 4, saying what the word is.
  result = Primus({"direct", "--", "projection", "performance"}, /*with_install=*/false);
  EXPECT_EQ(result.exit_code, 4);
  EXPECT_TRUE(Has(result.err, "'projection' is a subcommand of Primus's own CLI")) << result.err;
}

TEST_F(PrimusBackendTest, InfoSaysWhichPrimusRuns) {
  ProcessResult result = Primus({"info"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_TRUE(Has(result.out, "primus    26.5 at " + install_ + " (found by PRIMUS_PATH)")) << result.out;
}

}  // namespace
}  // namespace primus::testing
