// IsValidUtf8 against well-formed text and each kind of malformed sequence; Utf8Prefix's cuts.
#include "base/utf8.h"

#include <gtest/gtest.h>

namespace mvr {
namespace {

TEST(Utf8Test, IsValidUtf8AcceptsWellFormedTextOnly) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_TRUE(IsValidUtf8("\xf4\x8f\xbf\xbf"));  // U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\x80"));              // a continuation byte first
  EXPECT_FALSE(IsValidUtf8("\xc3"));              // truncated
  EXPECT_FALSE(IsValidUtf8("\xc3("));             // bad continuation
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xe0\x80\xaf"));      // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(IsValidUtf8("ok\xe2\x82"));        // truncated at the end
}

TEST(Utf8Test, Utf8PrefixNeverCutsInsideACharacter) {
  EXPECT_EQ(Utf8Prefix("short", 10), "short");
  EXPECT_EQ(Utf8Prefix("abcdef", 3), "abc");
  // "ab" then e-acute (2 bytes), the euro sign (3) and an emoji (4).
  const std::string text = "ab\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z";
  EXPECT_EQ(Utf8Prefix(text, 2), "ab");
  EXPECT_EQ(Utf8Prefix(text, 3), "ab");  // inside e-acute: left out whole
  EXPECT_EQ(Utf8Prefix(text, 4), "ab\xc3\xa9");
  EXPECT_EQ(Utf8Prefix(text, 5), "ab\xc3\xa9");
  EXPECT_EQ(Utf8Prefix(text, 6), "ab\xc3\xa9");
  EXPECT_EQ(Utf8Prefix(text, 7), "ab\xc3\xa9\xe2\x82\xac");
  for (size_t n = 8; n <= 10; ++n) EXPECT_EQ(Utf8Prefix(text, n), "ab\xc3\xa9\xe2\x82\xac") << n;
  EXPECT_EQ(Utf8Prefix(text, 11), text.substr(0, 11));
  for (size_t n = 0; n <= text.size(); ++n) EXPECT_TRUE(IsValidUtf8(Utf8Prefix(text, n))) << n;
  // Not UTF-8 to begin with: a run of continuation bytes has no character to keep whole.
  EXPECT_EQ(Utf8Prefix("a\x80\x80\x80\x80\x80", 3), "a\x80\x80");
}

}  // namespace
}  // namespace mvr
