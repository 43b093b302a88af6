#include "emulate/github/rate_limiter.h"

#include <gtest/gtest.h>

namespace mvr::emulate::github {
namespace {

RateRequest Call(const std::string& method, const std::string& endpoint, bool content = false) {
  RateRequest r;
  r.method = method;
  r.endpoint = method + " " + endpoint;
  r.mutating = method != "GET";
  r.content_creating = content;
  return r;
}
RateRequest Read() { return Call("GET", "/repos/o/r/actions/runners/{id}"); }
RateRequest Write() { return Call("DELETE", "/repos/o/r/actions/runners/{id}"); }
RateRequest Jit() { return Call("POST", "/repos/o/r/actions/runners/generate-jitconfig", true); }

RateOptions GitHubLimits() {
  RateOptions o;
  o.github = true;
  return o;
}

TEST(RateLimiterTest, CountsDownAndRefusesWhenSpent) {
  ManualClock clock;
  RateOptions o;
  o.limit_per_hour = 3;
  RateLimiter rate(o, clock);
  const int64_t reset = ToUnixSeconds(clock.Now()) + 3600;
  for (int i = 1; i <= 3; ++i) {
    RateState s = rate.Charge("pat:0", Read());
    EXPECT_FALSE(s.primary_exceeded);
    EXPECT_EQ(s.used, i);
    EXPECT_EQ(s.remaining, 3 - i);
    EXPECT_EQ(s.reset_epoch_seconds, reset);
  }
  RateState s = rate.Charge("pat:0", Read());
  EXPECT_TRUE(s.primary_exceeded);
  EXPECT_EQ(s.remaining, 0);
  EXPECT_EQ(s.reset_epoch_seconds, reset);
}

TEST(RateLimiterTest, BudgetComesBackAfterReset) {
  ManualClock clock;
  RateOptions o;
  o.limit_per_hour = 1;
  RateLimiter rate(o, clock);
  rate.Charge("a", Read());
  EXPECT_TRUE(rate.Charge("a", Read()).primary_exceeded);
  clock.Advance(std::chrono::minutes(60));
  EXPECT_FALSE(rate.Charge("a", Read()).primary_exceeded);
}

TEST(RateLimiterTest, CallersHaveSeparateBudgets) {
  ManualClock clock;
  RateOptions o;
  o.limit_per_hour = 1;
  RateLimiter rate(o, clock);
  rate.Charge("a", Read());
  EXPECT_FALSE(rate.Charge("b", Read()).primary_exceeded);
}

TEST(RateLimiterTest, SecondaryLimitAppliesToWritesWithRetryAfter) {
  ManualClock clock;
  RateOptions o;
  o.secondary_per_minute = 2;
  RateLimiter rate(o, clock);
  EXPECT_FALSE(rate.Charge("a", Write()).secondary_exceeded);
  clock.Advance(std::chrono::seconds(10));
  EXPECT_FALSE(rate.Charge("a", Write()).secondary_exceeded);
  EXPECT_FALSE(rate.Charge("a", Read()).secondary_exceeded);  // reads are not limited
  RateState s = rate.Charge("a", Write());
  EXPECT_TRUE(s.secondary_exceeded);
  EXPECT_EQ(s.retry_after_seconds, 50);
  clock.Advance(std::chrono::seconds(50));
  EXPECT_FALSE(rate.Charge("a", Write()).secondary_exceeded);
}

TEST(RateLimiterTest, GitHubLimitsAdmit80JitConfigsAMinuteThenAnswerRetryAfter) {
  ManualClock clock;
  RateLimiter rate(GitHubLimits(), clock);
  for (int i = 0; i < 80; ++i) {
    ASSERT_FALSE(rate.Charge("inst", Jit()).secondary_exceeded) << i;
    rate.Done("inst");
    clock.Advance(std::chrono::milliseconds(100));
  }
  RateState s = rate.Charge("inst", Jit());
  EXPECT_TRUE(s.secondary_exceeded);
  EXPECT_EQ(s.refusal, RateRefusal::kContentPerMinute);
  EXPECT_EQ(s.retry_after_seconds, 52);  // the first leaves the window 60 s after it came
  EXPECT_FALSE(rate.Charge("inst", Read()).secondary_exceeded);  // a GET is no content
  rate.Done("inst");
  clock.Advance(std::chrono::seconds(52));
  EXPECT_FALSE(rate.Charge("inst", Jit()).secondary_exceeded);
  EXPECT_EQ(rate.Refusals().at("content_per_minute"), 1);
}

TEST(RateLimiterTest, GitHubLimitsAdmit500JitConfigsAnHour) {
  ManualClock clock;
  RateLimiter rate(GitHubLimits(), clock);
  const TimePoint start = clock.Now();
  int admitted = 0;
  while (clock.Now() - start < std::chrono::minutes(59)) {
    if (!rate.Charge("inst", Jit()).secondary_exceeded) ++admitted;
    rate.Done("inst");
    clock.Advance(std::chrono::seconds(1));
  }
  EXPECT_EQ(admitted, 500);
  RateState s = rate.Charge("inst", Jit());
  EXPECT_EQ(s.refusal, RateRefusal::kContentPerHour);
  EXPECT_EQ(rate.ContentPeaks(), std::make_pair(60, 500));
}

TEST(RateLimiterTest, GitHubLimits900PointsAMinutePerEndpoint) {
  ManualClock clock;
  RateLimiter rate(GitHubLimits(), clock);
  for (int i = 0; i < 180; ++i) {  // 180 DELETEs of 5 points
    ASSERT_FALSE(rate.Charge("inst", Write()).secondary_exceeded) << i;
    rate.Done("inst");
  }
  RateState s = rate.Charge("inst", Write());
  EXPECT_EQ(s.refusal, RateRefusal::kEndpointPoints);
  EXPECT_EQ(s.retry_after_seconds, 60);
  // Another endpoint has its own points.
  EXPECT_FALSE(rate.Charge("inst", Call("GET", "/repos/o/r/actions/jobs/{id}")).secondary_exceeded);
}

TEST(RateLimiterTest, GitHubLimits100ConcurrentRequests) {
  ManualClock clock;
  RateLimiter rate(GitHubLimits(), clock);
  for (int i = 0; i < 100; ++i) {
    ASSERT_FALSE(rate.Charge("inst", Call("GET", "/e" + std::to_string(i))).secondary_exceeded);
  }
  EXPECT_EQ(rate.Charge("inst", Call("GET", "/other")).refusal, RateRefusal::kConcurrent);
  rate.Done("inst");
  EXPECT_FALSE(rate.Charge("inst", Call("GET", "/other")).secondary_exceeded);
}

TEST(RateLimiterTest, GitHubLimits2000InstallationTokensAnHour) {
  ManualClock clock;
  RateLimiter rate(GitHubLimits(), clock);
  RateRequest token = Call("POST", "/app/installations/{id}/access_tokens");
  token.token_request = true;
  for (int i = 0; i < 2000; ++i) {
    ASSERT_FALSE(rate.Charge("app", token).secondary_exceeded) << i;
    rate.Done("app");
    clock.Advance(std::chrono::milliseconds(1500));  // below 900 points a minute
  }
  EXPECT_EQ(rate.Charge("app", token).refusal, RateRefusal::kTokenRequests);
}

TEST(RateLimiterTest, TimeScaleShrinksEveryWindow) {
  ManualClock clock;
  RateOptions o = GitHubLimits();
  o.time_scale = 0.01;  // a minute is 600 ms
  o.secondary.content_per_minute = 2;
  RateLimiter rate(o, clock);
  rate.Charge("a", Jit());
  rate.Charge("a", Jit());
  RateState s = rate.Charge("a", Jit());
  EXPECT_EQ(s.refusal, RateRefusal::kContentPerMinute);
  EXPECT_EQ(s.retry_after_seconds, 1);  // 600 ms, in whole seconds
  clock.Advance(std::chrono::milliseconds(600));
  EXPECT_FALSE(rate.Charge("a", Jit()).secondary_exceeded);
}

TEST(RateLimiterTest, WithoutGitHubLimitsOnlyThePrimaryApplies) {
  ManualClock clock;
  RateLimiter rate(RateOptions{}, clock);
  for (int i = 0; i < 200; ++i) ASSERT_FALSE(rate.Charge("a", Jit()).secondary_exceeded);
}

}  // namespace
}  // namespace mvr::emulate::github
