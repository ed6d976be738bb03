#include "snapshot/snapshot_files.h"

#include <gtest/gtest.h>

#include "util/scoped_temp_dir.h"
#include <stdlib.h>

#include "util/files.h"

namespace primus::snapshot {
namespace {

class SnapshotFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = scoped_.path();
    auto dir = CreateExperimentDir(root_ + "/ws", "exp", 0);
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
  }
  ScopedTempDir scoped_{"snap"};
  std::string root_;
  ExperimentDir dir_;
};

TEST_F(SnapshotFilesTest, ConfigFilesCopiedRedactedWithCollisionsNumbered) {
  ASSERT_TRUE(MakeDirs(root_ + "/a").ok() && MakeDirs(root_ + "/b").ok());
  ASSERT_TRUE(WriteFileAtomic(root_ + "/a/base.yaml", "token: hf_supersecret_1\n").ok());
  ASSERT_TRUE(WriteFileAtomic(root_ + "/b/base.yaml", "x: 1\n").ok());
  Redactor redactor(std::map<std::string, std::string>{{"HF_TOKEN", "hf_supersecret_1"}});
  auto written = WriteConfigFiles(dir_, {root_ + "/a/base.yaml", root_ + "/b/base.yaml"}, "resolved: true\n", redactor);
  ASSERT_TRUE(written.ok()) << written.error().Format();
  EXPECT_EQ(*written, (std::vector<std::string>{"base.yaml", "2_base.yaml"}));
  EXPECT_EQ(*ReadFile(dir_.config_dir() + "/base.yaml"), "token: <redacted>\n");
  EXPECT_EQ(*ReadFile(dir_.config_dir() + "/resolved.yaml"), "resolved: true\n");
}

// Issue 16: the copied experiment kept S3_SECRET_ACCESS_KEY (a URL password
// in the same file was redacted) and resolved.yaml kept it and a
// GITHUB_TOKEN from an override: secret keys are redacted by name in YAML,
// and learnt values wherever they appear.
TEST_F(SnapshotFilesTest, SecretKeysOfCopiedAndResolvedYamlAreRedacted) {
  std::string experiment =
      "exp_name: e\n"
      "data: https://user:pw-in-url@host/data\n"
      "env:\n"
      "  S3_SECRET_ACCESS_KEY: s3-key-in-file\n"
      "  HF_TOKEN: ${HF_TOKEN}\n"
      "  TOKENIZERS_PARALLELISM: \"false\"\n"
      "command: {argv: [python3, train.py, \"--s3=s3-key-in-file\"]}\n";
  ASSERT_TRUE(WriteFileAtomic(root_ + "/exp.yaml", experiment).ok());
  std::string resolved =
      "env:\n  GITHUB_TOKEN: ghp_from_override\n  HF_TOKEN: hf_from_env_var\n  S3_SECRET_ACCESS_KEY: s3-key-in-file\n"
      "command:\n  argv:\n    - --token=hf_from_env_var\n";
  Redactor redactor(std::map<std::string, std::string>{{"HF_TOKEN", "hf_from_env_var"}});
  redactor.Learn("S3_SECRET_ACCESS_KEY", "s3-key-in-file");
  ASSERT_TRUE(WriteConfigFiles(dir_, {root_ + "/exp.yaml"}, resolved, redactor).ok());
  std::string copied = *ReadFile(dir_.config_dir() + "/exp.yaml");
  std::string written = *ReadFile(dir_.config_dir() + "/resolved.yaml");
  for (const char* secret : {"s3-key-in-file", "pw-in-url", "ghp_from_override", "hf_from_env_var"}) {
    EXPECT_EQ(copied.find(secret), std::string::npos) << secret << " in\n" << copied;
    EXPECT_EQ(written.find(secret), std::string::npos) << secret << " in\n" << written;
  }
  EXPECT_NE(copied.find("HF_TOKEN: ${HF_TOKEN}"), std::string::npos) << "a reference is no secret: " << copied;
  EXPECT_NE(copied.find("TOKENIZERS_PARALLELISM: \"false\""), std::string::npos) << copied;
  EXPECT_NE(written.find("GITHUB_TOKEN: <redacted>"), std::string::npos) << written;
}

TEST_F(SnapshotFilesTest, EnvironmentRoundTripsWithOriginsAndRedaction) {
  EnvWithOrigins env = {{"NCCL_DEBUG", {"INFO", "experiment env"}},
                        {"WANDB_API_KEY", {"abc123secret", "user environment"}},
                        {"HTTP_PROXY", {"http://u:pw12@proxy:3128", "user environment"}}};
  Redactor redactor(std::map<std::string, std::string>{{"WANDB_API_KEY", "abc123secret"}});
  ASSERT_TRUE(WriteEnvironment(dir_, env, redactor).ok());
  std::string dump = *ReadFile(dir_.env_dir() + "/primus_env_dump.txt");
  EXPECT_NE(dump.find("NCCL_DEBUG=INFO\n"), std::string::npos);
  EXPECT_NE(dump.find("WANDB_API_KEY=<redacted>\n"), std::string::npos);
  EXPECT_EQ(dump.find("abc123secret"), std::string::npos);
  EXPECT_EQ(dump.find("pw12"), std::string::npos);
  auto read = ReadEnvironment(dir_);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->at("NCCL_DEBUG").origin, "experiment env");
  EXPECT_EQ(read->at("WANDB_API_KEY").value, "<redacted>");
}

}  // namespace
}  // namespace primus::snapshot
