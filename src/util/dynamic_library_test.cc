#include "util/dynamic_library.h"

#include <gtest/gtest.h>

#include "util/files.h"
#include "util/scoped_temp_dir.h"

namespace primus {
namespace {

TEST(DynamicLibraryTest, MissingLibraryNamesWhatWasTriedAndHowToGetIt) {
  auto library = DynamicLibrary::Open({"libprimus-missing.so.1", "libprimus-missing.so"}, "the missing library",
                                      "install it");
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.error().code, ExitCode::kUnavailable);
  EXPECT_NE(library.error().message.find("cannot load the missing library"), std::string::npos);
  EXPECT_NE(library.error().message.find("libprimus-missing.so.1, libprimus-missing.so"), std::string::npos);
  EXPECT_EQ(library.error().hint, "install it");
}

TEST(DynamicLibraryTest, FindsSymbolsAndReportsTheFile) {
  auto library = DynamicLibrary::Open({"libopenblas.so.0"}, "OpenBLAS", "");
  ASSERT_TRUE(library.ok()) << library.error().message;
  EXPECT_NE(library->path().find("libopenblas"), std::string::npos) << library->path();
  EXPECT_NE(library->Find("cblas_sgemm"), nullptr);
  auto missing = library->Require("no_such_symbol");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no_such_symbol"), std::string::npos);
  EXPECT_NE(missing.error().message.find(library->path()), std::string::npos);
}

TEST(DynamicLibraryTest, FileContainsFindsTextAcrossChunks) {
  ScopedTempDir dir("contains");
  std::string content(3 << 20, 'x');
  content.replace((1 << 20) - 2, 4, "VCCL");  // straddles the first read boundary
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/lib.so", content).ok());
  EXPECT_TRUE(FileContains(dir.path() + "/lib.so", "VCCL"));
  EXPECT_FALSE(FileContains(dir.path() + "/lib.so", "NCCL"));
  EXPECT_FALSE(FileContains(dir.path() + "/none.so", "VCCL"));
}

}  // namespace
}  // namespace primus
