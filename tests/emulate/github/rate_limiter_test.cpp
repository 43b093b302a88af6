#include "emulate/github/rate_limiter.h"

#include <gtest/gtest.h>

namespace mvr::emulate::github {
namespace {

TEST(RateLimiterTest, CountsDownAndRefusesWhenSpent) {
  ManualClock clock;
  RateOptions o;
  o.limit_per_hour = 3;
  RateLimiter rate(o, clock);
  const int64_t reset = ToUnixSeconds(clock.Now()) + 3600;
  for (int i = 1; i <= 3; ++i) {
    RateState s = rate.Charge("pat:0", false);
    EXPECT_FALSE(s.primary_exceeded);
    EXPECT_EQ(s.used, i);
    EXPECT_EQ(s.remaining, 3 - i);
    EXPECT_EQ(s.reset_epoch_seconds, reset);
  }
  RateState s = rate.Charge("pat:0", false);
  EXPECT_TRUE(s.primary_exceeded);
  EXPECT_EQ(s.remaining, 0);
  EXPECT_EQ(s.reset_epoch_seconds, reset);
}

TEST(RateLimiterTest, BudgetComesBackAfterReset) {
  ManualClock clock;
  RateOptions o;
  o.limit_per_hour = 1;
  RateLimiter rate(o, clock);
  rate.Charge("a", false);
  EXPECT_TRUE(rate.Charge("a", false).primary_exceeded);
  clock.Advance(std::chrono::minutes(60));
  EXPECT_FALSE(rate.Charge("a", false).primary_exceeded);
}

TEST(RateLimiterTest, CallersHaveSeparateBudgets) {
  ManualClock clock;
  RateOptions o;
  o.limit_per_hour = 1;
  RateLimiter rate(o, clock);
  rate.Charge("a", false);
  EXPECT_FALSE(rate.Charge("b", false).primary_exceeded);
}

TEST(RateLimiterTest, SecondaryLimitAppliesToWritesWithRetryAfter) {
  ManualClock clock;
  RateOptions o;
  o.secondary_per_minute = 2;
  RateLimiter rate(o, clock);
  EXPECT_FALSE(rate.Charge("a", true).secondary_exceeded);
  clock.Advance(std::chrono::seconds(10));
  EXPECT_FALSE(rate.Charge("a", true).secondary_exceeded);
  EXPECT_FALSE(rate.Charge("a", false).secondary_exceeded);  // reads are not limited
  RateState s = rate.Charge("a", true);
  EXPECT_TRUE(s.secondary_exceeded);
  EXPECT_EQ(s.retry_after_seconds, 50);
  clock.Advance(std::chrono::seconds(50));
  EXPECT_FALSE(rate.Charge("a", true).secondary_exceeded);
}

}  // namespace
}  // namespace mvr::emulate::github
