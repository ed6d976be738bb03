#include "benchmark/progress_file.h"

#include <gtest/gtest.h>

#include "util/scoped_temp_dir.h"

namespace primus::benchmark {
namespace {

TEST(ProgressFileTest, WhatOneProcessWritesAnotherReads) {
  ScopedTempDir dir("progress");
  std::string path = dir.path() + "/progress";
  ProgressState state;
  EXPECT_FALSE(ReadProgressFile(path, &state)) << "no file yet";
  WriteProgressFile(path, 2, 7, "(2048x2048x2048 NN)");
  ASSERT_TRUE(ReadProgressFile(path, &state));
  EXPECT_EQ(state.done, 2);
  EXPECT_EQ(state.total, 7);
  EXPECT_EQ(state.detail, "(2048x2048x2048 NN)");
  WriteProgressFile(path, 7, 7, "");
  ASSERT_TRUE(ReadProgressFile(path, &state));
  EXPECT_EQ(state.done, 7);
  EXPECT_EQ(state.detail, "");
}

TEST(ProgressFileTest, NoPathWritesNothing) {
  WriteProgressFile("", 1, 2, "x");  // a worker that is not local rank 0
  ProgressState state;
  EXPECT_FALSE(ReadProgressFile("", &state));
}

}  // namespace
}  // namespace primus::benchmark
