#include "runnerset/pools/pool_target.h"

#include <gtest/gtest.h>

#include "../support/manual_seam.h"
#include "runnerset/config/config.h"
#include "store/memory_store.h"

namespace mvr::runnerset {
namespace {

// 2026-01-01 00:00 UTC, a Thursday.
const TimePoint kThursday = TimePoint(std::chrono::seconds(1'767'225'600));
constexpr Duration kHour{3'600'000};
constexpr Duration kWeek{7 * 24 * 3'600'000LL};

TEST(PoolTargetTest, WeeksBeginOnMondayAtMidnightUtc) {
  EXPECT_EQ(HourOfWeek(kThursday), 3 * 24);
  EXPECT_EQ(HourOfWeek(kThursday - 3 * 24 * kHour), 0);  // Monday 2025-12-29 00:00
  EXPECT_EQ(HourOfWeek(kThursday - 3 * 24 * kHour - Duration(1)), 167);
  EXPECT_EQ(WeekOf(kThursday - 3 * 24 * kHour), WeekOf(kThursday));
  EXPECT_EQ(WeekOf(kThursday - 3 * 24 * kHour - Duration(1)), WeekOf(kThursday) - 1);
  EXPECT_EQ(WeekOf(kThursday + kWeek), WeekOf(kThursday) + 1);
  EXPECT_EQ(HourOfWeek(TimePoint(Duration(0))), 3 * 24);  // 1970-01-01 was a Thursday too
}

TEST(PoolTargetTest, PoissonStockLeavesAMemberForNineteenJobsInTwenty) {
  EXPECT_EQ(PoissonStock(0, 0.95), 0);
  // Mean 1: P(X <= 2) = 0.920, P(X <= 3) = 0.981: four members.
  EXPECT_EQ(PoissonStock(1, 0.95), 4);
  // A quiet hour still keeps one.
  EXPECT_EQ(PoissonStock(0.01, 0.95), 1);
  // Mean 10: P(X <= 15) = 0.951.
  EXPECT_EQ(PoissonStock(10, 0.95), 16);
  EXPECT_GT(PoissonStock(1000, 0.95), 1000);
}

HourArrivals Row(int64_t week, int hour, int64_t jobs, int64_t peak) {
  return HourArrivals{week, hour, jobs, peak};
}

TEST(PoolTargetTest, SizedFromTheMeanOfPastWeeksAndTheirBursts) {
  SizingInputs in;
  in.target.p95_queued_to_started_seconds = 10;
  in.target.max = 30;
  in.this_week = 100;
  in.lead_time = Duration(90'000);
  // Two weeks kept: 40 and 80 jobs at this hour (mean 60 an hour: 1.5 in 90 s).
  in.now = {Row(98, 10, 40, 3), Row(99, 10, 80, 4)};
  PoolSizing s = SizeForTarget(in);
  EXPECT_DOUBLE_EQ(s.jobs_per_hour, 60);
  EXPECT_EQ(s.size, PoissonStock(1.5, 0.95));
  EXPECT_EQ(s.size, 5);
  // The next hour's burst of 25 within a minute asks for 25 members, ready before it.
  in.next = {Row(99, 11, 30, 25)};
  s = SizeForTarget(in);
  EXPECT_EQ(s.size, 25);
  EXPECT_EQ(s.peak_minute, 25);
  // Never beyond the max.
  in.target.max = 12;
  EXPECT_EQ(SizeForTarget(in).size, 12);
}

TEST(PoolTargetTest, ThisWeeksLastHourRaisesAQuietHistory) {
  SizingInputs in;
  in.target.p95_queued_to_started_seconds = 10;
  in.this_week = 100;
  in.now = {Row(99, 10, 2, 1)};
  const int quiet = SizeForTarget(in).size;
  in.previous = {Row(100, 9, 240, 6)};  // a busy hour just now
  const PoolSizing busy = SizeForTarget(in);
  EXPECT_DOUBLE_EQ(busy.jobs_per_hour, 240);
  EXPECT_GT(busy.size, quiet);
  EXPECT_GE(busy.size, 6);
  // Rows older than the weeks kept do not count.
  SizingInputs old;
  old.target.p95_queued_to_started_seconds = 10;
  old.this_week = 100;
  old.now = {Row(100 - ArrivalHistory::kWeeksKept - 1, 10, 500, 50)};
  EXPECT_EQ(SizeForTarget(old).size, 0);
}

TEST(PoolTargetTest, NoPoolWhenTheColdPathMeetsTheTarget) {
  SizingInputs in;
  in.target.p95_queued_to_started_seconds = 30;
  in.this_week = 100;
  in.now = {Row(99, 10, 400, 20)};
  in.cold_p95_seconds = 24.0;
  PoolSizing s = SizeForTarget(in);
  EXPECT_EQ(s.size, 0);
  EXPECT_NE(s.why.find("cold path"), std::string::npos) << s.why;
  in.cold_p95_seconds = 31.0;
  EXPECT_EQ(SizeForTarget(in).size, 20);
}

TEST(PoolTargetTest, TheStoreKeepsEachHoursJobsAndTheBusiestMinute) {
  mvr::testing::ManualSeam m;
  store::MemoryStore store{m.clock};
  ArrivalHistory history(store, m.seam);
  const TimePoint at = kThursday + 10 * kHour;  // Thursday 10:00
  // Three jobs in one minute, one in the next, one a week earlier.
  for (int64_t s : {0, 10, 59}) ASSERT_TRUE(history.Record("small", at + Duration(s * 1000)).ok());
  ASSERT_TRUE(history.Record("small", at + Duration(61'000)).ok());
  ASSERT_TRUE(history.Record("small", at - kWeek).ok());
  ASSERT_TRUE(history.Record("large", at).ok());
  Result<std::vector<HourArrivals>> rows = history.Hour("small", HourOfWeek(at));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].week, WeekOf(at) - 1);
  EXPECT_EQ((*rows)[0].jobs, 1);
  EXPECT_EQ((*rows)[1].week, WeekOf(at));
  EXPECT_EQ((*rows)[1].jobs, 4);
  EXPECT_EQ((*rows)[1].peak_minute, 3);
  EXPECT_EQ((*rows)[1].hour_of_week, HourOfWeek(at));
  // Another hour of the week has none.
  rows = history.Hour("small", HourOfWeek(at) + 1);
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());
}

Result<ServeConfig> Parse(const std::string& hot) {
  return ParseServeConfig(
      R"({"runnerSetId": "t", "region": "us-east-1",
          "github": {"repository": "octo/app", "patFile": "/p", "webhookSecretFile": "/w"},
          "classes": [{"label": "small", "image": "img-1", "hotPoolSize": )" +
          hot + R"(}], "store": "memory:", "queue": "memory:"})",
      "test");
}

TEST(PoolTargetTest, AClassGivesATargetInsteadOfASize) {
  Result<ServeConfig> c = Parse(R"({"target": {"p95QueuedToStartedSeconds": 10}, "max": 25})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const RunnerClass& cls = c->classes[0];
  EXPECT_EQ(cls.hot_pool_target.p95_queued_to_started_seconds, 10);
  EXPECT_EQ(cls.hot_pool_target.max, 25);
  EXPECT_EQ(cls.hot_pool_size, 25);  // the class has a pool, of at most this
  EXPECT_TRUE(cls.has_pool_target());
  c = Parse(R"({"target": {"p95QueuedToStartedSeconds": 10}})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->classes[0].hot_pool_target.max, 20);
}

TEST(PoolTargetTest, ABadTargetIsNamed) {
  for (const auto& [hot, named] : std::vector<std::pair<std::string, std::string>>{
           {R"({"max": 5})", "hotPoolSize.target"},
           {R"({"target": {}})", "p95QueuedToStartedSeconds: required"},
           {R"({"target": {"p95QueuedToStartedSeconds": 0}})", "p95QueuedToStartedSeconds"},
           {R"({"target": {"p95": 10}})", "p95QueuedToStartedSeconds: required"},
           {R"({"target": {"p95QueuedToStartedSeconds": 10}, "max": 0})", "max"},
           {R"({"target": {"p95QueuedToStartedSeconds": 10}, "size": 3})", "size"}}) {
    Result<ServeConfig> c = Parse(hot);
    ASSERT_FALSE(c.ok()) << hot;
    EXPECT_NE(c.status().message().find(named), std::string::npos)
        << hot << ": " << c.status().message();
  }
}

}  // namespace
}  // namespace mvr::runnerset
