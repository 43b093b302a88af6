#include "github/rate_budget.h"

#include <gtest/gtest.h>

namespace mvr::github {
namespace {

const RateCall kJit = RateCall::Of("POST", "/repos/o/r/actions/runners/generate-jitconfig");
const RateCall kGetRunner = RateCall::Of("GET", "/repos/o/r/actions/runners/17");

TEST(RateCallTest, EndpointIsGenericOverIdsAndQueriesAndJitConfigsAreContent) {
  EXPECT_EQ(kGetRunner.endpoint, "GET /repos/o/r/actions/runners/{id}");
  EXPECT_FALSE(kGetRunner.content_creating);
  EXPECT_TRUE(kJit.content_creating);
  EXPECT_TRUE(
      RateCall::Of("POST", "/orgs/acme/actions/runners/registration-token").content_creating);
  EXPECT_EQ(
      RateCall::Of("GET", "https://api.github.com/repos/o/r/actions/runs/9/jobs?page=2").endpoint,
      "GET /repos/o/r/actions/runs/{id}/jobs");
}

TEST(RateBudgetTest, Paces80JitConfigsInAnyMinute) {
  ManualClock clock;
  RateBudget budget{RateBudgetOptions{}};
  for (int i = 0; i < 80; ++i) {
    ASSERT_TRUE(budget.Admit(clock.Now(), kJit).ok()) << i;
    clock.Advance(std::chrono::milliseconds(250));
  }
  Status held = budget.Admit(clock.Now(), kJit);
  EXPECT_EQ(held.code(), Code::kThrottled);
  EXPECT_EQ(held.error_type(), "RateBudget");
  EXPECT_EQ(held.retry_after(), Duration(40'000));  // the first leaves the minute at 60 s
  EXPECT_EQ(budget.Snapshot(clock.Now()).content_wait, Duration(40'000));
  EXPECT_TRUE(budget.Admit(clock.Now(), kGetRunner).ok());  // reads are not content
  clock.Advance(std::chrono::seconds(40));
  EXPECT_TRUE(budget.Admit(clock.Now(), kJit).ok());
}

TEST(RateBudgetTest, Spends500AnHourAt80AMinuteThenWaitsForTheHour) {
  ManualClock clock;
  RateBudget budget{RateBudgetOptions{}};
  const TimePoint start = clock.Now();
  std::vector<TimePoint> sent;
  while (sent.size() < 501) {
    Status s = budget.Admit(clock.Now(), kJit);
    if (s.ok()) {
      sent.push_back(clock.Now());
    } else {
      ASSERT_TRUE(s.retry_after().has_value());
      clock.Advance(*s.retry_after());
    }
  }
  // 80 a minute for the first 500 (about 6 minutes), then the 501st an hour after the first.
  EXPECT_LT(sent[499] - start, std::chrono::minutes(7));
  EXPECT_EQ(sent[500] - sent[0], std::chrono::hours(1));
  // At that moment the first minute's 80 have left the hour and the 501st is in it.
  EXPECT_EQ(budget.Snapshot(clock.Now()).content_hour_remaining, 79);
}

TEST(RateBudgetTest, GitHubsRetryAfterHoldsBackContentAloneAndItsPrimaryEverything) {
  ManualClock clock;
  RateBudget budget{RateBudgetOptions{}};
  ASSERT_TRUE(budget.Admit(clock.Now(), kJit).ok());
  budget.OnAnswer(
      clock.Now(), kJit,
      Throttled("429").WithErrorType("SecondaryRateLimit").WithRetryAfter(Duration(30'000)),
      std::nullopt);
  EXPECT_EQ(budget.Admit(clock.Now(), kJit).retry_after(), Duration(30'000));
  EXPECT_TRUE(budget.Admit(clock.Now(), kGetRunner).ok());

  RateLimit spent;
  spent.limit = 5000;
  spent.remaining = 0;
  spent.used = 5000;
  spent.reset = clock.Now() + std::chrono::minutes(10);
  budget.OnAnswer(clock.Now(), kGetRunner, Status::Ok(), spent);
  Status held = budget.Admit(clock.Now(), kGetRunner);
  EXPECT_EQ(held.code(), Code::kThrottled);
  EXPECT_EQ(held.retry_after(), Duration(600'000));
  const RateBudgetSnapshot s = budget.Snapshot(clock.Now());
  ASSERT_TRUE(s.primary.has_value());
  EXPECT_EQ(s.primary->remaining, 0);
  EXPECT_EQ(s.limited_by_github, 1);
  EXPECT_EQ(s.refused_locally, 2);
  clock.Advance(std::chrono::minutes(10));
  EXPECT_TRUE(budget.Admit(clock.Now(), kGetRunner).ok());
}

// After GitHub's Retry-After for a content limit, the first JIT config is a probe: the others
// wait for its answer rather than all meeting the limit again at the same moment (the end-to-end
// burst was refused 4 + 4 + 1 times by 4 launchers retrying together); a refused probe starts
// the wait again, an answered one lets the next one go; until a minute has passed since the last
// refusal they go one at a time; a probe whose answer never comes is given up.
TEST(RateBudgetTest, TheFirstJitConfigAfterARetryAfterProbesForTheOthers) {
  ManualClock clock;
  RateBudget budget{RateBudgetOptions{}};
  const Status refused =
      Throttled("429").WithErrorType("SecondaryRateLimit").WithRetryAfter(Duration(3'000));
  ASSERT_TRUE(budget.Admit(clock.Now(), kJit).ok());
  ASSERT_TRUE(budget.Admit(clock.Now(), kJit).ok());
  budget.OnAnswer(clock.Now(), kJit, refused, std::nullopt);
  // The other call, sent before the refusal, answered after it: it does not end the limit.
  budget.OnAnswer(clock.Now(), kJit, Status::Ok(), std::nullopt);
  clock.Advance(Duration(3'000));
  ASSERT_TRUE(budget.Admit(clock.Now(), kJit).ok()) << "the probe";
  Status other = budget.Admit(clock.Now(), kJit);
  EXPECT_EQ(other.code(), Code::kThrottled);
  EXPECT_EQ(other.retry_after(), Duration(1'000));
  EXPECT_TRUE(budget.Admit(clock.Now(), kGetRunner).ok()) << "reads are not held back";
  budget.OnAnswer(clock.Now(), kJit, refused, std::nullopt);  // the probe refused too
  EXPECT_EQ(budget.Admit(clock.Now(), kJit).retry_after(), Duration(3'000));
  clock.Advance(Duration(3'000));
  ASSERT_TRUE(budget.Admit(clock.Now(), kJit).ok()) << "the next probe";
  budget.OnAnswer(clock.Now(), kJit, Status::Ok(), std::nullopt);
  // Within a minute of the refusal: one at a time, each after the answer to the one before.
  ASSERT_TRUE(budget.Admit(clock.Now(), kJit).ok()) << "answered: the next one goes";
  EXPECT_EQ(budget.Admit(clock.Now(), kJit).code(), Code::kThrottled) << "one in flight";
  clock.Advance(Duration(500));
  budget.OnAnswer(clock.Now(), kJit, Status::Ok(), std::nullopt);
  ASSERT_TRUE(budget.Admit(clock.Now(), kJit).ok());
  clock.Advance(std::chrono::minutes(1));
  budget.OnAnswer(clock.Now(), kJit, Status::Ok(), std::nullopt);
  EXPECT_TRUE(budget.Admit(clock.Now(), kJit).ok());
  EXPECT_TRUE(budget.Admit(clock.Now(), kJit).ok())
      << "a minute without a refusal: no more probing";
  // A probe lost on the way.
  budget.OnAnswer(clock.Now(), kJit, refused, std::nullopt);
  clock.Advance(Duration(3'000));
  ASSERT_TRUE(budget.Admit(clock.Now(), kJit).ok());
  EXPECT_EQ(budget.Admit(clock.Now(), kJit).code(), Code::kThrottled);
  clock.Advance(Duration(30'000));
  EXPECT_TRUE(budget.Admit(clock.Now(), kJit).ok()) << "the lost probe is given up";
}

TEST(RateBudgetTest, PrimaryCountsDownLocallyUntilTheNextAnswer) {
  ManualClock clock;
  RateBudget budget{RateBudgetOptions{}};
  RateLimit two;
  two.limit = 5000;
  two.remaining = 2;
  two.reset = clock.Now() + std::chrono::minutes(5);
  budget.OnAnswer(clock.Now(), kGetRunner, Status::Ok(), two);
  EXPECT_TRUE(budget.Admit(clock.Now(), kGetRunner).ok());
  EXPECT_TRUE(budget.Admit(clock.Now(), kGetRunner).ok());
  EXPECT_EQ(budget.Admit(clock.Now(), kGetRunner).code(), Code::kThrottled);
}

TEST(RateBudgetTest, Holds900PointsAMinutePerEndpoint) {
  ManualClock clock;
  RateBudget budget{RateBudgetOptions{}};
  for (int i = 0; i < 900; ++i) ASSERT_TRUE(budget.Admit(clock.Now(), kGetRunner).ok()) << i;
  EXPECT_EQ(budget.Admit(clock.Now(), kGetRunner).retry_after(), Duration(60'000));
  EXPECT_TRUE(budget.Admit(clock.Now(), RateCall::Of("GET", "/repos/o/r/actions/jobs/3")).ok());
}

TEST(RateBudgetTest, WithoutPacingNothingIsHeldBack) {
  ManualClock clock;
  RateBudgetOptions o;
  o.pace = false;
  RateBudget budget{o};
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(budget.Admit(clock.Now(), kJit).ok());
  EXPECT_EQ(budget.Snapshot(clock.Now()).content_wait, Duration(0));
}

}  // namespace
}  // namespace mvr::github
