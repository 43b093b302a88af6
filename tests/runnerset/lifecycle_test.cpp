// The decisions of issue 55, items 4 and 5 (runnerset/lifecycle): what the janitor does about the
// job of a VM that is gone, and whether a runner is wedged. Tables of evidence → verdict.
#include <gtest/gtest.h>

#include "runnerset/lifecycle/circuit_breaker.h"
#include "runnerset/lifecycle/lost_job.h"
#include "runnerset/lifecycle/wedged_runner.h"

namespace mvr::runnerset {
namespace {

const TimePoint kT0 = FromUnixSeconds(1'800'000'000);
Duration Sec(int64_t s) { return Duration(s * 1000); }
Duration Min(int64_t m) { return Sec(m * 60); }

// A job that ran 10 minutes on the row's runner, whose VM ended 2 minutes in, failed by GitHub
// 5 minutes after that: lost, first attempt, re-run allowed.
LostJobEvidence Lost() {
  LostJobEvidence e;
  e.rerun_enabled = true;
  e.rerun_max_ran = Min(60);
  e.state = LostJobState::kCompleted;
  e.conclusion = "failure";
  e.job_started_at = kT0;
  e.vm_ended_at = kT0 + Min(2);
  e.job_completed_at = kT0 + Min(7);
  e.run_attempt = 1;
  return e;
}

TEST(LostJob, ALostFirstAttemptIsRerun) {
  EXPECT_EQ(DecideLostJob(Lost()), LostJobVerdict::kRerun);
}

TEST(LostJob, Table) {
  struct Row {
    const char* name;
    void (*change)(LostJobEvidence&);
    LostJobVerdict want;
  };
  const Row rows[] = {
      {"no job or the jobs API cannot say",
       [](LostJobEvidence& e) { e.state = LostJobState::kUnknown; }, LostJobVerdict::kNotLost},
      {"ran on another runner", [](LostJobEvidence& e) { e.state = LostJobState::kElsewhere; },
       LostJobVerdict::kNotLost},
      {"still on its runner: GitHub has not failed it yet",
       [](LostJobEvidence& e) {
         e.state = LostJobState::kOnItsRunner;
         e.job_completed_at.reset();
       },
       LostJobVerdict::kWait},
      {"on its runner but the VM is unknown (no end time)",
       [](LostJobEvidence& e) {
         e.state = LostJobState::kOnItsRunner;
         e.vm_ended_at.reset();
       },
       LostJobVerdict::kNotLost},
      {"completed before its VM ended (a job that failed on its own)",
       [](LostJobEvidence& e) { e.job_completed_at = kT0 + Sec(110); }, LostJobVerdict::kNotLost},
      {"completed within the margin after its VM ended",
       [](LostJobEvidence& e) { e.job_completed_at = *e.vm_ended_at + Sec(10); },
       LostJobVerdict::kNotLost},
      {"completed just past the margin",
       [](LostJobEvidence& e) { e.job_completed_at = *e.vm_ended_at + kLostJobMargin; },
       LostJobVerdict::kRerun},
      {"no VM end time", [](LostJobEvidence& e) { e.vm_ended_at.reset(); },
       LostJobVerdict::kNotLost},
      {"cancelled, not failed", [](LostJobEvidence& e) { e.conclusion = "cancelled"; },
       LostJobVerdict::kNotFailed},
      {"re-running is off", [](LostJobEvidence& e) { e.rerun_enabled = false; },
       LostJobVerdict::kRerunOff},
      {"a re-run already (attempt 2)", [](LostJobEvidence& e) { e.run_attempt = 2; },
       LostJobVerdict::kAlreadyRerun},
      {"ran the limit before its VM ended",
       [](LostJobEvidence& e) {
         e.vm_ended_at = kT0 + Min(60);
         e.job_completed_at = kT0 + Min(65);
       },
       LostJobVerdict::kRanTooLong},
      {"ran just under the limit",
       [](LostJobEvidence& e) {
         e.vm_ended_at = kT0 + Min(60) - Sec(1);
         e.job_completed_at = kT0 + Min(65);
       },
       LostJobVerdict::kRerun},
      {"the 8-hour limit: ran 8 h",
       [](LostJobEvidence& e) {
         e.vm_ended_at = kT0 + Min(480);
         e.job_completed_at = kT0 + Min(490);
       },
       LostJobVerdict::kRanTooLong},
  };
  for (const Row& r : rows) {
    LostJobEvidence e = Lost();
    r.change(e);
    EXPECT_EQ(LostJobVerdictName(DecideLostJob(e)), std::string(LostJobVerdictName(r.want)))
        << r.name;
  }
}

// A runner delivered 3 minutes ago, alive, that never began its job, which GitHub took back.
WedgedEvidence Wedged() {
  WedgedEvidence e;
  e.wedged_after = Sec(120);
  e.since_delivered = Sec(180);
  e.supervisor_answered = true;
  e.supervisor_state = "RUNNING";
  e.job = WedgedJobState::kQueued;
  return e;
}

// The job whose loss is weighed is the one the runner ran (vm-lost seed 171).
TEST(LostJob, TheJobWeighedIsTheOneTheRunnerRan) {
  const LostJobRef own{"octo/app", 7};
  const LostJobRef other{"octo/lib", 9};
  EXPECT_EQ(JobTheRunnerRan(own, "mvr-7-a", "mvr-7-a", other), other) << "it took another";
  EXPECT_EQ(JobTheRunnerRan(own, "mvr-7-a", "", {}), own) << "it took none: its own";
  EXPECT_EQ(JobTheRunnerRan(own, "mvr-7-a", "mvr-7-b", other), own)
      << "another attempt's runner took that one (a claim taken over)";
  EXPECT_EQ(JobTheRunnerRan(own, "", "", other), own) << "no runner name: nothing to match";
  EXPECT_EQ(JobTheRunnerRan(own, "mvr-7-a", "mvr-7-a", {"octo/lib", 0}), own);
}

// The circuit breaker (issue 55, item 4): 3 failures within 10 minutes pause for 15. Events in
// the order recorded: 'f' a failure, 'p' a half-open probe taken (when one is due), 'b' a launch
// committed (its VM booted).
TEST(CircuitBreaker, Table) {
  BreakerPolicy p;
  p.failures = 3;
  p.window = Min(10);
  p.pause = Min(15);
  struct Event {
    char what;
    int64_t at_s;
  };
  struct Row {
    const char* name;
    std::vector<Event> events;
    int64_t now_s;
    BreakerPhase want;
    int64_t until_s;  // when kOpen
    bool probe_due;   // when kHalfOpen
  };
  const std::vector<Event> paused = {{'f', 0}, {'f', 60}, {'f', 120}};  // until 1020
  auto then = [&](std::vector<Event> more) {
    std::vector<Event> all = paused;
    all.insert(all.end(), more.begin(), more.end());
    return all;
  };
  const Row rows[] = {
      {"no failures", {}, 0, BreakerPhase::kClosed, 0, false},
      {"two failures: below the count",
       {{'f', 0}, {'f', 60}},
       120,
       BreakerPhase::kClosed,
       0,
       false},
      {"three within the window pause from the third", paused, 130, BreakerPhase::kOpen, 1020,
       false},
      {"three, but the first fell out of the window",
       {{'f', 0}, {'f', 400}, {'f', 700}},
       710,
       BreakerPhase::kClosed,
       0,
       false},
      {"recorded out of order, still within the window",
       {{'f', 120}, {'f', 0}, {'f', 60}},
       130,
       BreakerPhase::kOpen,
       60 + 900,
       false},
      {"failures while paused are not counted: the pause keeps its end",
       then({{'f', 300}, {'f', 600}}), 700, BreakerPhase::kOpen, 1020, false},
      {"a launch committed while paused (begun before) does not close it", then({{'b', 500}}), 700,
       BreakerPhase::kOpen, 1020, false},
      {"no probe may launch while paused", then({{'p', 1000}}), 1010, BreakerPhase::kOpen, 1020,
       false},
      {"after the pause: half-open, a probe due", paused, 1020, BreakerPhase::kHalfOpen, 0, true},
      {"a probe under way: the others wait", then({{'p', 1030}}), 1040, BreakerPhase::kHalfOpen, 0,
       false},
      {"a probe that neither booted nor failed within a window: another is due",
       then({{'p', 1030}}), 1030 + 600, BreakerPhase::kHalfOpen, 0, true},
      {"half-open: one failure pauses again", then({{'p', 1030}, {'f', 1100}}), 1110,
       BreakerPhase::kOpen, 1100 + 900, false},
      {"paused again: its probe taken before does not count for the next half-open",
       then({{'p', 1030}, {'f', 1100}}), 2000, BreakerPhase::kHalfOpen, 0, true},
      {"a window after the pause and no probe booted: still half-open", paused, 1020 + 600,
       BreakerPhase::kHalfOpen, 0, true},
      {"the probe's VM booted: closed", then({{'p', 1030}, {'b', 1050}}), 1060,
       BreakerPhase::kClosed, 0, false},
      {"closed again: one failure is one of three", then({{'p', 1030}, {'b', 1050}, {'f', 1100}}),
       1110, BreakerPhase::kClosed, 0, false},
      {"closed again: three more within the window pause again",
       then({{'p', 1030}, {'b', 1050}, {'f', 1100}, {'f', 1200}, {'f', 1300}}), 1310,
       BreakerPhase::kOpen, 1300 + 900, false},
  };
  for (const Row& r : rows) {
    BreakerRecord rec;
    for (const Event& e : r.events) {
      const TimePoint at = kT0 + Sec(e.at_s);
      if (e.what == 'f') rec = RecordBreakerFailure(p, rec, at);
      if (e.what == 'b') rec = RecordBreakerSuccess(p, rec, at);
      if (e.what == 'p') rec = TakeBreakerProbe(p, rec, at).value_or(rec);
    }
    const BreakerVerdict v = DecideBreaker(p, rec, kT0 + Sec(r.now_s));
    EXPECT_EQ(v.phase, r.want) << r.name;
    EXPECT_EQ(v.probe_due, r.probe_due) << r.name;
    if (r.want == BreakerPhase::kOpen) {
      ASSERT_TRUE(v.until) << r.name;
      EXPECT_EQ(*v.until, kT0 + Sec(r.until_s)) << r.name;
    }
  }
  // One probe at a time: a second take while the first is under way gets nothing.
  BreakerRecord rec;
  for (const Event& e : paused) rec = RecordBreakerFailure(p, rec, kT0 + Sec(e.at_s));
  std::optional<BreakerRecord> first = TakeBreakerProbe(p, rec, kT0 + Sec(1030));
  ASSERT_TRUE(first);
  EXPECT_FALSE(TakeBreakerProbe(p, *first, kT0 + Sec(1031))) << "the second waits";
  EXPECT_FALSE(TakeBreakerProbe(p, rec, kT0 + Sec(1000))) << "none while paused";
  BreakerPolicy off;
  BreakerRecord none;
  for (int i = 0; i < 10; ++i) none = RecordBreakerFailure(off, none, kT0 + Sec(i));
  EXPECT_EQ(DecideBreaker(off, none, kT0 + Sec(10)).phase, BreakerPhase::kClosed) << "off";
}

TEST(WedgedRunner, AHungWorkerWhoseJobWaitsIsEndedAndItsJobLaunchedAgain) {
  EXPECT_EQ(DecideWedged(Wedged()), WedgedVerdict::kEndAndRelaunch);
}

TEST(WedgedRunner, Table) {
  struct Row {
    const char* name;
    void (*change)(WedgedEvidence&);
    WedgedVerdict want;
  };
  const Row rows[] = {
      {"off", [](WedgedEvidence& e) { e.wedged_after = Sec(0); }, WedgedVerdict::kLeave},
      {"the supervisor did not answer", [](WedgedEvidence& e) { e.supervisor_answered = false; },
       WedgedVerdict::kLeave},
      {"its runner began a job", [](WedgedEvidence& e) { e.job_started = true; },
       WedgedVerdict::kLeave},
      {"young", [](WedgedEvidence& e) { e.since_delivered = Sec(119); }, WedgedVerdict::kLeave},
      {"exactly the limit", [](WedgedEvidence& e) { e.since_delivered = Sec(120); },
       WedgedVerdict::kEndAndRelaunch},
      {"handed its job, never began it",
       [](WedgedEvidence& e) { e.job = WedgedJobState::kOnItsRunner; }, WedgedVerdict::kEnd},
      {"its job ended (ran elsewhere): the janitor's other phases decide",
       [](WedgedEvidence& e) { e.job = WedgedJobState::kEnded; }, WedgedVerdict::kLeave},
      {"the jobs API cannot say", [](WedgedEvidence& e) { e.job = WedgedJobState::kUnknown; },
       WedgedVerdict::kLeave},
      {"its runner exited without a job, however young",
       [](WedgedEvidence& e) {
         e.exited_without_job = true;
         e.supervisor_state = "TERMINATING";
         e.since_delivered = Sec(5);
       },
       WedgedVerdict::kEndAndRelaunch},
      {"exited without a job, but the job ended",
       [](WedgedEvidence& e) {
         e.exited_without_job = true;
         e.job = WedgedJobState::kEnded;
       },
       WedgedVerdict::kLeave},
      {"still starting its runner (not RUNNING)",
       [](WedgedEvidence& e) { e.supervisor_state = "STARTING_RUNNER"; }, WedgedVerdict::kLeave},
  };
  for (const Row& r : rows) {
    WedgedEvidence e = Wedged();
    r.change(e);
    EXPECT_EQ(WedgedVerdictName(DecideWedged(e)), std::string(WedgedVerdictName(r.want))) << r.name;
  }
}

}  // namespace
}  // namespace mvr::runnerset
