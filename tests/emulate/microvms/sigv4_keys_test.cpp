#include "emulate/microvms/sigv4_keys.h"

#include <gtest/gtest.h>

namespace mvr::emulate::microvms {
namespace {

TEST(Sigv4KeysTest, ReadsSpaceColonAndTabSeparatedLinesSkippingCommentsAndBlanks) {
  auto keys = ParseSigv4Keys(
      "# local keys\nAKIDONE secret-one\r\n\nAKIDTWO:secret/two+x\nAKIDTHREE\t \tsecret3  \n",
      "keys.txt");
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  EXPECT_EQ(keys->size(), 3u);
  EXPECT_EQ(keys->at("AKIDONE"), "secret-one");
  EXPECT_EQ(keys->at("AKIDTWO"), "secret/two+x");
  EXPECT_EQ(keys->at("AKIDTHREE"), "secret3");
}

TEST(Sigv4KeysTest, ALineWithoutBothPartsNamesTheFileAndLineButNotTheSecret) {
  auto keys = ParseSigv4Keys("AKIDONE topsecretvalue\nAKIDLONELY\n", "keys.txt");
  ASSERT_FALSE(keys.ok());
  EXPECT_NE(keys.status().message().find("keys.txt line 2"), std::string::npos)
      << keys.status().message();
  EXPECT_EQ(keys.status().message().find("topsecretvalue"), std::string::npos);
  EXPECT_FALSE(ParseSigv4Keys(":secret-without-id\n", "keys.txt").ok());
}

}  // namespace
}  // namespace mvr::emulate::microvms
