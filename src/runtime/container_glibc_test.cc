#include "runtime/container_glibc.h"

#include <gtest/gtest.h>

namespace primus::runtime {
namespace {

TEST(ContainerGlibcTest, ReadsTheVersionsThisBinaryNeeds) {
  // This test binary is built like primus-cli, against the host's glibc
  // (2.34 or newer: __libc_start_main@GLIBC_2.34).
  auto mine = RequiredGlibc("/proc/self/exe");
  ASSERT_TRUE(mine.ok()) << mine.error().Format();
  EXPECT_GE(CompareVersions(*mine, "2.34"), 0) << *mine;
}

TEST(ContainerGlibcTest, NotAnElfFile) {
  auto result = RequiredGlibc(PRIMUS_SOURCE_DIR "/README.md");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("not a 64-bit ELF"), std::string::npos);
  EXPECT_FALSE(RequiredGlibc("/nonexistent/primus-cli").ok());
}

TEST(ContainerGlibcTest, ComparesVersionsNumerically) {
  EXPECT_LT(CompareVersions("2.9", "2.34"), 0);
  EXPECT_GT(CompareVersions("2.36", "2.34"), 0);
  EXPECT_EQ(CompareVersions("2.34", "2.34.0"), 0);
  EXPECT_LT(CompareVersions("2.2.5", "2.3"), 0);
}

TEST(ContainerGlibcTest, ExplainsTheLoadersRefusal) {
  std::string output =
      "/opt/primus/bin/primus-cli: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found "
      "(required by /opt/primus/bin/primus-cli)\n";
  auto error = ExplainLoaderFailure(output, "ubuntu:20.04", "/opt/primus/bin/primus-cli", "2.36");
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, ExitCode::kUnavailable);
  EXPECT_NE(error->message.find("image ubuntu:20.04 is too old"), std::string::npos) << error->message;
  EXPECT_NE(error->message.find("glibc 2.36 or newer"), std::string::npos);
  EXPECT_NE(error->message.find("GLIBC_2.34' not found"), std::string::npos);
  EXPECT_NE(error->hint.find("2.36"), std::string::npos);
}

TEST(ContainerGlibcTest, ExplainsAnImageWithoutGlibc) {
  std::string crun = "Error: crun: executable file `/opt/primus/bin/primus-cli` not found: No such file or directory: "
                     "OCI runtime attempted to invoke a command that was not found\n";
  auto error = ExplainLoaderFailure(crun, "alpine", "/opt/primus/bin/primus-cli", "2.36");
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->message.find("no glibc loader"), std::string::npos);
  auto no_libm = ExplainLoaderFailure(
      "/opt/primus/bin/primus-cli: error while loading shared libraries: libm.so.6: cannot open shared object file: "
      "No such file or directory\n",
      "local/mini", "/opt/primus/bin/primus-cli", "2.36");
  ASSERT_TRUE(no_libm.has_value());
  EXPECT_NE(no_libm->message.find("image local/mini has no libm.so.6"), std::string::npos) << no_libm->message;
  EXPECT_FALSE(ExplainLoaderFailure("Traceback: FileNotFoundError: No such file or directory: 'x.py'\n", "img",
                                    "/opt/primus/bin/primus-cli", "2.36")
                   .has_value())
      << "a task's own error is not the loader's";
}

}  // namespace
}  // namespace primus::runtime
