#include "base/secret_finder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/random.h"

namespace mvr {
namespace {

TEST(SecretFinderTest, FindsLongAndShortSecretsAnywhereInTheText) {
  const SecretFinder finder({"ghp_0123456789abcdef", "key", "", "ghp_0123456789zzzzzz"});
  EXPECT_TRUE(finder.FoundIn("token=ghp_0123456789abcdef"));
  EXPECT_TRUE(finder.FoundIn("ghp_0123456789zzzzzz at the start"));
  EXPECT_TRUE(finder.FoundIn("a key"));
  EXPECT_FALSE(finder.FoundIn("ghp_0123456789abcde"));  // one byte short
  EXPECT_FALSE(finder.FoundIn("ghp_0123456789abcdeX"));
  EXPECT_FALSE(finder.FoundIn(""));
  EXPECT_FALSE(finder.FoundIn("no secret here, only k-e-y"));
}

TEST(SecretFinderTest, NoSecretsFindNothing) {
  EXPECT_FALSE(SecretFinder({}).FoundIn("anything at all"));
  EXPECT_FALSE(SecretFinder({""}).FoundIn("anything at all"));
}

// Against the plain search, over texts that hold a secret, a near miss or nothing.
TEST(SecretFinderTest, AgreesWithOneSearchPerSecret) {
  SeededRandom random(7);
  auto text_of = [&](size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += static_cast<char>('a' + random.Next64() % 3);
    return s;
  };
  std::vector<std::string> secrets;
  for (int i = 0; i < 40; ++i) secrets.push_back(text_of(3 + random.Next64() % 14));
  const SecretFinder finder(secrets);
  int found = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::string text = text_of(random.Next64() % 60);
    bool expected = false;
    for (const std::string& s : secrets) expected = expected || text.find(s) != std::string::npos;
    EXPECT_EQ(finder.FoundIn(text), expected) << text;
    found += expected;
  }
  EXPECT_GT(found, 100);  // both answers were exercised
  EXPECT_LT(found, 1900);
}

}  // namespace
}  // namespace mvr
