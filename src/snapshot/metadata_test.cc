#include "snapshot/metadata.h"

#include <gtest/gtest.h>

#include "util/scoped_temp_dir.h"
#include <stdlib.h>

#include "util/files.h"
#include "io/subprocess.h"

namespace primus::snapshot {
namespace {

TEST(MetadataTest, RoundTripsAndRedactsArgv) {
  ScopedTempDir scoped("meta");
  std::string dir = scoped.path();
  Redactor redactor(std::map<std::string, std::string>{{"HF_TOKEN", "hf_secret_value_1"}});
  RunMetadata metadata;
  metadata.argv = {"primus-cli", "direct", "--env", "HF_TOKEN=hf_secret_value_1", "--", "train", "pretrain"};
  metadata.cwd = "/work";
  metadata.task = "train pretrain";
  metadata.hosts = {"node1"};
  metadata.start_time = IsoTimeUtc(0);
  metadata.status = "failed";
  metadata.exit_code = 3;
  metadata.restarts = 2;
  metadata.root_cause = {{"rank", 1}, {"message", "token hf_secret_value_1 rejected"}};
  metadata.excluded_nodes.push_back({{"host", "node2"}, {"reason", "the hang's culprit: rank 1"}});
  ASSERT_TRUE(WriteMetadata(dir + "/metadata.json", metadata, redactor).ok());
  std::string text = *ReadFile(dir + "/metadata.json");
  EXPECT_EQ(text.find("hf_secret_value_1"), std::string::npos) << text;
  auto read = ReadMetadata(dir + "/metadata.json");
  ASSERT_TRUE(read.ok()) << read.error().Format();
  EXPECT_EQ(read->status, "failed");
  EXPECT_EQ(read->exit_code, 3);
  EXPECT_EQ(read->restarts, 2);
  EXPECT_EQ(read->root_cause["rank"], 1);
  ASSERT_EQ(read->excluded_nodes.size(), 1u);
  EXPECT_EQ(read->excluded_nodes[0]["host"], "node2");
  EXPECT_EQ(read->start_time, "1970-01-01T00:00:00Z");
}

// Issue 16: a failure message quoting API_KEY="x" (and other escapes JSON
// needs) left metadata.json unparsable when its serialized text was
// redacted. Every path (running, failed with a launcher error, failed with a
// worker's root cause) writes a file that reads back, secrets gone.
TEST(MetadataTest, StaysValidJsonWhateverAMessageQuotes) {
  ScopedTempDir scoped("meta");
  std::string path = scoped.path() + "/metadata.json";
  Redactor redactor(std::map<std::string, std::string>{{"WANDB_API_KEY", "wandb-secret-9"}});
  const std::vector<std::string> messages = {
      "ValueError: API_KEY=\"x\" was rejected", "API_KEY=\\\"x\\\" escaped twice",
      "key wandb-secret-9 in \"quotes\" and \\ backslashes \\\"", "API_KEY=\"\" empty", "API_KEY=\\", "tab\t\x1b[2J\n\"",
      "API_KEY=\"unterminated"};
  for (const std::string& message : messages) {
    SCOPED_TRACE(message);
    RunMetadata metadata;
    metadata.argv = {"primus-cli", "direct", "--", "train", "pretrain", "wandb.api_key=wandb-secret-9"};
    ASSERT_TRUE(WriteMetadata(path, metadata, redactor).ok());
    ASSERT_TRUE(ReadMetadata(path).ok());
    metadata.status = "failed";
    metadata.root_cause = {{"launcher_error", message}};
    ASSERT_TRUE(WriteMetadata(path, metadata, redactor).ok());
    auto read = ReadMetadata(path);
    ASSERT_TRUE(read.ok()) << read.error().Format() << "\n" << *ReadFile(path);
    metadata.root_cause = {{"rank", 0}, {"message", message}, {"hung", false}};
    ASSERT_TRUE(WriteMetadata(path, metadata, redactor).ok());
    read = ReadMetadata(path);
    ASSERT_TRUE(read.ok()) << read.error().Format() << "\n" << *ReadFile(path);
    std::string text = *ReadFile(path);
    EXPECT_EQ(text.find("wandb-secret-9"), std::string::npos) << text;
    if (message.starts_with("ValueError")) {
      EXPECT_EQ(read->root_cause["message"], "ValueError: API_KEY=\"<redacted>\" was rejected");
    }
  }
}

TEST(MetadataTest, GitCommitAndDirtyFlag) {
  if (FindExecutable("git").empty()) GTEST_SKIP() << "git not installed";
  ScopedTempDir scoped("git");
  std::string repo = scoped.path();
  CommandOptions options;
  options.cwd = repo;
  for (auto argv : std::vector<std::vector<std::string>>{
           {"git", "init", "-q"}, {"sh", "-c", "echo a > f && git add f"},
           {"git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"}}) {
    ASSERT_EQ(RunCommand(argv, options)->exit_code, 0);
  }
  auto clean = DetectGit(repo);
  ASSERT_TRUE(clean.has_value());
  EXPECT_EQ(clean->commit.size(), 40u);
  EXPECT_FALSE(clean->dirty);
  EXPECT_TRUE(clean->diff_sha256.empty());
  ASSERT_TRUE(WriteFileAtomic(repo + "/f", "changed").ok());
  auto dirty = DetectGit(repo);
  EXPECT_TRUE(dirty->dirty);
  EXPECT_NE(dirty->diff.find("+changed"), std::string::npos) << dirty->diff;
  EXPECT_EQ(dirty->diff_sha256.size(), 64u);
  ASSERT_TRUE(WriteFileAtomic(repo + "/f", "changed again").ok());
  EXPECT_NE(DetectGit(repo)->diff_sha256, dirty->diff_sha256) << "other changes, another hash";
  EXPECT_FALSE(DetectGit("/").has_value());
}

TEST(MetadataTest, TheLaunchRoundTripsAndItsSecretsAreRedacted) {
  ScopedTempDir scoped("launch");
  Redactor redactor(std::map<std::string, std::string>{{"WANDB_API_KEY", "wandb_secret_1"}});
  RunMetadata metadata;
  metadata.git = GitState{};
  metadata.git->commit = "abc";
  metadata.git->dirty = true;
  metadata.git->diff_sha256 = std::string(64, 'f');
  metadata.git->diff = "the diff itself";
  metadata.backend_args = {"--dropout", "0.1", "--wandb-key", "wandb_secret_1"};
  metadata.hook_args = {"--data-path", "/data"};
  metadata.worker_argv = {"python3", "train.py"};
  metadata.layout = RunLayout{2, 8, 16};
  std::string path = scoped.path() + "/metadata.json";
  ASSERT_TRUE(WriteMetadata(path, metadata, redactor).ok());
  std::string text = *ReadFile(path);
  EXPECT_EQ(text.find("wandb_secret_1"), std::string::npos) << text;
  EXPECT_EQ(text.find("the diff itself"), std::string::npos) << "the diff goes to code/, not here";
  auto back = ReadMetadata(path);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->backend_args, (std::vector<std::string>{"--dropout", "0.1", "--wandb-key", "<redacted>"}));
  EXPECT_EQ(back->hook_args, metadata.hook_args);
  EXPECT_EQ(back->worker_argv, metadata.worker_argv);
  ASSERT_TRUE(back->layout);
  EXPECT_EQ(back->layout->world_size, 16);
  EXPECT_EQ(back->git->diff_sha256, std::string(64, 'f'));
  // An older snapshot has no launch: nothing is made up for it.
  ASSERT_TRUE(WriteFileAtomic(path, R"({"argv": ["primus-cli"], "launch": {"layout": "odd"}})").ok());
  back = ReadMetadata(path);
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->layout);
  EXPECT_TRUE(back->backend_args.empty());
}

TEST(MetadataTest, GarbageFileIsAClearError) {
  ScopedTempDir scoped("meta");
  std::string dir = scoped.path();
  ASSERT_TRUE(WriteFileAtomic(dir + "/metadata.json", "{not json").ok());
  auto read = ReadMetadata(dir + "/metadata.json");
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().message.find("not valid JSON"), std::string::npos);
}

}  // namespace
}  // namespace primus::snapshot
