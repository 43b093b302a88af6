// Issue 56: the set's shared paces (shared_pace.h) and the GitHub calls a launch no longer makes.
// Two launchers stand for two processes of one set: they share only the store.
#include "runnerset/launch/shared_pace.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "platform_fixture.h"

namespace mvr::runnerset::testing {
namespace {

int64_t Ms(TimePoint t) { return ToUnixMillis(t); }

// GCRA by table: (stored arrival time, now) -> (slot, next arrival time); µs, interval 200 ms,
// a burst of 5 (tolerance 800 ms).
TEST(SharedPaceStepTest, Table) {
  struct Row {
    int64_t stored, now, slot, next;
  };
  const Row rows[] = {
      {0, 1'000'000, 1'000'000, 1'200'000},          // none stored: at once
      {900'000, 1'000'000, 1'000'000, 1'200'000},    // in the past: at once
      {1'600'000, 1'000'000, 1'000'000, 1'800'000},  // within the burst: at once
      {1'800'000, 1'000'000, 1'000'000, 2'000'000},  // the burst's last
      {2'000'000, 1'000'000, 1'200'000, 2'200'000},  // past the burst: one interval later
      {5'000'000, 1'000'000, 4'200'000, 5'200'000},
  };
  for (const Row& r : rows) {
    const PaceStep s = NextPaceStep(r.stored, r.now, 200'000, 800'000);
    EXPECT_EQ(s.slot_us, r.slot) << r.stored << " " << r.now;
    EXPECT_EQ(s.next_tat_us, r.next) << r.stored << " " << r.now;
  }
}

// Two processes reserving at once keep one rate between them: the burst, then one slot each
// interval, whichever process asks.
TEST(SharedPaceTest, TwoProcessesKeepOneRate) {
  ManualClock clock;
  clock.Advance(std::chrono::hours(1));
  store::MemoryStore store(clock);
  SharedPace a(store, clock, "runmicrovm", 5, 5);
  SharedPace b(store, clock, "runmicrovm", 5, 5);
  const int64_t now = Ms(clock.Now());
  for (int i = 0; i < 20; ++i) {
    Result<TimePoint> slot = (i % 2 ? b : a).Reserve();
    ASSERT_TRUE(slot.ok()) << slot.status().ToString();
    EXPECT_EQ(Ms(*slot) - now, std::max(0, i - 4) * 200) << "call " << i;
  }
  // Peek reserves nothing.
  EXPECT_EQ(Ms(a.Peek().value()) - now, 16 * 200);
  EXPECT_EQ(Ms(b.Peek().value()) - now, 16 * 200);
}

// The sliding window by table: at most 3 calls in any 10 s (ms).
TEST(SharedWindowStepTest, Table) {
  struct Row {
    std::vector<int64_t> calls;
    int64_t now, slot;
    std::vector<int64_t> kept;
  };
  const std::vector<Row> rows = {
      {{}, 1000, 1000, {1000}},
      {{1000, 1000}, 1000, 1000, {1000, 1000, 1000}},            // the burst
      {{1000, 1000, 1000}, 2000, 11000, {1000, 1000, 11000}},    // full: once the oldest left
      {{1000, 2000, 3000}, 20000, 20000, {2000, 3000, 20000}},   // the window moved on
      {{1000, 1000, 11000}, 2000, 11000, {1000, 11000, 11000}},  // never before one reserved
  };
  for (const Row& r : rows) {
    const WindowStep s = NextWindowStep(r.calls, r.now, 3, 10'000);
    EXPECT_EQ(s.slot_ms, r.slot) << r.now;
    EXPECT_EQ(s.kept, r.kept) << r.now;
  }
}

// Two processes share one window: 150 at once, the 151st a minute after the first.
TEST(SharedWindowTest, TwoProcessesShareOneWindow) {
  ManualClock clock;
  clock.Advance(std::chrono::hours(1));
  store::MemoryStore store(clock);
  SharedWindow a(store, clock, "jitconfig", 150, Duration(60'000));
  SharedWindow b(store, clock, "jitconfig", 150, Duration(60'000));
  const int64_t now = Ms(clock.Now());
  for (int i = 0; i < 150; ++i) ASSERT_EQ(Ms((i % 2 ? b : a).Reserve().value()), now) << i;
  clock.Advance(Duration(5'000));
  EXPECT_EQ(Ms(b.Peek().value()), now + 60'000);
  EXPECT_EQ(Ms(a.Reserve().value()), now + 60'000);
}

class LauncherPaceTest : public RunnerSetTest {
 protected:
  size_t Requests(const std::string& what) {
    return static_cast<size_t>(
        std::count_if(platform_.trace.begin(), platform_.trace.end(),
                      [&](const std::string& r) { return r.find(what) != std::string::npos; }));
  }
  // Two queued jobs; the runner launched for the second (`waiting`) took the first (`job`).
  struct Taken {
    int64_t job;
    int64_t waiting;
    Runner other;
  };
  Taken RunnerOfTheSecondTookTheFirst() {
    const int64_t job = QueueJob();
    const int64_t waiting = QueueJob();
    const Runner other = OnlineRunner("mvr-demo-" + std::to_string(waiting) + "-0a1b2c3d");
    Launched(other.name, other.id, platform_.RunningVm(), waiting);
    platform_.Tick();
    EXPECT_EQ(JobOf(job).runner_name, other.name);
    return Taken{job, waiting, other};
  }
};

// A launch whose JIT config would wait past the longest a launch waits is deferred until the
// set's slot, before it asks GitHub anything (it used to read the job and register at once, and
// met GitHub's secondary limit with every other process).
TEST_F(LauncherPaceTest, JitSlotFarOffDefersBeforeAskingGitHub) {
  config_.launcher.jit_configs_per_minute = 1;  // one a minute, a burst of one
  SharedWindow other(store_, m_.clock, "jitconfig", 1, Duration(60'000));
  ASSERT_TRUE(other.Reserve().ok());  // another process took this minute's
  const int64_t job = QueueJob();
  platform_.trace.clear();
  LaunchOutcome o = L().Handle(Intent(job));
  ASSERT_EQ(o.decision, LaunchDecision::kDeferred) << o.detail;
  EXPECT_GE(o.retry_after, Duration(59'000)) << o.detail;
  EXPECT_TRUE(platform_.trace.empty()) << platform_.trace.front();
  // At its slot it launches.
  m_.clock.Advance(o.retry_after);
  o = L().Handle(Intent(job));
  EXPECT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
}

// Two processes launching at once take RunMicrovm's slots from one pace: the second waits for
// the interval after the first (each paced alone, it went at once).
TEST_F(LauncherPaceTest, TwoLaunchersShareRunMicrovmPace) {
  config_.launcher.run_microvm_per_second = 1.0 / 40;  // one every 40 s, a burst of one
  config_.launcher.launch_timeout_seconds = 300;
  const int64_t a = QueueJob();
  const int64_t b = QueueJob();
  Launcher& first = NewLauncher();
  Launcher& second = NewLauncher();
  const TimePoint began = m_.clock.Now();
  ASSERT_EQ(first.Handle(Intent(a)).decision, LaunchDecision::kLaunched);
  const Duration one = std::chrono::duration_cast<Duration>(m_.clock.Now() - began);
  ASSERT_LT(one, Duration(40'000)) << "a launch alone takes longer than the pace's interval";
  ASSERT_EQ(second.Handle(Intent(b)).decision, LaunchDecision::kLaunched);
  EXPECT_GE(m_.clock.Now() - began, Duration(40'000) + Duration(0))
      << "the second process's RunMicrovm did not wait for the set's next slot";
  EXPECT_EQ(std::count(platform_.trace.begin(), platform_.trace.end(), "POST /2025-09-09/microvms"),
            2);
}

// A taken job's relaunch reads the waiting job once: FindWaitingHead's answer is the launch's
// still-queued check (it used to be read again at once). The setup is launcher_test's
// AJobWhoseRunnerTookAnotherJobIsLaunchedAgainAtOnce.
TEST_F(LauncherPaceTest, RelaunchOfTakenJobReadsItOnce) {
  const auto [job, waiting, other] = RunnerOfTheSecondTookTheFirst();
  ASSERT_TRUE(table_.ClaimJob(mvr::testing::kPlatformRepository, job).ok());
  m_.clock.Advance(config_.launch_timeout());
  platform_.trace.clear();
  const TakenIntent taken{other.name, mvr::testing::kPlatformRepository, job, "d-1"};
  LaunchOutcome o = L().Handle(taken);
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(Requests("GET /repos/octo/app/actions/jobs/" + std::to_string(waiting)), 1u);
}

// A taken intent whose taken job's own launch has not begun needs no GitHub read: that launch
// serves whichever job is left waiting (it used to read the waiting job first, a GET a job in a
// burst, where nearly every runner takes another job than its own).
TEST_F(LauncherPaceTest, TakenIntentServedByTheTakenJobsLaunchReadsNothing) {
  const auto [job, waiting, other] = RunnerOfTheSecondTookTheFirst();
  platform_.trace.clear();
  const TakenIntent taken{other.name, mvr::testing::kPlatformRepository, job, "d-1"};
  LaunchOutcome o = L().Handle(taken);
  EXPECT_EQ(o.decision, LaunchDecision::kIgnored) << o.detail;
  EXPECT_EQ(Requests("GET /repos/"), 0u) << o.detail;
  // Its launch, when its intent comes round, follows the chain to the waiting job and serves it.
  o = L().Handle(Intent(job));
  EXPECT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
}

}  // namespace
}  // namespace mvr::runnerset::testing
