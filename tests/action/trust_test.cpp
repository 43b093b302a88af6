#include "action/trust.h"

#include <gtest/gtest.h>

namespace mvr::action {
namespace {

std::string PullRequest(const std::string& head, const std::string& base, bool head_is_fork) {
  return R"({"pull_request":{"head":{"repo":{"full_name":")" + head + R"(","fork":)" +
         (head_is_fork ? "true" : "false") + R"(}},"base":{"repo":{"full_name":")" + base +
         R"("}}}})";
}

TEST(TrustTest, TheListedEventsAreTrusted) {
  for (const char* event : {"push", "workflow_dispatch", "schedule", "merge_group"}) {
    EXPECT_TRUE(CheckWarmTrust(event, "", "me/app").ok()) << event;
  }
}

TEST(TrustTest, EveryOtherEventIsRefusedNamingIt) {
  for (const char* event :
       {"pull_request_target", "issue_comment", "workflow_run", "pull_request_review",
        "pull_request_review_comment", "release", "repository_dispatch", "some_future_event"}) {
    Status s = CheckWarmTrust(event, "{}", "me/app");
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << event;
    EXPECT_NE(s.message().find(event), std::string::npos) << s.message();
  }
  EXPECT_FALSE(CheckWarmTrust("", "", "me/app").ok());
}

TEST(TrustTest, SameRepositoryPullRequestIsTrustedEvenInAForkedRepository) {
  EXPECT_TRUE(CheckWarmTrust("pull_request", PullRequest("me/app", "me/app", true), "me/app").ok());
}

TEST(TrustTest, ForkPullRequestIsRefusedWithTheReason) {
  Status s = CheckWarmTrust("pull_request", PullRequest("stranger/app", "me/app", true), "me/app");
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("forks"), std::string::npos);
}

TEST(TrustTest, PullRequestOfAnotherRepositoryThanThisOneIsRefused) {
  EXPECT_FALSE(
      CheckWarmTrust("pull_request", PullRequest("other/app", "other/app", false), "me/app").ok());
}

TEST(TrustTest, UnreadableOrDeletedForkFailsClosed) {
  EXPECT_FALSE(CheckWarmTrust("pull_request", "not json", "me/app").ok());
  EXPECT_FALSE(
      CheckWarmTrust("pull_request", R"({"pull_request":{"head":{"repo":null}}})", "me/app").ok());
}

}  // namespace
}  // namespace mvr::action
