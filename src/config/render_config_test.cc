#include "config/render_config.h"

#include <gtest/gtest.h>

#include "config/launcher_config.h"
#include "config/testdata_path.h"
#include "config/yaml_parser.h"

namespace primus::config {
namespace {

Value Yaml(std::string_view text) {
  YamlParseOptions options;
  options.source = "exp.yaml";
  Result<Value> value = ParseYaml(text, options);
  EXPECT_TRUE(value.ok()) << value.error().message;
  return value.ok() ? *value : Value();
}

TEST(RenderConfigTest, WithoutOriginIsPlainYaml) {
  Value tree = Yaml("direct:\n  nnodes: 2\n  env: {NCCL_DEBUG: INFO}\n  patch: []\n"
                    "container:\n  mounts: [/a:/a, /b:/b]\n  image: \"\"\n");
  EXPECT_EQ(RenderConfig(tree, /*with_origin=*/false),
            "direct:\n"
            "  nnodes: 2\n"
            "  env:\n"
            "    NCCL_DEBUG: INFO\n"
            "  patch: []\n"
            "container:\n"
            "  mounts:\n"
            "    - /a:/a\n"
            "    - /b:/b\n"
            "  image: \"\"\n");
}

TEST(RenderConfigTest, EveryLeafIsFollowedByItsAlignedOrigin) {
  Value tree = Yaml("direct:\n  nnodes: 2\n  env: {NCCL_DEBUG: INFO}\n  patch: []\n"
                    "container:\n  mounts: [/a:/a]\n");
  tree.Find("direct")->Put("master_port", Value::Int(29500, Origin::Set()));
  tree.Find("direct")->Put("log_level", Value::String("info", Origin::Default()));
  EXPECT_EQ(RenderConfig(tree, /*with_origin=*/true),
            "direct:\n"
            "  nnodes: 2           # exp.yaml:2:11\n"
            "  env:\n"
            "    NCCL_DEBUG: INFO  # exp.yaml:3:21\n"
            "  patch: []           # exp.yaml:4:10\n"
            "  master_port: 29500  # --set\n"
            "  log_level: info     # default\n"
            "container:\n"
            "  mounts:\n"
            "    - /a:/a           # exp.yaml:6:12\n");
}

// config show --json: the same values, and each leaf's origin by its dotted key.
TEST(RenderConfigTest, JsonHasTheValuesAndTheirOriginsByKey) {
  Value tree = Yaml("direct:\n  nnodes: 2\n  env: {NCCL_DEBUG: INFO}\n");
  tree.Find("direct")->Put("master_port", Value::Int(29500, Origin::Set()));
  EXPECT_EQ(RenderConfigJson(tree, /*with_origin=*/false),
            "{\n  \"config\": {\n    \"direct\": {\n      \"nnodes\": 2,\n      \"env\": {\n"
            "        \"NCCL_DEBUG\": \"INFO\"\n      },\n      \"master_port\": 29500\n    }\n  }\n}\n");
  std::string with_origin = RenderConfigJson(tree, /*with_origin=*/true);
  EXPECT_NE(with_origin.find("\"direct.nnodes\": \"exp.yaml:2:11\""), std::string::npos) << with_origin;
  EXPECT_NE(with_origin.find("\"direct.env.NCCL_DEBUG\": \"exp.yaml:3:21\""), std::string::npos) << with_origin;
  EXPECT_NE(with_origin.find("\"direct.master_port\": \"--set\""), std::string::npos) << with_origin;
}

// A collection inside a list shows the item's origin once, on its first line.
TEST(RenderConfigTest, ACollectionInAListShowsItsOriginOnItsFirstLine) {
  Value tree = Yaml("stages:\n  - {name: a, steps: 2}\n  - [x, z]\n");
  EXPECT_EQ(RenderConfig(tree, /*with_origin=*/true),
            "stages:\n"
            "  - name: a  # exp.yaml:2:5\n"
            "    steps: 2\n"
            "  - - x      # exp.yaml:3:5\n"
            "    - z\n");
  EXPECT_EQ(RenderConfig(tree, /*with_origin=*/false), tree.ToYaml());
}

TEST(RenderConfigTest, ShowsTheEffectiveLauncherConfiguration) {
  LauncherSources sources;
  sources.user_file = TestDataPath("launcher/home.yaml");
  sources.environment = Environment({{"PRIMUS_CONTAINER_IMAGE", "rocm/primus:v1"}});
  sources.flags = {{"direct.nnodes", {"2"}, "--nnodes"}};
  Result<LauncherConfig> config = LoadLauncherConfig(sources);
  ASSERT_TRUE(config.ok()) << config.error().message;
  std::string text = RenderConfig(config->effective(), /*with_origin=*/true);
  std::string home = TestDataPath("launcher/home.yaml");
  EXPECT_NE(text.find("main:\n  log_level: info"), std::string::npos) << text;
  EXPECT_NE(text.find("  nnodes: 2 "), std::string::npos) << text;
  EXPECT_NE(text.find("# flag --nnodes\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  image: rocm/primus:v1 "), std::string::npos) << text;
  EXPECT_NE(text.find("# env PRIMUS_CONTAINER_IMAGE\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  account: home-account "), std::string::npos) << text;
  EXPECT_NE(text.find("# " + home + ":3:12\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  console_prefix: \"[{host}:{rank}] \" "), std::string::npos) << text;
  // Every schema key appears.
  for (const char* key : {"  nproc_per_node:", "  hang_timeout:", "  shm_size:", "  requeue:",
                          "  service_account:", "  platform:"}) {
    EXPECT_NE(text.find(key), std::string::npos) << key;
  }
}

}  // namespace
}  // namespace primus::config
