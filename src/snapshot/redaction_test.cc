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

TEST(RedactionTest, SecretNamesByWordNotBySubstring) {
  for (const char* name : {"S3_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "env.GITHUB_TOKEN", "wandb.api_key", "apiKey",
                           "clientSecret", "HFTOKEN", "ssh-private-key", "OPENAI_APIKEY", "AWS_ACCESS_KEY_ID",
                           "db.password", "REGISTRY_PASSPHRASE", "gcp_credentials", "--hf-token", "TOKEN_2"}) {
    EXPECT_TRUE(IsSecretName(name)) << name;
  }
  // Model and tokenizer settings must survive in resolved.yaml, or a replay breaks.
  for (const char* name : {"TOKENIZERS_PARALLELISM", "tokenizer", "max_tokens", "pad_token", "eos_token_id",
                           "bos_token", "sort_key", "key_dim", "KEYBOARD", "MONKEY_PATCH", "num_key_value_heads",
                           "keyword", "moe_token_dispatcher_type", "moe_token_drop_policy", "HF_TOKEN_PATH",
                           "token_budget", ""}) {
    EXPECT_FALSE(IsSecretName(name)) << name;
  }
}

TEST(RedactionTest, WhatPeopleNameSecretsIsCaught) {
  for (const char* name : {"MY_PASS", "DB_PWD", "db.pwd", "GH_PAT", "OPENAI_KEY", "SLACK_WEBHOOK_URL", "WEBHOOK",
                           "AZURE_STORAGE_CONNECTION_STRING", "BASIC_AUTH", "AUTH", "FLASK_SESSION", "SSH_PRIVATE",
                           "REQUEST_SIGNATURE", "BROWSER_COOKIE", "AccountKey", "Password", "pwd", "api_key",
                           "slack_webhook_url", "azure_connection_string"}) {
    EXPECT_TRUE(IsSecretName(name)) << name;
  }
  // The shell's working directory, login sessions, field names and settings a replay needs.
  for (const char* name : {"PWD", "OLDPWD", "key", "text_key", "num_nodes_env_key", "image_key", "caption_key",
                           "pass", "session", "SSH_ASKPASS", "COMPASS", "PATH", "patience", "PRIVATE_DIR_MODE",
                           "max_tokens", "linear_num_key_heads", "apply_query_key_layer_scaling", "answer_key",
                           "question_key", "reward_key", "file_pat", "forward_pass", "use_auth", "DESKTOP_SESSION",
                           "NUM_NODES_ENV_KEY", "SORT_KEY"}) {
    EXPECT_FALSE(IsSecretName(name)) << name;
  }
}

TEST(RedactionTest, SecretsInsideConnectionStringsAndWellKnownTokenShapes) {
  Redactor redactor;
  EXPECT_EQ(redactor.Text("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a1b2c3==;EndpointSuffix=x"),
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=<redacted>;EndpointSuffix=x");
  EXPECT_EQ(redactor.Text("Server=db;Database=x;User Id=me;Password=hunter22;"),
            "Server=db;Database=x;User Id=me;Password=<redacted>;");
  EXPECT_EQ(redactor.Text("Driver=x;uid=me;pwd=hunter22"), "Driver=x;uid=me;pwd=<redacted>");
  EXPECT_EQ(redactor.Text("postgres://me:hunter22@db/x"), "postgres://me:<redacted>@db/x");
  const char* tokens[] = {"hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
                          "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
                          "gho_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
                          "ghu_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
                          "ghs_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
                          "ghr_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
                          "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
                          "xoxb-1234567890-abcdefghij",
                          "AKIAIOSFODNN7EXAMPLE",
                          "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx",
                          "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"};
  for (const char* token : tokens) {
    EXPECT_EQ(redactor.Text(std::string("login with ") + token + " now"), "login with <redacted> now") << token;
    EXPECT_EQ(redactor.Text(token), "<redacted>") << "alone: " << token;
  }
  EXPECT_EQ(redactor.Text("post to https://hooks.slack.com/services/T000/B000/XXXXXXXX done"),
            "post to https://<redacted> done");
  // Not secrets: short or ordinary words of the same beginnings.
  for (const char* text : {"sk-learn", "hf_home", "the AKIA prefix", "eyJ alone", "scikit-learn==1.3"}) {
    EXPECT_EQ(redactor.Text(text), text);
  }
}

TEST(RedactionTest, QuotedAssignmentsKeepTheirQuotes) {
  EXPECT_EQ(RedactAssignments("failed: API_KEY=\"x y z\" rejected"), "failed: API_KEY=\"<redacted>\" rejected");
  EXPECT_EQ(RedactAssignments("export DB_PASSWORD='p w'"), "export DB_PASSWORD='<redacted>'");
  EXPECT_EQ(RedactAssignments("--api-key=abc123 --lr=1e-3"), "--api-key=<redacted> --lr=1e-3");
  EXPECT_EQ(RedactAssignments("env.GITHUB_TOKEN=ghp_abc"), "env.GITHUB_TOKEN=<redacted>");
  EXPECT_EQ(RedactAssignments("max_tokens=4096 TOKENIZERS_PARALLELISM=false"), "max_tokens=4096 TOKENIZERS_PARALLELISM=false");
}

TEST(RedactionTest, YamlLinesOfSecretKeys) {
  std::string yaml =
      "env:\n"
      "  S3_SECRET_ACCESS_KEY: s3-abc-123   \n"
      "  HF_TOKEN: ${HF_TOKEN}\n"
      "  'GITHUB_TOKEN': \"ghp_x\"\n"
      "  NCCL_DEBUG: INFO\n"
      "  tokenizer: /data/tok.model\n"
      "  pad_token: <pad>\n"
      "wandb:\n"
      "  - api_key: wk-1\n"
      "  password: |\n"
      "    block\n";
  EXPECT_EQ(RedactYamlKeys(yaml),
            "env:\n"
            "  S3_SECRET_ACCESS_KEY: <redacted>   \n"
            "  HF_TOKEN: ${HF_TOKEN}\n"
            "  'GITHUB_TOKEN': <redacted>\n"
            "  NCCL_DEBUG: INFO\n"
            "  tokenizer: /data/tok.model\n"
            "  pad_token: <pad>\n"
            "wandb:\n"
            "  - api_key: <redacted>\n"
            "  password: |\n"
            "    block\n");
}

TEST(RedactionTest, LearntValuesAreRedactedInsideOtherStrings) {
  Redactor redactor;
  redactor.Learn("S3_SECRET_ACCESS_KEY", "s3-abc-123");
  redactor.Learn("NCCL_DEBUG", "INFO");
  redactor.Learn("HF_TOKEN", "true");  // too common to be learnt
  redactor.LearnValue("ghp_override_1");
  EXPECT_EQ(redactor.Text("--url=s3://bucket?key=s3-abc-123&x ghp_override_1 INFO true"),
            "--url=s3://bucket?key=<redacted>&x <redacted> INFO true");
  EXPECT_EQ(redactor.secret_values(), (std::vector<std::string>{"ghp_override_1", "s3-abc-123"}));
}

// Failure messages quoting API_KEY="x" or a secret: redacted as data, so the
// document stays valid JSON (redacting its serialized text dropped the
// backslash of \" and broke it).
TEST(RedactionTest, JsonIsRedactedAsDataAndStaysValid) {
  Redactor redactor(std::map<std::string, std::string>{{"HF_TOKEN", "hf_value_42"}});
  nlohmann::ordered_json cause = {
      {"message", "ValueError: API_KEY=\"x\" refused; token hf_value_42; \\\" end"},
      {"nested", {{"list", {"export WANDB_API_KEY='k k'", "https://u:pw@h/x"}}}},
      {"api_key", "plain"},
      {"exit_code", 1}};
  nlohmann::ordered_json redacted = redactor.Json(cause);
  std::string text = redacted.dump(2);
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << text;
  EXPECT_EQ(parsed["message"], "ValueError: API_KEY=\"<redacted>\" refused; token <redacted>; \\\" end");
  EXPECT_EQ(parsed["nested"]["list"][0], "export WANDB_API_KEY='<redacted>'");
  EXPECT_EQ(parsed["nested"]["list"][1], "https://u:<redacted>@h/x");
  EXPECT_EQ(parsed["api_key"], "<redacted>");
  EXPECT_EQ(parsed["exit_code"], 1);
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
