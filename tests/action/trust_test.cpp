#include "action/trust.h"

#include <gtest/gtest.h>

namespace mvr::action {
namespace {

std::string PullRequest(const std::string& head, const std::string& base, bool head_is_fork) {
  return R"({"pull_request":{"head":{"repo":{"full_name":")" + head + R"(","fork":)" +
         (head_is_fork ? "true" : "false") + R"(}},"base":{"repo":{"full_name":")" + base +
         R"("}}}})";
}

TEST(TrustTest, NonPullRequestEventsAreTrusted) {
  EXPECT_TRUE(CheckWarmTrust("push", "").ok());
  EXPECT_TRUE(CheckWarmTrust("workflow_dispatch", "{}").ok());
}

TEST(TrustTest, SameRepositoryPullRequestIsTrustedEvenInAForkedRepository) {
  EXPECT_TRUE(CheckWarmTrust("pull_request", PullRequest("me/app", "me/app", true)).ok());
}

TEST(TrustTest, ForkPullRequestIsRefusedWithTheReason) {
  Status s = CheckWarmTrust("pull_request", PullRequest("stranger/app", "me/app", true));
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("forks"), std::string::npos);
}

TEST(TrustTest, UnreadableOrDeletedForkFailsClosed) {
  EXPECT_FALSE(CheckWarmTrust("pull_request", "not json").ok());
  EXPECT_FALSE(CheckWarmTrust("pull_request", R"({"pull_request":{"head":{"repo":null}}})").ok());
  EXPECT_FALSE(CheckWarmTrust("pull_request_target", "{}").ok());
}

}  // namespace
}  // namespace mvr::action
