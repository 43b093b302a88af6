// The launcher and the job's state (issue 55, item 3): a late queued launches nothing, a job
// waiting for an environment's approval gets no VM until GitHub says queued, and the other
// deliveries of a job are recorded whatever their order.
#include <gtest/gtest.h>

#include "platform_fixture.h"
#include "runnerset/launch/launcher.h"

namespace mvr::runnerset::testing {
namespace {

class LauncherJobStateTest : public RunnerSetTest {
 protected:
  LaunchOutcome Event(int64_t job, const std::string& action) {
    return L().Handle(
        JobEventIntent{mvr::testing::kPlatformRepository, job, action, "d-" + action});
  }
  int64_t GatedJob() {
    emulate::github::JobSpec spec;
    spec.repository = mvr::testing::kPlatformRepository;
    spec.labels = {"self-hosted", "mvr-small"};
    spec.steps = {"true"};
    spec.wait_for_environment = true;
    return platform_.github_model->QueueJob(spec).value().id;
  }
  JobState StateOf(int64_t job) {
    return JobStateLedger(store_, m_.clock).Get(mvr::testing::kPlatformRepository, job).value();
  }
};

// RunsOn #539's order: completed (cancelled while queued, or run elsewhere) before queued. GitHub
// may still list the job queued (its API lags the deliveries); the late queued launches nothing.
TEST_F(LauncherJobStateTest, AQueuedArrivingAfterCompletedLaunchesNothing) {
  const int64_t job = QueueJob();
  ASSERT_EQ(Event(job, "completed").decision, LaunchDecision::kIgnored);
  LaunchOutcome o = L().Handle(Intent(job));
  EXPECT_EQ(o.decision, LaunchDecision::kDroppedNotQueued) << o.detail;
  EXPECT_NE(o.detail.find("late queued"), std::string::npos) << o.detail;
  EXPECT_TRUE(platform_.VmIds().empty()) << "no VM was launched";
  EXPECT_TRUE(platform_.Runners().empty()) << "no runner was registered";
  EXPECT_EQ(StateOf(job).phase, JobPhase::kCompleted) << "the late queued undid nothing";
}

TEST_F(LauncherJobStateTest, AQueuedArrivingAfterInProgressLaunchesNothing) {
  const int64_t job = QueueJob();
  ASSERT_EQ(Event(job, "in_progress").decision, LaunchDecision::kIgnored);
  EXPECT_EQ(L().Handle(Intent(job)).decision, LaunchDecision::kDroppedNotQueued);
  EXPECT_TRUE(platform_.VmIds().empty());
  // The janitor's launch is GitHub's own word that the job is queued again: it goes on.
  LaunchIntent janitor = Intent(job);
  janitor.delivery_id = "janitor";
  EXPECT_EQ(L().Handle(janitor).decision, LaunchDecision::kLaunched);
}

// wedged-runner seed 101: the job was handed to the runner launched for it, whose worker never
// read it; a launch then kept GitHub's in-progress answer, and GitHub put the job back in the
// queue 60 s later with no webhook. The janitor's launch (GitHub lists the job queued) read the
// kept answer, found the job on its own runner, and dropped: the job never ran.
TEST_F(LauncherJobStateTest, TheJanitorsLaunchOfAJobTakenBackReadsItAnew) {
  platform_.github_model_options.assignment_pickup_timeout = Duration(60'000);
  platform_.Rebuild(mvr::testing::InProcessPlatform::DefaultOptions());
  const int64_t job = QueueJob();
  OnlineRunner("mvr-demo-" + std::to_string(job) + "-0a1b2c3d");  // never polls for the job
  platform_.Tick();
  ASSERT_EQ(JobOf(job).status, "in_progress");
  EXPECT_EQ(L().Handle(Intent(job)).decision, LaunchDecision::kDroppedNotQueued)
      << "its own runner has it";
  m_.clock.Advance(Duration(61'000));
  platform_.Tick();
  ASSERT_EQ(JobOf(job).status, "queued") << "GitHub took it back";
  LaunchIntent janitor = Intent(job);
  janitor.delivery_id = "janitor";
  LaunchOutcome o = L().Handle(janitor);
  EXPECT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
}

// CloudSnorkel #416: a job behind an approval is delivered queued, then waiting, then queued
// again once approved. The first queued gets no VM while GitHub says the job waits.
TEST_F(LauncherJobStateTest, AJobWaitingForApprovalGetsNoVmUntilApproved) {
  const int64_t job = GatedJob();
  LaunchOutcome first = L().Handle(Intent(job));
  EXPECT_EQ(first.decision, LaunchDecision::kDeferred) << first.detail;
  EXPECT_GE(first.retry_after, config_.defer_delay());
  EXPECT_TRUE(platform_.VmIds().empty()) << "no VM while the job waits for its approval";
  EXPECT_TRUE(platform_.Runners().empty());
  EXPECT_TRUE(StateOf(job).waited);
  ASSERT_TRUE(platform_.github_model->ApproveJob(job).ok());
  LaunchOutcome approved = L().Handle(Intent(job));
  EXPECT_EQ(approved.decision, LaunchDecision::kLaunched) << approved.detail;
  // The first queued's deferred intent comes back: the job has its VM, and gets no other.
  EXPECT_NE(L().Handle(Intent(job)).decision, LaunchDecision::kLaunched);
  EXPECT_EQ(platform_.VmIds().size(), 1u);
}

TEST_F(LauncherJobStateTest, ALongWaitForApprovalIsRecheckedLessOften) {
  const int64_t job = GatedJob();
  LaunchIntent in = Intent(job);
  m_.clock.Advance(Duration(3'600'000));
  LaunchOutcome o = L().Handle(in);
  ASSERT_EQ(o.decision, LaunchDecision::kDeferred);
  EXPECT_EQ(o.retry_after, Duration(300'000)) << "at most every 5 minutes";
}

TEST_F(LauncherJobStateTest, AWaitingRecordsAndALateWaitingUndoesNothing) {
  const int64_t job = QueueJob();
  EXPECT_EQ(Event(job, "waiting").decision, LaunchDecision::kIgnored);
  EXPECT_TRUE(StateOf(job).waited);
  EXPECT_EQ(Event(job, "completed").decision, LaunchDecision::kIgnored);
  LaunchOutcome late = Event(job, "waiting");
  EXPECT_NE(late.detail.find("late waiting"), std::string::npos) << late.detail;
  EXPECT_EQ(StateOf(job).phase, JobPhase::kCompleted);
}

// A terminate intent records completed: its job's late queued launches nothing.
TEST_F(LauncherJobStateTest, ATerminateRecordsTheJobCompleted) {
  const int64_t job = QueueJob();
  TerminateIntent t;
  t.runner_name = "mvr-demo-" + std::to_string(job) + "-0a1b2c3d";
  t.repository = mvr::testing::kPlatformRepository;
  t.job_id = job;
  L().Handle(t);
  EXPECT_EQ(StateOf(job).phase, JobPhase::kCompleted);
  EXPECT_EQ(L().Handle(Intent(job)).decision, LaunchDecision::kDroppedNotQueued);
}

// The intent's own job is not fenced: its `completed` recorded (by another launcher) while the
// launch is under way, here while it registers its runner, leaves the commit standing. GitHub
// hands a queued job to any idle runner of its labels, so in a burst this runner serves another
// job whose own runner took this one; an idle one is the janitor's (runner-set-failures.md).
TEST_F(LauncherJobStateTest, ACompletedRecordedWhileTheLaunchIsUnderWayLeavesItsCommit) {
  const int64_t job = QueueJob();
  const store::Key claim = RunnerTable::ClaimKey(mvr::testing::kPlatformRepository, job);
  store_.before_update = [&](const store::Key& key) {
    if (!(key == claim)) return;
    store_.before_update = nullptr;
    // Cancelled while queued: GitHub sends `completed`, which another launcher records.
    ASSERT_TRUE(platform_.github_model->CancelJob(job).ok());
    ASSERT_TRUE(JobStateLedger(store_, m_.clock)
                    .Apply(mvr::testing::kPlatformRepository, job, JobAction::kCompleted)
                    .ok());
  };
  LaunchOutcome o = L().Handle(Intent(job));
  EXPECT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(metrics_.GetDeferrals("commit_fenced"), 0);
  EXPECT_TRUE(Terminated().empty()) << "its VM stands";
  EXPECT_EQ(platform_.Runners().size(), 1u) << "and its runner";
  EXPECT_FALSE(table_.GetClaim(mvr::testing::kPlatformRepository, job).value()->microvm_id.empty())
      << "the claim is committed";
  EXPECT_NE(L().Handle(Intent(job)).decision, LaunchDecision::kLaunched);
  EXPECT_EQ(platform_.VmIds().size(), 1u) << "no second VM";
}

// The chain's fence: job `job` runs on the runner launched for `waiting`, so the launch for `job`
// serves `waiting`. Another runner takes `waiting` and its `in_progress` is recorded while the
// launch registers its runner: the commit is refused in its transaction, the launch undone
// (runner removed, VM terminated, claim released) and deferred; its next look drops it.
TEST_F(LauncherJobStateTest,
       AChainedJobRecordedInProgressWhileTheLaunchIsUnderWayRefusesItsCommit) {
  const int64_t job = QueueJob();
  const int64_t waiting = QueueJob();
  OnlineRunner("mvr-demo-" + std::to_string(waiting) + "-0a1b2c3d");
  platform_.Tick();
  ASSERT_EQ(JobOf(job).status, "in_progress") << "taken by the runner launched for `waiting`";
  const store::Key claim = RunnerTable::ClaimKey(mvr::testing::kPlatformRepository, job);
  store_.before_update = [&](const store::Key& key) {
    if (!(key == claim)) return;
    store_.before_update = nullptr;
    OnlineRunner("someone-elses-runner");
    platform_.Tick();
    ASSERT_EQ(JobOf(waiting).runner_name, "someone-elses-runner");
    ASSERT_TRUE(JobStateLedger(store_, m_.clock)
                    .Apply(mvr::testing::kPlatformRepository, waiting, JobAction::kInProgress)
                    .ok());
  };
  LaunchOutcome o = L().Handle(Intent(job));
  EXPECT_EQ(o.decision, LaunchDecision::kDeferred) << o.detail;
  EXPECT_NE(o.detail.find("job " + std::to_string(waiting) + " was recorded in progress"),
            std::string::npos)
      << o.detail;
  EXPECT_EQ(metrics_.GetDeferrals("commit_fenced"), 1);
  ASSERT_EQ(platform_.VmIds().size(), 1u) << "the launch got as far as its VM";
  EXPECT_EQ(Terminated().size(), 1u) << "and terminated it";
  EXPECT_EQ(platform_.Runners().size(), 2u) << "its runner was removed";
  EXPECT_FALSE(table_.GetClaim(mvr::testing::kPlatformRepository, job).value())
      << "its claim was released";
  LaunchOutcome again = L().Handle(Intent(job));
  EXPECT_EQ(again.decision, LaunchDecision::kDroppedNotQueued) << again.detail;
  EXPECT_EQ(platform_.VmIds().size(), 1u) << "no second VM";
}

}  // namespace
}  // namespace mvr::runnerset::testing
