#include "util/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace primus {
namespace {

TEST(Utf8Test, AcceptsAsciiAndEveryLengthOfSequence) {
  EXPECT_EQ(FindInvalidUtf8(""), std::string_view::npos);
  EXPECT_EQ(FindInvalidUtf8("plain ascii: 1\t2\n"), std::string_view::npos);
  EXPECT_EQ(FindInvalidUtf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80 \xEF\xBB\xBF"), std::string_view::npos);
  EXPECT_EQ(FindInvalidUtf8("\xF4\x8F\xBF\xBF"), std::string_view::npos) << "U+10FFFF is the last code point";
}

TEST(Utf8Test, NamesTheFirstInvalidByte) {
  EXPECT_EQ(FindInvalidUtf8("ab\xFF"), 2u);
  EXPECT_EQ(FindInvalidUtf8("ab\x80"), 2u) << "a continuation byte without a lead";
  EXPECT_EQ(FindInvalidUtf8("a\xC3"), 1u) << "truncated at the end";
  EXPECT_EQ(FindInvalidUtf8("a\xC3(b"), 1u) << "a lead byte followed by ASCII";
  EXPECT_EQ(FindInvalidUtf8("\xC0\xAF"), 0u) << "overlong '/'";
  EXPECT_EQ(FindInvalidUtf8("\xE0\x80\xAF"), 0u) << "overlong, three bytes";
  EXPECT_EQ(FindInvalidUtf8("x\xED\xA0\x80"), 1u) << "a UTF-16 surrogate";
  EXPECT_EQ(FindInvalidUtf8("\xF4\x90\x80\x80"), 0u) << "above U+10FFFF";
  EXPECT_EQ(FindInvalidUtf8("\xF5\x80\x80\x80"), 0u);
  EXPECT_EQ(FindInvalidUtf8(std::string("ok\xE2\x82", 4)), 2u);
}

}  // namespace
}  // namespace primus
