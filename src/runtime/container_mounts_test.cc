#include "runtime/container_mounts.h"

#include <gtest/gtest.h>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus::runtime {
namespace {

std::vector<std::string> Specs(const MountPlan& plan) {
  std::vector<std::string> specs;
  for (const Mount& mount : plan.mounts) specs.push_back(mount.Spec());
  return specs;
}

TEST(ContainerMountsTest, ParsesTheUsualForms) {
  auto full = ParseMount("/data:/mnt/data:ro", "/work", "--mount");
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->Spec(), "/data:/mnt/data:ro");
  EXPECT_TRUE(full->read_only());
  auto same = ParseMount("/scratch", "/work", "--mount");
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->Spec(), "/scratch:/scratch");
  auto relative = ParseMount("./out/../data:/data", "/work/exp", "--mount");
  ASSERT_TRUE(relative.ok());
  EXPECT_EQ(relative->host, "/work/exp/data");
  auto volume = ParseMount("cache:/cache", "/work", "--mount");
  ASSERT_TRUE(volume.ok());
  EXPECT_EQ(volume->host, "cache") << "a named volume stays a name";
  auto raw = ParseMount("type=bind,src=/a,dst=/b", "/work", "--mount");
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw->raw, "type=bind,src=/a,dst=/b");
}

TEST(ContainerMountsTest, RejectsMalformedValuesNamingTheFlag) {
  for (const char* text : {"", "/a:relative", "/a::ro", ":/b", "/a:/b:ro:extra"}) {
    auto mount = ParseMount(text, "/work", "container.mounts (flag --mount)");
    ASSERT_FALSE(mount.ok()) << text;
    EXPECT_EQ(mount.error().code, ExitCode::kUsage);
    EXPECT_NE(mount.error().message.find("flag --mount"), std::string::npos);
  }
}

TEST(ContainerMountsTest, BinaryHooksWorkingDirectoryThenTheRest) {
  ScopedTempDir dir("mounts");
  std::string cwd = dir.path() + "/project";
  ASSERT_TRUE(MakeDirs(cwd + "/configs").ok());
  ASSERT_TRUE(MakeDirs(dir.path() + "/shared/patches").ok());
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/shared/patches/fix.sh", "").ok());
  MountRequest inputs;
  inputs.binary = "/opt/build/primus-cli";
  inputs.hooks_dir = "/opt/build/hooks";
  inputs.cwd = cwd;
  inputs.read_only = {"configs", "../shared/patches/fix.sh", dir.path() + "/missing.yaml", "../shared/patches/fix.sh"};
  inputs.writable = {"output", dir.path() + "/workspace"};
  inputs.user = {*ParseMount("/data:/data:ro", cwd, "--mount")};
  MountPlan plan = PlanMounts(inputs);
  EXPECT_EQ(Specs(plan), (std::vector<std::string>{
                             "/opt/build/primus-cli:/opt/primus/bin/primus-cli:ro",
                             "/opt/build/hooks:/opt/primus/share/primus/hooks:ro",
                             cwd + ":" + cwd,
                             "/data:/data:ro",
                             dir.path() + "/shared/patches/fix.sh:" + dir.path() + "/shared/patches/fix.sh:ro",
                             dir.path() + "/workspace:" + dir.path() + "/workspace",
                         }));
  EXPECT_EQ(plan.workdir, cwd);
  EXPECT_EQ(plan.create, (std::vector<std::string>{dir.path() + "/workspace"}));
  EXPECT_TRUE(plan.warnings.empty());
}

TEST(ContainerMountsTest, NeverMountsASystemDirectoryAsTheWorkingDirectory) {
  for (const char* cwd : {"/", "/usr", "/etc/primus", "/proc/self"}) {
    MountRequest inputs;
    inputs.binary = "/b/primus-cli";
    inputs.cwd = cwd;
    MountPlan plan = PlanMounts(inputs);
    EXPECT_EQ(plan.mounts.size(), 1u) << cwd;
    EXPECT_EQ(plan.workdir, "") << cwd;
    ASSERT_EQ(plan.warnings.size(), 1u) << cwd;
  }
}

TEST(ContainerMountsTest, AUserMountAtTheSameTargetReplacesOurs) {
  MountRequest inputs;
  inputs.binary = "/b/primus-cli";
  inputs.cwd = "/work";
  inputs.user = {*ParseMount("/elsewhere:/work", "/work", "--mount")};
  MountPlan plan = PlanMounts(inputs);
  EXPECT_EQ(Specs(plan), (std::vector<std::string>{"/b/primus-cli:/opt/primus/bin/primus-cli:ro", "/elsewhere:/work"}));
  EXPECT_EQ(plan.workdir, "/work");
}

TEST(ContainerMountsTest, PathHelpers) {
  EXPECT_EQ(AbsolutePath("a/./b/../c", "/w"), "/w/a/c");
  EXPECT_EQ(AbsolutePath("/x/../../y", "/w"), "/y");
  EXPECT_TRUE(IsUnder("/a/b", "/a"));
  EXPECT_TRUE(IsUnder("/a", "/a"));
  EXPECT_FALSE(IsUnder("/ab", "/a"));
  EXPECT_TRUE(IsUnder("/anything", "/"));
}

}  // namespace
}  // namespace primus::runtime
