#include "runtime/container_engine_options.h"

#include <gtest/gtest.h>

#include "runtime/runtime.h"

namespace primus::runtime {
namespace {

const std::vector<OptionSpec>& Direct() { return RuntimeRegistry::Global().Find("direct")->options(); }

TEST(ContainerEngineOptionsTest, UnknownFlagsAreGroupedWithTheirValuesAndNamed) {
  auto options = CheckEngineOptions({"--cpus", "16", "--privileged", "--memory=64G", "--platform", "linux/amd64"}, Direct());
  ASSERT_TRUE(options.ok()) << options.error().Format();
  ASSERT_EQ(options->size(), 4u);
  EXPECT_EQ((*options)[0].flag, "--cpus");
  EXPECT_EQ((*options)[0].tokens, (std::vector<std::string>{"--cpus", "16"}));
  EXPECT_EQ((*options)[1].tokens, (std::vector<std::string>{"--privileged"}));
  EXPECT_EQ((*options)[2].flag, "--memory");
  EXPECT_EQ((*options)[3].flag, "--platform") << "docker and podman have --platform too";
  EXPECT_EQ(DescribeEngineOption((*options)[0], "podman"),
            "passing --cpus 16 to podman as an engine option (primus-cli does not know it)");
}

TEST(ContainerEngineOptionsTest, WhatCannotBeAnEngineOptionIsRefused) {
  struct Case {
    std::vector<std::string> tokens;
    const char* message;
    const char* hint;
  };
  for (const Case& c : {Case{{"stray"}, "'stray' is neither an option nor the value of one", "after '--'"},
                        Case{{"--nproc_per_node", "2"}, "--nproc_per_node cannot be an option of docker or podman",
                             "-- direct --nproc-per-node N|auto -- <task>"},
                        Case{{"--shm_sise=1g"}, "--shm_sise cannot be an option", "spelled with '-' (--shm-sise)"},
                        Case{{"--numa"}, "--numa is an option of direct, not of the container engine", "-- direct --numa --"},
                        Case{{"--single"}, "--single is an option of direct", "-- direct --single --"},
                        Case{{"--script", "x.py"}, "--script is an option of direct", "-- direct --script FILE --"}}) {
    auto options = CheckEngineOptions(c.tokens, Direct());
    ASSERT_FALSE(options.ok()) << c.tokens.front();
    EXPECT_EQ(options.error().code, ExitCode::kUsage);
    EXPECT_NE(options.error().message.find(c.message), std::string::npos) << options.error().message;
    EXPECT_NE(options.error().hint.find(c.hint), std::string::npos) << options.error().hint;
  }
}

}  // namespace
}  // namespace primus::runtime
