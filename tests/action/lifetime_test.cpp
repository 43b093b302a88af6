#include "action/lifetime.h"

#include <gtest/gtest.h>

namespace mvr::action {
namespace {

TEST(LifetimeTest, DefaultsGiveTwoHoursAndAThirtyMinuteMargin) {
  TimePoint start = FromUnixSeconds(1'000'000);
  Lifetime l = ComputeLifetime(start, LifetimePolicy{});
  EXPECT_EQ(l.platform_expires_at, FromUnixSeconds(1'000'000 + 7'200));
  EXPECT_EQ(l.reuse_deadline, FromUnixSeconds(1'000'000 + 7'200 - 1'800));
}

TEST(LifetimeTest, ReusableOnlyStrictlyBeforeTheReuseDeadline) {
  Lifetime l = ComputeLifetime(FromUnixSeconds(0), LifetimePolicy{3'600, 600});
  EXPECT_TRUE(l.ReusableAt(FromUnixSeconds(2'999)));   // one second before
  EXPECT_FALSE(l.ReusableAt(FromUnixSeconds(3'000)));  // at
  EXPECT_FALSE(l.ReusableAt(FromUnixSeconds(3'001)));  // after
}

TEST(LifetimeTest, ValidatesBounds) {
  EXPECT_TRUE(ValidateLifetimePolicy(LifetimePolicy{28'800, 1'800}).ok());
  EXPECT_TRUE(ValidateLifetimePolicy(LifetimePolicy{1, 0}).ok());
  auto over = ValidateLifetimePolicy(LifetimePolicy{28'801, 1'800});
  EXPECT_EQ(over.code(), Code::kInvalidArgument);
  EXPECT_NE(over.message().find("max-lifetime-seconds"), std::string::npos);
  EXPECT_FALSE(ValidateLifetimePolicy(LifetimePolicy{0, 0}).ok());
  EXPECT_FALSE(ValidateLifetimePolicy(LifetimePolicy{3'600, 3'600}).ok());
  EXPECT_FALSE(ValidateLifetimePolicy(LifetimePolicy{3'600, -1}).ok());
}

}  // namespace
}  // namespace mvr::action
