// The scale-set simulation's chaos (issue 54), one launcher step at a time:
// - a scale set's launch when the store cannot say whether GitHub already started the job on
//   another runner of the set (its JobStarted record): deferred, never launched blind (seed 10 of
//   `scaleset-chaos`: a dead launch's claim was taken over while that read failed, and a VM
//   booted for a job another runner had run minutes before);
// - the end of a job whose runner's launch died between its delivery and its commit: its VM ends
//   with the terminate intent, not minutes later with the janitor's unmapped-VM sweep, while jobs
//   waiting for its seat of the cap were re-offered until GitHub gave up on them.
#include <gtest/gtest.h>

#include "platform_fixture.h"

namespace mvr::runnerset::testing {
namespace {

class ScaleSetLaunchTest : public RunnerSetTest {
 protected:
  LaunchIntent SetIntent(int64_t job_id) {
    LaunchIntent in = Intent(job_id);
    in.scale_set_id = 5;
    return in;
  }
};

TEST_F(ScaleSetLaunchTest, AnUnreadableJobStartedDefersTheLaunchAndALaterReadDecides) {
  const int64_t job = QueueJob();
  store_.fail_get = [](const store::Key& key) { return key.sort == "started"; };
  LaunchOutcome o = L().Handle(SetIntent(job));
  EXPECT_EQ(o.decision, LaunchDecision::kDeferred) << o.detail;
  EXPECT_GT(o.retry_after, Duration(0));
  EXPECT_NE(o.detail.find("started the job"), std::string::npos) << o.detail;
  EXPECT_EQ(LiveVms(), 0u) << "no VM was launched";
  EXPECT_TRUE(platform_.Runners().empty()) << "no runner was registered";
  EXPECT_EQ(metrics_.GetDeferrals("job_started_unreadable"), 1);

  // Readable again, and GitHub had started it on another runner of the set: nothing to launch.
  store_.fail_get = nullptr;
  JobBinding b;
  b.runner_name = "mvr-demo-99-0a1b2c3d";
  b.runner_id = 99;
  b.repository = mvr::testing::kPlatformRepository;
  b.job_id = job;
  b.started_ms = 1;
  ASSERT_TRUE(table_.RecordJobStarted(b).ok());
  o = L().Handle(SetIntent(job));
  EXPECT_EQ(o.decision, LaunchDecision::kDuplicate) << o.detail;
  EXPECT_EQ(o.runner_name, b.runner_name);
  EXPECT_EQ(LiveVms(), 0u);
}

// A launch that registered its runner and started its VM, then died before its commit.
TEST_F(ScaleSetLaunchTest, TheEndOfAJobRunOnADeadLaunchsRunnerEndsTheVmItsClaimNames) {
  const int64_t job = QueueJob();
  auto claim = table_.ClaimJob(mvr::testing::kPlatformRepository, job);
  ASSERT_TRUE(claim.ok() && claim->outcome == RunnerTable::ClaimOutcome::kWon);
  const store::Key key = RunnerTable::ClaimKey(mvr::testing::kPlatformRepository, job);
  const std::string vm = platform_.RunningVm();
  ASSERT_TRUE(table_.RecordRunner(key, claim->attempt_token, 41).ok());
  ASSERT_TRUE(table_.RecordMicrovm(key, claim->attempt_token, vm).ok());
  const std::string runner =
      "mvr-demo-" + std::to_string(job) + "-" + claim->attempt_token.substr(0, 8);

  TerminateIntent other;  // the same job's runner of another attempt: not this VM's
  other.runner_name = "mvr-demo-" + std::to_string(job) + "-ffffffff";
  other.repository = mvr::testing::kPlatformRepository;
  EXPECT_EQ(L().Handle(other).decision, LaunchDecision::kIgnored);
  EXPECT_EQ(State(vm), "RUNNING");

  TerminateIntent done;
  done.runner_name = runner;
  done.repository = mvr::testing::kPlatformRepository;
  done.job_id = job;
  LaunchOutcome o = L().Handle(done);
  EXPECT_EQ(o.decision, LaunchDecision::kTerminated) << o.detail;
  EXPECT_EQ(o.microvm_id, vm);
  EXPECT_EQ(State(vm), "TERMINATED");
  EXPECT_EQ(ClaimNow(job), RunnerTable::ClaimOutcome::kWon) << "the dead launch's claim is gone";
}

}  // namespace
}  // namespace mvr::runnerset::testing
