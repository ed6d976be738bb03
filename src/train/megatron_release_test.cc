#include "train/megatron_release.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "config/yaml_loader.h"
#include "platform/sysfs_files.h"
#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::train {
namespace {

using config::Value;

Value Yaml(const std::string& text) {
  auto value = config::LoadYamlString(text, "exp.yaml", Environment({}));
  EXPECT_TRUE(value.ok()) << value.error().Format();
  return *value;
}

// A checkout as small as the reader accepts: arguments.py's parser with one
// group of options, and package_info.py.
void WriteCheckout(const std::string& root, const std::string& extra_option, const std::string& minor) {
  ASSERT_TRUE(MakeDirs(root + "/megatron/training").ok());
  ASSERT_TRUE(MakeDirs(root + "/megatron/core").ok());
  ASSERT_TRUE(WriteFileAtomic(root + "/megatron/core/package_info.py",
                              "MAJOR = 0\nMINOR = " + minor + "\nPATCH = 2\n").ok());
  std::string arguments =
      "import argparse\n\n"
      "def add_megatron_arguments(parser):\n"
      "    parser = _add_network_size_args(parser)\n"
      "    return parser\n\n"
      "def _add_network_size_args(parser):\n"
      "    group = parser.add_argument_group(title='network size')\n"
      "    group.add_argument('--num-layers', type=int, default=None)\n" +
      extra_option + "    return parser\n";
  ASSERT_TRUE(WriteFileAtomic(root + "/megatron/training/arguments.py", arguments).ok());
}

TEST(MegatronReleaseTest, EveryPinnedReleaseIsCompiledIn) {
  std::vector<std::string> releases = CompiledMegatronReleases();
  EXPECT_EQ(releases, (std::vector<std::string>{"core_v0.12.3", "core_v0.13.0", "core_v0.13.1", "core_v0.14.0",
                                                "core_v0.15.3", "core_v0.16.1", "core_v0.17.1", "core_v0.18.2",
                                                "core_v0.19.0"}));
  // A prefix takes the newest patch release; a prefix ends at a dot.
  EXPECT_EQ(CompiledMegatronTable("core_v0.13")->release(), "core_v0.13.1");
  EXPECT_EQ(CompiledMegatronTable("core_v0.13.0")->release(), "core_v0.13.0");
  EXPECT_EQ(CompiledMegatronTable("core_v0.1"), nullptr);
  EXPECT_EQ(CompiledMegatronTable("core_v0.11"), nullptr);
  // Options come and go between releases.
  EXPECT_TRUE(CompiledMegatronTable("core_v0.12")->DestOf("sft").empty());
  EXPECT_EQ(CompiledMegatronTable("core_v0.13")->DestOf("sft"), "sft");
  EXPECT_EQ(CompiledMegatronTable("core_v0.12")->options().size(), 455u);
}

TEST(MegatronReleaseTest, AReleaseNamesItsTableAndAnUnknownOneIsAnErrorAtItsKey) {
  Value chosen = Yaml("megatron:\n  release: core_v0.14\n");
  auto table = ChooseMegatronTable({&chosen, Environment({}), "python3", ""});
  ASSERT_TRUE(table.ok()) << table.error().Format();
  EXPECT_EQ(table->flags->release(), "core_v0.14.0");
  EXPECT_EQ(table->source, "core_v0.14.0 (compiled in; megatron.release core_v0.14)");

  Value unknown = Yaml("megatron:\n  release: core_v0.9\n");
  auto refused = ChooseMegatronTable({&unknown, Environment({}), "python3", ""});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().Format().rfind("error: exp.yaml:2:12: megatron.release core_v0.9: no compiled option table", 0),
            0u)
      << refused.error().Format();
  EXPECT_NE(refused.error().hint.find("core_v0.12.3"), std::string::npos);

  // No checkout here and no release named: the newest.
  Value plain = Yaml("megatron:\n  script: pretrain_gpt.py\n");
  auto newest = ChooseMegatronTable({&plain, Environment({{"MEGATRON_PATH", "/nonexistent"}}), "python3", ""});
  ASSERT_TRUE(newest.ok());
  EXPECT_EQ(newest->flags->release(), "core_v0.19.0");
  // checkout: only a checkout will do.
  Value checkout = Yaml("megatron:\n  release: checkout\n");
  EXPECT_FALSE(ChooseMegatronTable({&checkout, Environment({}), "python3", ""}).ok());
}

// A fork's own option is known once its checkout is read; the table is
// cached (0600 in a 0700 directory) and read again when arguments.py changes.
TEST(MegatronReleaseTest, ACheckoutsOwnTableIsReadAndCached) {
  if (!IsExecutableFile("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3 to run the reader";
  ScopedTempDir dir("megatron-release");
  std::string root = dir.path() + "/fork";
  WriteCheckout(root, "    group.add_argument('--batch-p2p-communication', action='store_true')\n", "13");
  Value experiment = Yaml("megatron:\n  path: " + root + "\n");
  Environment env({{"XDG_CACHE_HOME", dir.path() + "/cache"}});
  std::string reader = std::string(PRIMUS_SOURCE_DIR) + "/python/megatron_option_table.py";
  auto table = ChooseMegatronTable({&experiment, env, "/usr/bin/python3", reader});
  ASSERT_TRUE(table.ok()) << table.error().Format();
  EXPECT_TRUE(table->warnings.empty());
  EXPECT_EQ(table->flags->DestOf("batch_p2p_communication"), "batch_p2p_communication");
  EXPECT_EQ(table->flags->release(), "core_v0.13.2+checkout");
  EXPECT_NE(table->source.find("the checkout " + root + " (2 options read from its arguments.py)"), std::string::npos)
      << table->source;
  std::string cache = dir.path() + "/cache/primus-cli/megatron-options";
  struct stat status {};
  ASSERT_EQ(::stat(cache.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0700u);
  std::vector<std::string> cached = platform::ListDirectory(cache);
  ASSERT_EQ(cached.size(), 1u);
  ASSERT_EQ(::stat((cache + "/" + cached[0]).c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0600u);

  // The cache answers without the reader (a reader that does not exist).
  auto again = ChooseMegatronTable({&experiment, env, "/usr/bin/python3", dir.path() + "/no-reader.py"});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->warnings.empty()) << again->warnings.front();
  EXPECT_EQ(again->flags->DestOf("batch_p2p_communication"), "batch_p2p_communication");

  // A changed arguments.py is read again; when that fails, the compiled
  // table of the checkout's release (package_info.py: 0.13) is used, with a warning.
  WriteCheckout(root, "    group.add_argument('--another-option', type=int)\n", "13");
  auto changed = ChooseMegatronTable({&experiment, env, "/usr/bin/python3", reader});
  ASSERT_TRUE(changed.ok());
  EXPECT_EQ(changed->flags->DestOf("another_option"), "another_option");
  EXPECT_TRUE(changed->flags->DestOf("batch_p2p_communication").empty());
  WriteCheckout(root, "    group.add_argument('--third-option', type=int)\n", "13");
  auto fallback = ChooseMegatronTable({&experiment, env, "/usr/bin/python3", dir.path() + "/no-reader.py"});
  ASSERT_TRUE(fallback.ok());
  EXPECT_EQ(fallback->flags->release(), "core_v0.13.1");
  ASSERT_EQ(fallback->warnings.size(), 1u);
  EXPECT_NE(fallback->warnings[0].find("options are checked against core_v0.13.1 (compiled in; the checkout says "
                                       "core_v0.13.2)"),
            std::string::npos)
      << fallback->warnings[0];
}

TEST(MegatronReleaseTest, TheCheckoutsReleaseIsReadFromPackageInfo) {
  ScopedTempDir dir("megatron-release");
  WriteCheckout(dir.path(), "", "16");
  EXPECT_EQ(CheckoutMegatronRelease(dir.path()), "core_v0.16.2");
  EXPECT_EQ(CheckoutMegatronRelease(dir.path() + "/none"), "");
}

}  // namespace
}  // namespace primus::train
