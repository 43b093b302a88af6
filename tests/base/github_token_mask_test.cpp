#include "base/github_token_mask.h"

#include <gtest/gtest.h>

#include "base/logger.h"

namespace mvr {
namespace {

// A stateless installation token as GitHub issues them since 2026-04: `ghs_` and three base64url
// parts joined by '.', about 520 characters.
std::string StatelessToken() {
  std::string header = "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9";
  std::string claims(150, 'Q');
  std::string signature;
  while (signature.size() < 520 - 4 - header.size() - claims.size() - 2) signature += "x9_-";
  return "ghs_" + header + "." + claims + "." + signature;
}

TEST(GitHubTokenMaskTest, ClassicTokensOfEveryKindAreMasked) {
  for (std::string prefix : {"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}) {
    const std::string token = prefix + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    EXPECT_EQ(MaskGitHubTokens("token " + token + " refused"), "token *** refused") << prefix;
    EXPECT_EQ(MaskGitHubTokens("{\"token\":\"" + token + "\"}"), "{\"token\":\"***\"}");
  }
}

TEST(GitHubTokenMaskTest, StatelessTokensAreMaskedWholeDotsIncluded) {
  const std::string token = StatelessToken();
  ASSERT_GE(token.size(), 520u);
  EXPECT_EQ(MaskGitHubTokens("Authorization: Bearer " + token), "Authorization: Bearer ***");
  // A sentence's full stop stays; the token's own dots go with it.
  EXPECT_EQ(MaskGitHubTokens("got " + token + ". Next"), "got ***. Next");
  EXPECT_EQ(MaskGitHubTokens(token + "\n" + token), "***\n***");
}

TEST(GitHubTokenMaskTest, ProseAndLookAlikesAreLeftAlone) {
  EXPECT_EQ(MaskGitHubTokens("pass a ghs_ token or ghp_token"), "pass a ghs_ token or ghp_token");
  EXPECT_EQ(MaskGitHubTokens("xghs_A1b2C3d4E5f6G7h8I9j0K1l2"), "xghs_A1b2C3d4E5f6G7h8I9j0K1l2");
  EXPECT_EQ(MaskGitHubTokens("github.com/ghost"), "github.com/ghost");
  EXPECT_EQ(MaskGitHubTokens(""), "");
}

// The logger's redactor applies the rule to every line, registered or not.
TEST(GitHubTokenMaskTest, EveryLogLineIsMaskedForBothFormats) {
  MemorySink sink;
  ManualClock clock;
  Logger log(sink, clock);
  const std::string stateless = StatelessToken();
  const std::string classic = "ghs_16C7e42F292c6912E7710c838347Ae178B4a";
  log.Warn("github said " + stateless, {{"detail", classic}, {"url", "https://x/?t=" + stateless}});
  const std::string line = sink.Joined();
  EXPECT_EQ(line.find("ghs_"), std::string::npos) << line;
  EXPECT_EQ(line.find(stateless.substr(200, 40)), std::string::npos) << line;
}

}  // namespace
}  // namespace mvr
