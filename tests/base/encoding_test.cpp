#include "base/encoding.h"

#include <gtest/gtest.h>

namespace mvr {
namespace {

TEST(EncodingTest, Base64RoundTripsEveryLength) {
  std::string data;
  for (int i = 0; i < 40; ++i) {
    EXPECT_EQ(Base64Decode(Base64Encode(data)).value(), data);
    EXPECT_EQ(Base64UrlDecode(Base64UrlEncode(data)).value(), data);
    data.push_back(static_cast<char>(i * 37 + 250));
  }
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
  EXPECT_FALSE(Base64Decode("Zm9v!").ok());
  EXPECT_FALSE(Base64Decode("Z").ok());
}

TEST(EncodingTest, HexAndUri) {
  EXPECT_EQ(HexEncode("\x01\xab"), "01ab");
  EXPECT_EQ(HexDecode("01AB").value(), "\x01\xab");
  EXPECT_FALSE(HexDecode("0").ok());
  EXPECT_FALSE(HexDecode("zz").ok());
  EXPECT_EQ(UriEncode("a b/c~"), "a%20b%2Fc~");
  EXPECT_EQ(UriEncode("a b/c", false), "a%20b/c");
  EXPECT_EQ(UriDecode("a%20b%2fc").value(), "a b/c");
  EXPECT_FALSE(UriDecode("%2").ok());
  EXPECT_FALSE(UriDecode("%zz").ok());
}

TEST(EncodingTest, Sha256AndHmacKnownAnswers) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // RFC 4231 test case 2.
  EXPECT_EQ(HexEncode(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(EncodingTest, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
}

}  // namespace
}  // namespace mvr
