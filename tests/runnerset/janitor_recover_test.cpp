// The janitor's other duties and its isolation: stuck launches re-queued, old image versions
// pruned, one failing item or listing never stopping the sweep, counters in the metrics.
#include <algorithm>

#include "janitor_fixture.h"

namespace mvr::runnerset::testing {
namespace {

TEST_F(JanitorTest, QueuedJobThatNeverGotARunnerIsLaunchedAgain) {
  const int64_t stuck = QueueJob({"self-hosted", "MVR-SMALL"});
  QueueJob({"ubuntu-latest"});  // another set's job
  m_.clock.Advance(5 * kMinute);
  QueueJob({"self-hosted", "mvr-small"});  // young
  m_.clock.Advance(Duration(5'000));
  SweepReport r = J().Sweep();
  EXPECT_EQ(r.Get(Swept::kLaunchesRecovered), 1);
  std::vector<LaunchIntent> launches = QueuedLaunches();
  ASSERT_EQ(launches.size(), 1u) << "a young job and another set's job are left alone";
  EXPECT_EQ(launches[0].job_id, stuck);
  EXPECT_EQ(launches[0].repository, "octo/app");
  EXPECT_EQ(launches[0].class_label, "mvr-small");
}

TEST_F(JanitorTest, QueuedJobWhoseVmLivesOrWhoseLaunchIsInFlightIsLeftAlone) {
  const int64_t mapped = QueueJob({"mvr-small"});
  const int64_t in_flight = QueueJob({"mvr-small"});
  m_.clock.Advance(5 * kMinute);
  const std::string vm = platform_.RunningVm();
  // Its runner is registered and starting: it will take the job.
  const Runner starting = platform_.RegisteredRunner("mvr-demo-1-aaaa", {"mvr-small"});
  Launched(starting.name, starting.id, vm, mapped);
  ASSERT_TRUE(table_.ClaimJob("octo/app", in_flight).ok());  // in flight, fresh
  EXPECT_EQ(J().Sweep().Get(Swept::kLaunchesRecovered), 0);
  EXPECT_TRUE(QueuedLaunches().empty());
  EXPECT_EQ(JobOf(mapped).status, "queued");
}

TEST_F(JanitorTest, QueuedJobWhoseVmIsGoneGetsItsClaimReleasedAndIsLaunchedAgain) {
  const int64_t job = QueueJob({"mvr-small"});
  const std::string vm = platform_.RunningVm();
  platform_.TerminateVm(vm);
  Launched("mvr-demo-1-aaaa", 11, vm, job);
  m_.clock.Advance(5 * kMinute);
  EXPECT_EQ(J().Sweep().Get(Swept::kLaunchesRecovered), 1);
  auto claim = table_.ClaimJob("octo/app", job);
  ASSERT_TRUE(claim.ok());
  EXPECT_EQ(claim->outcome, RunnerTable::ClaimOutcome::kWon) << "the relaunch can claim it";
}

TEST_F(JanitorTest, QueuedJobWhoseRunnerTookAnotherJobIsLaunchedAgain) {
  const Runner runner = OnlineRunner("mvr-demo-1-aaaa", /*busy=*/true);  // with another job
  const int64_t job = JobQueuedAgo(5 * kMinute, {"mvr-small"});
  const std::string vm = platform_.RunningVm();
  Launched(runner.name, runner.id, vm, job);
  EXPECT_EQ(J().Sweep().Get(Swept::kLaunchesRecovered), 1);
  EXPECT_EQ(ClaimNow(job), RunnerTable::ClaimOutcome::kWon);
  EXPECT_EQ(State(vm), "RUNNING") << "the busy runner's VM is left to finish";
}

TEST_F(JanitorTest, RecoveryCanBeTurnedOff) {
  config_.janitor.recover_stuck_launches = false;
  JobQueuedAgo(5 * kMinute, {"mvr-small"});
  J().Sweep();
  EXPECT_TRUE(QueuedLaunches().empty());
  EXPECT_EQ(Traced("GET /repos/octo/app/actions/runs"), 0u) << "GitHub's queue is not even read";
}

TEST_F(JanitorTest, OldImageVersionsArePrunedKeepingTheActiveInUseAndNewestOnes) {
  config_.janitor.keep_image_versions = 1;
  for (int v = 2; v <= 6; ++v) ASSERT_EQ(platform_.NewImageVersion(), std::to_string(v));
  // Only the newest is ACTIVE; a suspended VM runs version 3.
  platform_.microvms->WithModel([](emulate::microvms::MicrovmModel& model) {
    for (int v = 1; v <= 5; ++v) {
      EXPECT_TRUE(model
                      .Invoke("UpdateMicrovmImageVersion", {{"imageIdentifier", "img-1"},
                                                            {"imageVersion", std::to_string(v)},
                                                            {"status", "INACTIVE"}})
                      .ok());
    }
    return 0;
  });
  const std::string vm = platform_.RunningVm({{"imageVersion", "3"}});
  platform_.SuspendVm(vm);
  Launched("mvr-demo-1-aaaa", 11, vm, 1);
  SweepReport r = J().Sweep();
  aws::ListMicrovmImageVersionsRequest versions;
  versions.image_identifier = "img-1";
  Result<aws::ListMicrovmImageVersionsResponse> listed =
      platform_.vms().ListMicrovmImageVersions(versions);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  std::vector<std::string> left;
  for (const aws::MicrovmImageVersion& v : listed->items) left.push_back(v.image_version);
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"3", "5", "6"}));
  EXPECT_EQ(r.Get(Swept::kImageVersionsDeleted), 3);
}

TEST_F(JanitorTest, OneFailingItemDoesNotStopTheSweepAndIsCounted) {
  const std::string unread = platform_.RunningVm();
  const std::string failing = platform_.RunningVm();
  const std::string vm = platform_.RunningVm();
  m_.clock.Advance(10 * kMinute);
  Launched("mvr-demo-0-aaaa", 10, unread, 1);
  Launched("mvr-demo-1-aaaa", 11, failing, 2);
  Launched("mvr-demo-2-aaaa", 12, vm, 3);
  platform_.vms_api.refusals.push_back(
      {"DELETE", "/" + failing, 500, "InternalServerException", "the service failed"});
  // The first item's jobs API read fails through all its retries (4 attempts): the janitor
  // cannot tell whether its runner works, so it leaves that VM alone and goes on.
  mvr::testing::RefusingApi::Refusal down{"GET", "/actions/runs", 500, "", "GitHub is down"};
  down.times = 4;
  J().Sweep();
  platform_.github_api.refusals.push_back(down);
  SweepReport r = J().Sweep();
  EXPECT_EQ(State(vm), "TERMINATED");
  EXPECT_EQ(State(unread), "RUNNING");
  EXPECT_EQ(State(failing), "RUNNING");
  EXPECT_GE(r.Get(Swept::kErrors), 2);
  EXPECT_FALSE(r.errors.empty());
  EXPECT_EQ(J().LastSweep()->Get(Swept::kVmsTerminated), 1);
  EXPECT_GE(metrics_.GetJanitor("errors"), 2);
  EXPECT_EQ(metrics_.GetJanitor("sweeps"), 2);
  EXPECT_NE(metrics_.Prometheus().find("mvr_runnerset_janitor_vms_terminated_total 1"),
            std::string::npos);
}

TEST_F(JanitorTest, NothingIsTerminatedWhenTheVmListingFails) {
  const std::string vm = OldVm();
  J().Sweep();
  platform_.vms_api.refusals.push_back(
      {"GET", "/microvms", 500, "InternalServerException", "the listing failed"});
  SweepReport r = J().Sweep();
  EXPECT_EQ(State(vm), "RUNNING");
  EXPECT_EQ(r.Get(Swept::kErrors), 1);
}

// GitHub's minimum rises past the runner of a class with no pool and no fallback (issue 30,
// item 5; the `mvr demo --min-runner-version` relaunch storm): each launch's runner connects, is
// refused, and its VM ends. From two such runners the janitor takes the class as refused; then it
// launches none of its jobs again but one probe every kProbeEvery, and the launcher holds new ones
// instead of launching a VM a job a minute.
TEST_F(JanitorTest, ARefusedRunnerVersionHoldsTheClassInsteadOfRelaunchingItsJobsEveryMinute) {
  UseClassHealth();
  emulate::github::RunnerVersionPolicy policy;
  policy.min_version = "9.0.0";
  ASSERT_TRUE(platform_.github_model->SetRunnerVersionPolicy(policy).ok());
  std::vector<int64_t> jobs;
  for (int i = 0; i < 3; ++i) {
    jobs.push_back(QueueJob({"self-hosted", "mvr-small"}));
    LaunchOutcome o = L().Handle(Intent(jobs.back()));
    ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
    platform_.ConnectRunnersOf(o.microvm_id, /*refusal_expected=*/true);
    platform_.TerminateVm(o.microvm_id);  // its supervisor ends the VM when the runner exits
  }
  J().Sweep();
  ClassVerdict v = health_->Of("mvr-small");
  EXPECT_FALSE(v.healthy) << "two refused runners of one image version";
  EXPECT_EQ(v.reason, "runner_version_refused");
  EXPECT_FALSE(v.image_version.empty());

  m_.clock.Advance(5 * kMinute);
  EXPECT_EQ(J().Sweep().Get(Swept::kLaunchesRecovered), 0) << "held, not relaunched";
  EXPECT_TRUE(QueuedLaunches().empty());
  const int64_t late = QueueJob({"self-hosted", "mvr-small"});
  EXPECT_EQ(L().Handle(Intent(late)).decision, LaunchDecision::kHeld);
  EXPECT_EQ(platform_.Calls("RunMicrovm"), 3) << "no VM since the first three";

  m_.clock.Advance(kProbeEvery);
  EXPECT_EQ(J().Sweep().Get(Swept::kLaunchesRecovered), 1) << "one probe for the class";
  std::vector<LaunchIntent> probe = QueuedLaunches();
  ASSERT_EQ(probe.size(), 1u);
  // GitHub takes the runner again (its minimum lowered): the probe's runner goes online and the
  // class is healthy at the next sweep.
  ASSERT_TRUE(platform_.github_model->SetRunnerVersionPolicy({}).ok());
  LaunchOutcome o = L().Handle(probe[0]);
  EXPECT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(L().Handle(Intent(late)).decision, LaunchDecision::kHeld) << "the probe is spent";
  platform_.ConnectRunnersOf(o.microvm_id);
  J().Sweep();
  EXPECT_TRUE(health_->Of("mvr-small").healthy);
  LaunchOutcome now = L().Handle(Intent(late));
  EXPECT_EQ(now.decision, LaunchDecision::kLaunched) << now.detail;
}

}  // namespace
}  // namespace mvr::runnerset::testing
