#include "snapshot/redaction.h"

#include <gtest/gtest.h>

namespace primus::snapshot {
namespace {

TEST(RedactionTest, SecretNamesAnyCase) {
  for (const char* name : {"HF_TOKEN", "WANDB_API_KEY", "aws_secret_access_key", "DB_PASSWORD", "GIT_CREDENTIALS",
                           "PRIMUS_JOB_TOKEN", "MYSQL_PASSWD"}) {
    EXPECT_TRUE(IsSecretName(name)) << name;
  }
  for (const char* name : {"NCCL_IB_HCA", "MASTER_ADDR", "PATH", "HOME"}) EXPECT_FALSE(IsSecretName(name)) << name;
}

TEST(RedactionTest, UrlPasswordsGoEvenUnderHarmlessNames) {
  EXPECT_EQ(RedactUrlCredentials("https://alice:s3cr3t@example.com/repo.git"),
            "https://alice:<redacted>@example.com/repo.git");
  EXPECT_EQ(RedactUrlCredentials("http://proxy:8080/"), "http://proxy:8080/");
  EXPECT_EQ(RedactUrlCredentials("no url here"), "no url here");
}

TEST(RedactionTest, AssignmentsToSecretNamesAreRedactedWhereverTheyAppear) {
  EXPECT_EQ(RedactAssignments("--env MY_API_KEY=key-777 --env RANK=0"), "--env MY_API_KEY=<redacted> --env RANK=0");
  EXPECT_EQ(RedactAssignments("[\"HF_TOKEN=abc\", \"x\"]"), "[\"HF_TOKEN=<redacted>\", \"x\"]");
  Redactor nothing_known(std::map<std::string, std::string>{});
  EXPECT_EQ(nothing_known.Text("primus-cli direct --env DB_PASSWORD=hunter22 -- run x"),
            "primus-cli direct --env DB_PASSWORD=<redacted> -- run x");
}

TEST(RedactionTest, SecretValuesAreReplacedInAnyText) {
  Redactor redactor(std::map<std::string, std::string>{{"HF_TOKEN", "hf_abcdef123456"}, {"RANK", "0"}, {"SHORT_KEY", "ab"}});
  EXPECT_EQ(redactor.Value("HF_TOKEN", "hf_abcdef123456"), "<redacted>");
  EXPECT_EQ(redactor.Value("RANK", "0"), "0");
  EXPECT_EQ(redactor.Text("train.py --token hf_abcdef123456 --x"), "train.py --token <redacted> --x");
  EXPECT_EQ(redactor.Text("ab stays: too short to be recognised safely"), "ab stays: too short to be recognised safely");
}

}  // namespace
}  // namespace primus::snapshot
