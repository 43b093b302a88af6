// The webhook secret read lazily (issue 53, item 7): not before a request needs it, kept for the
// function instance's life with a bounded refresh, and a failed SSM read backed off on the
// injected clock instead of being repeated for every request.
#include "lambda/lazy_secret.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mvr::lambda {
namespace {

constexpr char kLazyValue[] = "lazy-secret-fixture-value-7e21";

// SSM as the fetch sees it: fails while `down`, else returns `value`; counts the reads.
struct FlakySsm {
  bool down = false;
  std::string value = kLazyValue;
  int reads = 0;
  LazySecret::Fetch fetch() {
    return [this]() -> Result<Secret> {
      ++reads;
      if (down) return Transient("github.webhookSecretFile: SSM GetParameter: ThrottlingException");
      return Secret(value);
    };
  }
};

TEST(LazySecretTest, NothingIsReadUntilTheFirstRequestThenTheValueIsKept) {
  ManualClock clock;
  FlakySsm ssm;
  LazySecret secret(ssm.fetch(), clock);
  EXPECT_EQ(ssm.reads, 0) << "constructing (the cold start) must not read SSM";
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(secret.Get().value().Reveal(), kLazyValue);
    clock.Advance(Duration(1'000));
  }
  EXPECT_EQ(ssm.reads, 1) << "100 requests in 100 s: one read";
}

TEST(LazySecretTest, AFailedReadBacksOffDoublingToAMinuteInsteadOfReadingPerRequest) {
  ManualClock clock;
  FlakySsm ssm;
  ssm.down = true;
  LazySecret secret(ssm.fetch(), clock);
  // A flood: 40 requests a second for 5 minutes while SSM fails.
  std::vector<TimePoint> read_at;
  for (int i = 0; i < 40 * 300; ++i) {
    const int before = ssm.reads;
    Result<Secret> got = secret.Get();
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), Code::kTransient);
    EXPECT_NE(got.status().message().find("ThrottlingException"), std::string::npos)
        << got.status().message();
    if (ssm.reads != before) read_at.push_back(clock.Now());
    clock.Advance(Duration(25));
  }
  // Reads at 0, 1, 3, 7, 15, 31, 63, 123, 183, 243 s: the waits double to 60 s and stay there.
  ASSERT_GE(read_at.size(), 2u);
  std::vector<int64_t> waits;
  for (size_t i = 1; i < read_at.size(); ++i) {
    waits.push_back((read_at[i] - read_at[i - 1]).count() / 1000);
  }
  EXPECT_EQ(waits, (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 60, 60, 60}))
      << "reads: " << ssm.reads;
  EXPECT_EQ(ssm.reads, 10) << "12,000 requests in 5 minutes of failure: 10 reads";

  // SSM is back: the next read after the back-off succeeds and resets it.
  ssm.down = false;
  clock.Advance(Duration(60'000));
  EXPECT_EQ(secret.Get().value().Reveal(), kLazyValue);
  EXPECT_EQ(ssm.reads, 11);
}

TEST(LazySecretTest, TheValueIsRefreshedAtMostEveryFifteenMinutesAndKeptWhenARefreshFails) {
  ManualClock clock;
  FlakySsm ssm;
  LazySecret secret(ssm.fetch(), clock);
  ASSERT_TRUE(secret.Get().ok());
  const uint64_t first = secret.generation();
  clock.Advance(Duration(14 * 60'000));
  ASSERT_TRUE(secret.Get().ok());
  EXPECT_EQ(ssm.reads, 1);
  // Due: the refresh fails, the kept value still serves, and the next try waits its back-off.
  clock.Advance(Duration(2 * 60'000));
  ssm.down = true;
  EXPECT_EQ(secret.Get().value().Reveal(), kLazyValue);
  EXPECT_EQ(secret.Get().value().Reveal(), kLazyValue);
  EXPECT_EQ(ssm.reads, 2);
  // A rotated parameter is picked up by the next refresh, and the generation says so.
  ssm.down = false;
  ssm.value = "rotated-fixture-value-03bd";
  clock.Advance(Duration(1'000));
  EXPECT_EQ(secret.Get().value().Reveal(), "rotated-fixture-value-03bd");
  EXPECT_EQ(ssm.reads, 3);
  EXPECT_NE(secret.generation(), first);
}

TEST(LazyWebhookRouterTest, TheRouterIsBuiltOnceAndRebuiltOnlyForARotatedSecret) {
  ManualClock clock;
  FlakySsm ssm;
  LazySecret secret(ssm.fetch(), clock);
  runnerset::WebhookRouterConfig config;
  runnerset::RunnerClass small;
  small.label = "small";
  config.classes = {small};
  config.runner_name_prefix = "mvr-test_";
  LazyWebhookRouter router(config, secret);
  ssm.down = true;
  EXPECT_FALSE(router.Get().ok());
  ssm.down = false;
  clock.Advance(Duration(2'000));
  Result<const runnerset::WebhookRouter*> built = router.Get();
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  EXPECT_EQ(router.Get().value(), *built);
  clock.Advance(Duration(16 * 60'000));
  ssm.value = "rotated-fixture-value-03bd";
  ASSERT_TRUE(router.Get().ok());
  EXPECT_EQ(ssm.reads, 3);
}

}  // namespace
}  // namespace mvr::lambda
