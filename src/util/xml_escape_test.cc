#include "util/xml_escape.h"

#include <gtest/gtest.h>

namespace primus {
namespace {

TEST(XmlEscapeTest, LeavesNoMarkup) {
  EXPECT_EQ(EscapeXml("<script>alert('x & \"y\"')</script>"),
            "&lt;script&gt;alert(&#39;x &amp; &quot;y&quot;&#39;)&lt;/script&gt;");
  EXPECT_EQ(EscapeXml("plain text"), "plain text");
}

TEST(XmlEscapeTest, ControlCharactersAreWrittenOutLineBreaksKept) {
  EXPECT_EQ(EscapeXml("a\x1b[31mb\nc\td"), "a\\x1b[31mb\nc\td");
  EXPECT_EQ(EscapeXml(std::string("nul\0here", 8)), "nul\\x00here");
}

}  // namespace
}  // namespace primus
