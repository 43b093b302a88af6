// The janitor's other duties and its isolation: stuck launches re-queued, old image versions
// pruned, one failing item or listing never stopping the sweep, counters in the metrics.
#include "janitor_fixture.h"

namespace mvr::runnerset {
namespace {

using namespace testing;  // NOLINT: the fixture's names

TEST_F(JanitorTest, QueuedJobThatNeverGotARunnerIsLaunchedAgain) {
  queued_jobs_ = {QueuedJob(1, m_.clock.Now() - 5 * kMinute, {"self-hosted", "MVR-SMALL"}),
                  QueuedJob(2, m_.clock.Now() - Duration(5'000), {"self-hosted", "mvr-small"}),
                  QueuedJob(3, m_.clock.Now() - 5 * kMinute, {"ubuntu-latest"})};
  SweepReport r = J().Sweep();
  EXPECT_EQ(r.Get(Swept::kLaunchesRecovered), 1);
  std::vector<LaunchIntent> launches = QueuedLaunches();
  ASSERT_EQ(launches.size(), 1u) << "a young job and another set's job are left alone";
  EXPECT_EQ(launches[0].job_id, 1);
  EXPECT_EQ(launches[0].repository, "octo/app");
  EXPECT_EQ(launches[0].class_label, "mvr-small");
}

TEST_F(JanitorTest, QueuedJobWhoseVmLivesOrWhoseLaunchIsInFlightIsLeftAlone) {
  ListVm("vm-1", aws::MicrovmState::kRunning, Duration(10'000));
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  ASSERT_TRUE(table_.ClaimJob("octo/app", 2).ok());   // in flight, fresh
  runners_ = {Runner(11, "mvr-demo-1-aaaa", false)};  // starting: it will take job 1
  queued_jobs_ = {QueuedJob(1, m_.clock.Now() - 5 * kMinute, {"mvr-small"}),
                  QueuedJob(2, m_.clock.Now() - 5 * kMinute, {"mvr-small"})};
  EXPECT_EQ(J().Sweep().Get(Swept::kLaunchesRecovered), 0);
  EXPECT_TRUE(QueuedLaunches().empty());
}

TEST_F(JanitorTest, QueuedJobWhoseVmIsGoneGetsItsClaimReleasedAndIsLaunchedAgain) {
  Launched("mvr-demo-1-aaaa", 11, "vm-gone", 1);
  queued_jobs_ = {QueuedJob(1, m_.clock.Now() - 5 * kMinute, {"mvr-small"})};
  EXPECT_EQ(J().Sweep().Get(Swept::kLaunchesRecovered), 1);
  auto claim = table_.ClaimJob("octo/app", 1);
  ASSERT_TRUE(claim.ok());
  EXPECT_EQ(claim->outcome, RunnerTable::ClaimOutcome::kWon) << "the relaunch can claim it";
}

TEST_F(JanitorTest, QueuedJobWhoseRunnerTookAnotherJobIsLaunchedAgain) {
  ListVm("vm-1", aws::MicrovmState::kRunning, Duration(10'000));
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  runners_ = {Runner(11, "mvr-demo-1-aaaa", true)};  // busy, with another job
  queued_jobs_ = {QueuedJob(1, m_.clock.Now() - 5 * kMinute, {"mvr-small"})};
  EXPECT_EQ(J().Sweep().Get(Swept::kLaunchesRecovered), 1);
  EXPECT_EQ(table_.ClaimJob("octo/app", 1)->outcome, RunnerTable::ClaimOutcome::kWon);
  EXPECT_TRUE(terminated_.empty()) << "the busy runner's VM is left to finish";
}

TEST_F(JanitorTest, RecoveryCanBeTurnedOff) {
  config_.janitor.recover_stuck_launches = false;
  queued_jobs_ = {QueuedJob(1, m_.clock.Now() - 5 * kMinute, {"mvr-small"})};
  EXPECT_CALL(github_, ListQueuedJobs(_)).Times(0);
  J().Sweep();
  EXPECT_TRUE(QueuedLaunches().empty());
}

aws::MicrovmImageVersion Version(const std::string& v, aws::ImageVersionStatus status,
                                 int64_t created_s) {
  aws::MicrovmImageVersion out;
  out.image_version = v;
  out.state = aws::ImageVersionState::kSuccessful;
  out.status = status;
  out.created_at = TimePoint(Duration(created_s * 1000));
  return out;
}

TEST_F(JanitorTest, OldImageVersionsArePrunedKeepingTheActiveInUseAndNewestOnes) {
  config_.janitor.keep_image_versions = 1;
  ListVm("vm-1", aws::MicrovmState::kSuspended);  // runs version "3"
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  EXPECT_CALL(vms_, ListMicrovmImageVersions(_)).WillRepeatedly(Invoke([](auto&) {
    aws::ListMicrovmImageVersionsResponse r;
    r.items = {Version("1", aws::ImageVersionStatus::kInactive, 100),
               Version("2", aws::ImageVersionStatus::kInactive, 200),
               Version("3", aws::ImageVersionStatus::kInactive, 300),
               Version("4", aws::ImageVersionStatus::kInactive, 400),
               Version("5", aws::ImageVersionStatus::kInactive, 500),
               Version("6", aws::ImageVersionStatus::kActive, 600)};
    return Result<aws::ListMicrovmImageVersionsResponse>(r);
  }));
  std::vector<std::string> deleted;
  EXPECT_CALL(vms_, DeleteMicrovmImageVersion("img-1", _))
      .WillRepeatedly(Invoke([&](const std::string&, const std::string& v) {
        deleted.push_back(v);
        return Result<aws::DeleteMicrovmImageVersionResponse>(
            aws::DeleteMicrovmImageVersionResponse{});
      }));
  SweepReport r = J().Sweep();
  std::sort(deleted.begin(), deleted.end());
  EXPECT_EQ(deleted, (std::vector<std::string>{"1", "2", "4"}));
  EXPECT_EQ(r.Get(Swept::kImageVersionsDeleted), 3);
}

TEST_F(JanitorTest, OneFailingItemDoesNotStopTheSweepAndIsCounted) {
  ListVm("vm-1", aws::MicrovmState::kRunning);
  ListVm("vm-2", aws::MicrovmState::kRunning);
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  Launched("mvr-demo-2-aaaa", 12, "vm-2", 2);
  EXPECT_CALL(vms_, TerminateMicrovm(_)).WillRepeatedly(Invoke([this](const std::string& id) {
    if (id == "vm-1") return Status(Internal("the service failed"));
    terminated_.push_back(id);
    listed_[id].state = aws::MicrovmState::kTerminated;
    return Status::Ok();
  }));
  EXPECT_CALL(github_, ListQueuedJobs(_)).WillRepeatedly(Invoke([](auto&) {
    return Result<std::vector<github::Job>>(Internal("GitHub is down"));
  }));
  J().Sweep();
  SweepReport r = J().Sweep();
  EXPECT_EQ(terminated_, std::vector<std::string>{"vm-2"});
  EXPECT_GE(r.Get(Swept::kErrors), 2);
  EXPECT_FALSE(r.errors.empty());
  EXPECT_EQ(J().LastSweep()->Get(Swept::kVmsTerminated), 1);
  EXPECT_GE(metrics_.GetJanitor("errors"), 2);
  EXPECT_EQ(metrics_.GetJanitor("sweeps"), 2);
  EXPECT_NE(metrics_.Prometheus().find("mvr_runnerset_janitor_vms_terminated_total 1"),
            std::string::npos);
}

TEST_F(JanitorTest, NothingIsTerminatedWhenTheVmListingFails) {
  ListVm("vm-9", aws::MicrovmState::kRunning);
  J().Sweep();
  EXPECT_CALL(vms_, ListMicrovms(_)).WillRepeatedly(Invoke([](auto&) {
    return Result<aws::ListMicrovmsResponse>(Transient("throttled"));
  }));
  SweepReport r = J().Sweep();
  EXPECT_TRUE(terminated_.empty());
  EXPECT_EQ(r.Get(Swept::kErrors), 1);
}

}  // namespace
}  // namespace mvr::runnerset
