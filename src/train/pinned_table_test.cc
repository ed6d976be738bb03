#include "train/pinned_table.h"

#include <gtest/gtest.h>

namespace primus::train {
namespace {

TEST(PinnedTableTest, HeaderCommentsAndRows) {
  auto table = ReadPinnedTable("# Megatron-LM core_v0.19.0 5be9626\n# a comment\n\n--lr\tlr\tvalue\n--bf16\tbf16\tstore_true\n",
                               "Megatron-LM", "the Megatron-LM option table");
  ASSERT_TRUE(table.ok()) << table.error().message;
  EXPECT_EQ(table->release, "core_v0.19.0");
  EXPECT_EQ(table->commit, "5be9626");
  ASSERT_EQ(table->rows.size(), 2u);
  EXPECT_EQ(table->rows[0].line, 4);
  EXPECT_EQ(table->rows[1].fields, (std::vector<std::string>{"--bf16", "bf16", "store_true"}));
}

TEST(PinnedTableTest, AnotherProjectsHeaderIsAnError) {
  auto table = ReadPinnedTable("# TorchTitan v0.2.2 73a0e69\nx\ty\n", "Megatron-LM", "the Megatron-LM option table");
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.error().message, "the Megatron-LM option table has no '# Megatron-LM <release> <commit>' line");
}

}  // namespace
}  // namespace primus::train
