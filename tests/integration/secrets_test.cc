// Secrets in every written file and every printed plan (issue 16 part 4; the
// fault matrix of part 6). A `train` run gets secrets every way a user gives
// them: exported variables (HF_TOKEN, a URL with a password, the job token),
// the experiment's env: (S3_SECRET_ACCESS_KEY), an override
// (env.GITHUB_TOKEN=...), --env (MY_API_KEY=...), ${HF_TOKEN} interpolated
// into an env: value and into the worker's command. Then every file under
// the workspace and everything printed (the run with --debug, and --dry-run)
// is searched for each secret's value: none may appear. The workers still
// get the user's secrets, but never PRIMUS_JOB_TOKEN (the agents' own); a
// failure message quoting API_KEY="..." leaves a metadata.json that parses.
// The command backend and a small worker keep each run under a second or two.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_process.h"
#include "util/strings.h"

namespace primus::testing {
namespace {

namespace fs = std::filesystem;

const std::string kPython = "/usr/bin/python3";

// name -> value, as the user holds them.
const std::map<std::string, std::string> kExported = {
    {"HF_TOKEN", "hf-env-secret-1"},
    {"PIP_INDEX_URL", "https://alice:url-pw-secret-6@pypi.example.com/simple"},
    {"PRIMUS_JOB_TOKEN", "job-token-secret-5"},
};
const std::vector<std::string> kSecretValues = {"hf-env-secret-1", "s3-file-secret-2", "ghp-override-secret-3",
                                                "key-flag-secret-4", "job-token-secret-5", "url-pw-secret-6",
                                                "data-pw-secret-8"};

class SecretsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_.path() + "/worker-out");
    WriteExperiment("exp.yaml", "[" + kPython + ", " + std::string(PRIMUS_SOURCE_DIR) + "/tests/workers/dump_env.py, " +
                                    dir_.path() + "/worker-out, \"--auth=${HF_TOKEN}\"]");
  }
  void WriteExperiment(const std::string& name, const std::string& argv) const {
    dir_.Write(name,
               "exp_name: secrets\n"
               "workspace: " + dir_.path() + "/runs\n"
               "backend: command\n"
               "distributed: {nproc_per_node: \"1\"}\n"
               "command:\n"
               "  argv: " + argv + "\n"
               "description: data from https://reader:data-pw-secret-8@data.example.com/x\n"
               "env:\n"
               "  S3_SECRET_ACCESS_KEY: s3-file-secret-2\n"
               "  HF_TOKEN: ${HF_TOKEN}\n"
               "  DOWNLOAD_HEADER: \"Bearer ${HF_TOKEN}\"\n"
               "  TOKENIZERS_PARALLELISM: \"false\"\n");
  }
  ProcessResult Primus(std::vector<std::string> before_task, const std::string& experiment = "exp.yaml",
                       bool override_on_command_line = true) const {
    ProcessOptions options;
    options.cwd = dir_.path();
    options.env["HOME"] = dir_.path();
    options.env["NO_COLOR"] = "1";
    options.env["PRIMUS_DIRECT_LOG_DIR"] = dir_.path() + "/agent-logs";
    for (const auto& [name, value] : kExported) options.env[name] = value;
    options.timeout_s = 120;
    std::vector<std::string> args = std::move(before_task);
    for (const char* word : {"--", "train", "pretrain", "--no-preflight", "--config"}) args.push_back(word);
    args.push_back(experiment);
    if (override_on_command_line) args.push_back("env.GITHUB_TOKEN=ghp-override-secret-3");
    return RunPrimus(args, options);
  }
  // Every secret value found in `text`, for the failure message.
  static std::string SecretsIn(const std::string& text) {
    std::string found;
    for (const std::string& secret : kSecretValues) {
      if (text.find(secret) != std::string::npos) found += secret + " ";
    }
    return found;
  }
  // Every file under `root` holding a secret value: "path: values".
  static std::string FilesWithSecrets(const fs::path& root) {
    std::string found;
    if (!fs::exists(root)) return found;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (!entry.is_regular_file()) continue;
      if (std::string in = SecretsIn(Slurp(entry.path())); !in.empty()) found += entry.path().string() + ": " + in + "\n";
    }
    return found;
  }
  fs::path OnlyExperiment() const {
    std::vector<fs::path> dirs;
    for (const auto& entry : fs::directory_iterator(dir_.path() + "/runs")) dirs.push_back(entry.path());
    EXPECT_EQ(dirs.size(), 1u);
    return dirs.empty() ? fs::path() : dirs[0];
  }

  TempDir dir_;
};

TEST_F(SecretsTest, NoFileOfTheExperimentAndNothingPrintedHoldsASecret) {
  ProcessResult result = Primus({"--debug", "direct", "--env", "MY_API_KEY=key-flag-secret-4"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_EQ(SecretsIn(result.all()), "") << "printed by --debug:\n" << result.all();
  fs::path experiment = OnlyExperiment();
  EXPECT_EQ(FilesWithSecrets(dir_.path() + "/runs"), "");
  EXPECT_EQ(FilesWithSecrets(dir_.path() + "/agent-logs"), "");

  // What the files say instead.
  std::string resolved = Slurp(experiment / "config/resolved.yaml");
  EXPECT_NE(resolved.find("S3_SECRET_ACCESS_KEY: <redacted>"), std::string::npos) << resolved;
  EXPECT_NE(resolved.find("GITHUB_TOKEN: <redacted>"), std::string::npos) << resolved;
  EXPECT_NE(resolved.find("TOKENIZERS_PARALLELISM"), std::string::npos) << "not a secret: " << resolved;
  std::string copied = Slurp(experiment / "config/exp.yaml");
  EXPECT_NE(copied.find("S3_SECRET_ACCESS_KEY: <redacted>"), std::string::npos) << copied;
  EXPECT_NE(copied.find("reader:<redacted>@"), std::string::npos) << copied;
  nlohmann::json env = nlohmann::json::parse(Slurp(experiment / "env/env.json"));
  EXPECT_EQ(env["HF_TOKEN"]["value"], "<redacted>");
  EXPECT_EQ(env["DOWNLOAD_HEADER"]["value"], "Bearer <redacted>") << "a secret inside another value";
  EXPECT_FALSE(env.contains("PRIMUS_JOB_TOKEN")) << "workers do not get it, so env/ does not list it";
  nlohmann::json metadata = nlohmann::json::parse(Slurp(experiment / "metadata.json"));
  EXPECT_EQ(metadata["status"], "succeeded");

  // The worker got the user's secrets, exactly, and not the job token.
  nlohmann::json worker = nlohmann::json::parse(Slurp(dir_.path() + "/worker-out/env.0.json"));
  EXPECT_EQ(worker["HF_TOKEN"], "hf-env-secret-1");
  EXPECT_EQ(worker["S3_SECRET_ACCESS_KEY"], "s3-file-secret-2");
  EXPECT_EQ(worker["GITHUB_TOKEN"], "ghp-override-secret-3");
  EXPECT_EQ(worker["MY_API_KEY"], "key-flag-secret-4");
  EXPECT_EQ(worker["DOWNLOAD_HEADER"], "Bearer hf-env-secret-1");
  EXPECT_FALSE(worker.contains("PRIMUS_JOB_TOKEN")) << "the agents' secret reached a worker";
}

// --dry-run (with --debug) prints the whole plan, the worker's environment
// and command included: names and origins, never a secret's value.
TEST_F(SecretsTest, TheDryRunPlanShowsNoSecret) {
  ProcessResult result = Primus({"--dry-run", "--debug", "direct", "--env", "MY_API_KEY=key-flag-secret-4"});
  ASSERT_EQ(result.exit_code, 0) << result.all();
  EXPECT_EQ(SecretsIn(result.all()), "") << result.all();
  EXPECT_NE(result.out.find("worker command"), std::string::npos) << result.out;
  EXPECT_NE(result.all().find("S3_SECRET_ACCESS_KEY"), std::string::npos) << "the variable is listed: " << result.all();
  EXPECT_FALSE(fs::exists(dir_.path() + "/runs")) << "--dry-run writes nothing";
  EXPECT_FALSE(fs::exists(dir_.path() + "/worker-out/env.0.json")) << "--dry-run runs nothing";

  ProcessResult container = Primus({"--dry-run", "--debug", "container", "--image", "i"});
  EXPECT_EQ(container.exit_code, 0) << container.all();
  EXPECT_EQ(SecretsIn(container.all()), "") << container.all();
}

// A batch script and a manifest are files the scheduler keeps and shows to
// others: a secret typed on the command line is refused (exit 2, shown
// redacted, with the way to pass it), not written; without one, their plans
// print no secret of the environment either.
TEST_F(SecretsTest, BatchScriptsAndManifestsNeverHoldASecret) {
  for (std::vector<std::string> mode : {std::vector<std::string>{"--dry-run", "--debug", "slurm", "sbatch", "-N", "1"},
                                        std::vector<std::string>{"--dry-run", "--debug", "k8s", "manifest", "-N", "1",
                                                                 "--image", "i"},
                                        std::vector<std::string>{"k8s", "manifest", "-N", "1", "--image", "i"}}) {
    SCOPED_TRACE(mode[2]);
    ProcessResult refused = Primus(mode);
    EXPECT_EQ(refused.exit_code, 2) << refused.all();
    EXPECT_NE(refused.err.find("'env.GITHUB_TOKEN=<redacted>' holds a secret"), std::string::npos) << refused.err;
    EXPECT_EQ(SecretsIn(refused.all()), "") << refused.all();

    ProcessResult plan = Primus(mode, "exp.yaml", /*override_on_command_line=*/false);
    EXPECT_EQ(plan.exit_code, 0) << plan.all();
    EXPECT_EQ(SecretsIn(plan.all()), "") << plan.all();
    EXPECT_NE(plan.out.find("train pretrain"), std::string::npos) << plan.out;
  }
}

// A worker's failure message quoting API_KEY="..." and odd escapes:
// metadata.json is written, parses, and holds no secret.
TEST_F(SecretsTest, AFailureMessageQuotingASecretLeavesValidMetadata) {
  dir_.Write("fail.sh", "echo 'ValueError: API_KEY=\"quoted\" and \\\\ \" \\\\\" escapes' >&2\nexit 3\n");
  WriteExperiment("fail.yaml", "[/bin/sh, " + dir_.path() + "/fail.sh]");
  ProcessResult result = Primus({"direct"}, "fail.yaml");
  EXPECT_EQ(result.exit_code, 3) << result.all();
  EXPECT_EQ(SecretsIn(result.all()), "") << result.all();
  fs::path experiment = OnlyExperiment();
  std::string text = Slurp(experiment / "metadata.json");
  nlohmann::json metadata = nlohmann::json::parse(text, nullptr, false);
  ASSERT_FALSE(metadata.is_discarded()) << text;
  EXPECT_EQ(metadata["status"], "failed");
  EXPECT_EQ(metadata["exit_code"], 3);
  EXPECT_EQ(text.find("API_KEY=\\\"quoted"), std::string::npos) << "redacted as data: " << text;
  EXPECT_EQ(FilesWithSecrets(dir_.path() + "/runs"), "");
}

}  // namespace
}  // namespace primus::testing
