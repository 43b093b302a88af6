// The runner watch's spending of the GitHub budget (issue 53, item 6): one runner looked up by
// name rather than the scope's whole listing, looks that back off, a listing only when it is the
// cheaper look, and an allowance a minute however many runners are awaited.
#include "runnerset/launch/runner_watch.h"

#include <gtest/gtest.h>

#include "../fleet/fakes.h"
#include "base/clock.h"
#include "base/logger.h"

namespace mvr::runnerset {
namespace {

using ::testing::_;
using ::testing::Invoke;

TEST(PlanWatchLook, NamesWhenFewAreDueTheListingWhenItCostsLessAndNothingWithoutAllowance) {
  struct Row {
    size_t due, pages, left;
    WatchLook::Kind kind;
    size_t names;
  } rows[] = {
      {0, 1, 20, WatchLook::Kind::kNone, 0},           // nothing due
      {3, 1, 0, WatchLook::Kind::kNone, 0},            // the minute's calls are spent
      {1, 1, 20, WatchLook::Kind::kByName, 1},         // one name: one call either way
      {2, 1, 20, WatchLook::Kind::kFullListing, 0},    // one page serves both
      {5, 30, 20, WatchLook::Kind::kByName, 5},        // an organisation's 30 pages: by name
      {40, 30, 20, WatchLook::Kind::kByName, 20},      // the listing does not fit the allowance
      {40, 30, 30, WatchLook::Kind::kFullListing, 0},  // it does
      {3, 0, 20, WatchLook::Kind::kFullListing, 0},    // no listing yet counts as one page
  };
  for (const Row& r : rows) {
    WatchLook look = PlanWatchLook(r.due, r.pages, r.left);
    EXPECT_EQ(look.kind, r.kind) << r.due << " due, " << r.pages << " pages, " << r.left << " left";
    EXPECT_EQ(look.names, r.names) << r.due << " due, " << r.pages << " pages, " << r.left;
  }
}

class RunnerWatchTest : public ::testing::Test {
 protected:
  RunnerWatchTest() : logger_(sink_, clock_) {
    ON_CALL(github_, ListRunners(_, _))
        .WillByDefault(
            Invoke([this](const github::RunnerScope&, const github::ListRunnersOptions& options) {
              if (options.name.empty())
                ++listings_;
              else
                ++by_name_;
              std::vector<github::Runner> out;
              for (const github::Runner& r : runners_) {
                if (options.name.empty() || options.name == r.name) out.push_back(r);
              }
              return Result<std::vector<github::Runner>>(out);
            }));
  }
  int64_t NowMs() const { return clock_.Now().time_since_epoch().count(); }
  // Polls once a second for `seconds`, as `mvr serve`'s watcher thread does.
  void PollFor(int seconds) {
    for (int i = 0; i < seconds; ++i) {
      clock_.Advance(Duration(1'000));
      watch_.Poll();
    }
  }
  void Online(const std::string& name) {
    github::Runner r;
    r.id = static_cast<int64_t>(runners_.size() + 1);
    r.name = name;
    r.status = "online";
    runners_.push_back(r);
  }

  ManualClock clock_;
  MemorySink sink_;
  Logger logger_;
  ::testing::NiceMock<fleet::testing::MockGitHub> github_;
  Metrics metrics_;
  RunnerWatch watch_{clock_, logger_, github_, github::RunnerScope::Organization("octo"), metrics_};
  std::vector<github::Runner> runners_;
  int listings_ = 0;
  int by_name_ = 0;
};

TEST_F(RunnerWatchTest, OneRunnerIsLookedUpByNameAndLessOftenTheLongerItTakes) {
  watch_.Await("mvr-ci-1", "job-1", NowMs());
  PollFor(60);
  // Looks at 1, 3, 7, 15 s, then every 8 s: 9 in a minute (it used to list every second: 60).
  EXPECT_EQ(by_name_, 9);
  EXPECT_EQ(listings_, 0);
  Online("mvr-ci-1");
  PollFor(8);
  EXPECT_EQ(watch_.awaited(), 0u);
  EXPECT_TRUE(metrics_.MarkOf("job-1", Milestone::kRunnerOnline).has_value());
  const int calls = by_name_;
  PollFor(60);
  EXPECT_EQ(by_name_, calls) << "nothing awaited, nothing asked";
}

TEST_F(RunnerWatchTest, ARunnerOnlineSoonIsSeenAtItsFirstLook) {
  const int64_t received = NowMs();
  watch_.Await("mvr-ci-1", "job-1", received);
  Online("mvr-ci-1");
  PollFor(1);
  EXPECT_EQ(watch_.awaited(), 0u);
  EXPECT_EQ(metrics_.MarkOf("job-1", Milestone::kRunnerOnline), received + 1'000);
  EXPECT_EQ(by_name_, 1);
}

TEST_F(RunnerWatchTest, ManyAwaitedShareOneListingAndTheMinutesAllowanceHolds) {
  for (int i = 0; i < 200; ++i) {
    watch_.Await("mvr-ci-" + std::to_string(i), "job-" + std::to_string(i), NowMs());
  }
  PollFor(600);
  // Ten minutes of 200 runners that never come online: at most the allowance a minute.
  EXPECT_LE(listings_ + by_name_, 10 * static_cast<int>(RunnerWatch::kCallsPerMinute));
  EXPECT_GT(listings_, 0);
  EXPECT_EQ(by_name_, 0) << "one page of a listing serves all 200";
}

TEST_F(RunnerWatchTest, AJobStartSettlesARunnerNoLookSawAndRunnersAreDroppedAfterTenMinutes) {
  const int64_t received = NowMs();
  watch_.Await("mvr-ci-1", "job-1", received);
  watch_.Await("mvr-ci-2", "job-2", received);
  watch_.JobStarted("mvr-ci-1", TimePoint(Duration(received + 500)));
  EXPECT_EQ(metrics_.MarkOf("job-1", Milestone::kRunnerOnline), received + 500);
  PollFor(601);
  EXPECT_EQ(watch_.awaited(), 0u);
  EXPECT_FALSE(metrics_.MarkOf("job-2", Milestone::kRunnerOnline).has_value());
}

TEST_F(RunnerWatchTest, AFailedLookIsLoggedAndBacksOffLikeAMiss) {
  ON_CALL(github_, ListRunners(_, _))
      .WillByDefault(Invoke([this](const github::RunnerScope&, const github::ListRunnersOptions&) {
        ++by_name_;
        return Result<std::vector<github::Runner>>(Status(Code::kTransient, "GitHub is down"));
      }));
  watch_.Await("mvr-ci-1", "job-1", NowMs());
  PollFor(60);
  EXPECT_EQ(by_name_, 9);
  EXPECT_NE(sink_.Joined().find("GitHub is down"), std::string::npos);
}

}  // namespace
}  // namespace mvr::runnerset
