#include "base/retry.h"

#include <gtest/gtest.h>

namespace mvr {
namespace {

struct Fixture {
  ManualClock clock;
  ManualSleeper sleeper{clock};
  SeededRandom random{42};
  MemorySink sink;
  Logger logger{sink, clock};
  Seam deps() { return Seam{clock, sleeper, random, random, logger}; }
};

TEST(RetryTest, RetriesTransientUntilSuccess) {
  Fixture f;
  int calls = 0;
  Result<int> r = Retry<int>(RetryPolicy{}, f.deps(), [&]() -> Result<int> {
    if (++calls < 3) return Transient("5xx");
    return 7;
  });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 7);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(f.sleeper.calls(), 2);
}

TEST(RetryTest, FinalErrorsAreNotRetried) {
  Fixture f;
  for (Status s : {NotFound("x"), Conflict("x"), InvalidArgument("x"), QuotaExceeded("x"),
                   Unauthorized("x"), Internal("x")}) {
    int calls = 0;
    Status out = RetryStatus(RetryPolicy{}, f.deps(), [&] {
      ++calls;
      return s;
    });
    EXPECT_EQ(calls, 1) << s.ToString();
    EXPECT_EQ(out.code(), s.code());
  }
}

TEST(RetryTest, StopsAtMaxAttempts) {
  Fixture f;
  int calls = 0;
  RetryPolicy p;
  p.max_attempts = 4;
  Status out = RetryStatus(p, f.deps(), [&] {
    ++calls;
    return Throttled("429");
  });
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(out.code(), Code::kThrottled);
}

TEST(RetryTest, FullJitterStaysUnderTheExponentialCeilingAndCap) {
  SeededRandom random(1);
  RetryPolicy p;
  p.base_delay = Duration(100);
  p.max_delay = Duration(1000);
  for (int retry = 0; retry < 10; ++retry) {
    int64_t ceiling = std::min<int64_t>(1000, 100LL << retry);
    for (int i = 0; i < 200; ++i) {
      Duration d = FullJitterDelay(p, retry, random);
      EXPECT_GE(d.count(), 0);
      EXPECT_LE(d.count(), ceiling);
    }
  }
}

TEST(RetryTest, HonoursRetryAfter) {
  Fixture f;
  int calls = 0;
  RetryPolicy p;
  p.base_delay = Duration(1);
  p.max_delay = Duration(1);
  Status out = RetryStatus(p, f.deps(), [&] {
    if (++calls == 1) return Throttled("429").WithRetryAfter(Duration(5000));
    return Status::Ok();
  });
  EXPECT_TRUE(out.ok());
  EXPECT_GE(f.sleeper.total().count(), 5000);
}

TEST(RetryTest, GivesUpWhenTheNextSleepWouldPassTheDeadline) {
  Fixture f;
  int calls = 0;
  RetryPolicy p;
  p.max_attempts = 100;
  p.deadline = Duration(10'000);
  Status out = RetryStatus(p, f.deps(), [&] {
    ++calls;
    return Throttled("429").WithRetryAfter(Duration(4000));
  });
  EXPECT_EQ(out.code(), Code::kThrottled);
  EXPECT_LE(f.sleeper.total().count(), 10'000);
  EXPECT_EQ(calls, 3);  // slept 4 s twice; a third sleep would pass 10 s
  EXPECT_NE(out.message().find("deadline"), std::string::npos);
}

TEST(PollTest, SleepsWithinTheJitterBoundsAndAtLeastTheMinimum) {
  Fixture f;
  const PollPolicy p{Duration(400), Duration(1'000), Duration(100)};
  const TimePoint deadline = f.clock.Now() + std::chrono::hours(1);
  for (int poll = 0; poll < 50; ++poll) {
    Duration before = f.sleeper.total();
    ASSERT_TRUE(SleepBeforeNextPoll(p, f.deps(), poll, deadline, Status::Ok()));
    Duration slept = f.sleeper.total() - before;
    EXPECT_GE(slept.count(), 100);
    EXPECT_LE(slept.count(), poll == 0 ? 400 : 1'000);
  }
}

TEST(PollTest, HonoursRetryAfterButNeverSleepsPastTheDeadline) {
  Fixture f;
  const PollPolicy p{Duration(10), Duration(10), Duration(10)};
  TimePoint deadline = f.clock.Now() + std::chrono::seconds(60);
  Status throttled = Throttled("429");
  throttled.WithRetryAfter(Duration(5'000));
  ASSERT_TRUE(SleepBeforeNextPoll(p, f.deps(), 0, deadline, throttled));
  EXPECT_EQ(f.sleeper.total().count(), 5'000);

  throttled.WithRetryAfter(Duration(120'000));
  ASSERT_TRUE(SleepBeforeNextPoll(p, f.deps(), 1, deadline, throttled));
  EXPECT_EQ(f.clock.Now(), deadline);  // cut to the deadline
  EXPECT_FALSE(SleepBeforeNextPoll(p, f.deps(), 2, deadline, Status::Ok()));
  EXPECT_EQ(f.clock.Now(), deadline);  // no sleep once it has passed
}

}  // namespace
}  // namespace mvr
