// The janitor's reaping decisions: strikes before any kill, the fresh per-runner read, the
// re-scan before an unmapped VM or runner is removed, RUNNING VMs only, stale rows.
#include "janitor_fixture.h"

namespace mvr::runnerset {
namespace {

using namespace testing;  // NOLINT: the fixture's names

TEST_F(JanitorTest, VmWhoseRunnerGitHubLostIsReapedOnlyAfterItsStrikes) {
  ListVm("vm-1", aws::MicrovmState::kRunning);
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  SweepReport first = J().Sweep();
  EXPECT_EQ(first.Get(Swept::kStrikesAdded), 1);
  EXPECT_TRUE(terminated_.empty()) << "one sweep is not enough to act";
  SweepReport second = J().Sweep();
  EXPECT_EQ(terminated_, std::vector<std::string>{"vm-1"});
  EXPECT_EQ(second.Get(Swept::kVmsTerminated), 1);
  EXPECT_FALSE(HasRow("mvr-demo-1-aaaa"));
}

TEST_F(JanitorTest, IdleRunnerThatNeverGotAJobIsDeregisteredThenItsVmTerminated) {
  ListVm("vm-1", aws::MicrovmState::kRunning);
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  runners_ = fresh_runners_ = {Runner(11, "mvr-demo-1-aaaa", false)};
  J().Sweep();
  EXPECT_TRUE(deleted_runners_.empty());
  SweepReport r = J().Sweep();
  EXPECT_EQ(deleted_runners_, std::vector<int64_t>{11});
  EXPECT_EQ(terminated_, std::vector<std::string>{"vm-1"});
  EXPECT_EQ(r.Get(Swept::kRunnersRemoved), 1);
}

TEST_F(JanitorTest, BusyRunnerIsNeverTerminatedEvenWhenTheListingSaysIdle) {
  ListVm("vm-1", aws::MicrovmState::kRunning);
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  runners_ = {Runner(11, "mvr-demo-1-aaaa", false)};       // the listing lags
  fresh_runners_ = {Runner(11, "mvr-demo-1-aaaa", true)};  // the truth
  for (int i = 0; i < 5; ++i) J().Sweep();
  EXPECT_TRUE(terminated_.empty());
  EXPECT_TRUE(deleted_runners_.empty());
  EXPECT_GE(metrics_.GetJanitor("busy_spared"), 2);
  auto row = table_.GetMapping("mvr-demo-1-aaaa");
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_LT((*row)->strikes, 2) << "the contradicting read clears the strike memory";
}

TEST_F(JanitorTest, RunnerThatTakesAJobBetweenTheReadAndTheRemovalKeepsItsVm) {
  ListVm("vm-1", aws::MicrovmState::kRunning);
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  runners_ = fresh_runners_ = {Runner(11, "mvr-demo-1-aaaa", false)};
  EXPECT_CALL(github_, DeleteRunner(_, 11)).WillRepeatedly(Return(Conflict("runner is busy")));
  J().Sweep();
  J().Sweep();
  EXPECT_TRUE(terminated_.empty());
  EXPECT_TRUE(HasRow("mvr-demo-1-aaaa"));
}

TEST_F(JanitorTest, RunnerBackInTheFreshReadClearsTheStrikes) {
  ListVm("vm-1", aws::MicrovmState::kRunning);
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  fresh_runners_ = {Runner(11, "mvr-demo-1-aaaa", false)};  // absent from the listing only
  J().Sweep();
  SweepReport r = J().Sweep();
  EXPECT_TRUE(terminated_.empty());
  EXPECT_EQ(r.Get(Swept::kStrikesCleared), 1);
  EXPECT_EQ((*table_.GetMapping("mvr-demo-1-aaaa"))->strikes, 0);
}

TEST_F(JanitorTest, StrikesOfDifferentSuspicionsDoNotAddUp) {
  ListVm("vm-1", aws::MicrovmState::kRunning);
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  J().Sweep();  // absent
  runners_ = fresh_runners_ = {Runner(11, "mvr-demo-1-aaaa", false)};
  J().Sweep();  // idle: a first strike of its own kind
  EXPECT_TRUE(terminated_.empty());
  J().Sweep();
  EXPECT_EQ(terminated_.size(), 1u);
}

TEST_F(JanitorTest, YoungVmIsNeverSuspect) {
  ListVm("vm-1", aws::MicrovmState::kRunning, Duration(10'000));
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  ListVm("vm-2", aws::MicrovmState::kRunning, Duration(10'000));
  for (int i = 0; i < 4; ++i) J().Sweep();
  EXPECT_TRUE(terminated_.empty());
}

TEST_F(JanitorTest, OnlyRunningVmsAreActedOnSuspendedOnesAreLeftAlone) {
  ListVm("vm-1", aws::MicrovmState::kSuspended);
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  ListVm("vm-2", aws::MicrovmState::kSuspended);  // unmapped: a warm-pool member
  ListVm("vm-3", aws::MicrovmState::kPending);
  for (int i = 0; i < 4; ++i) J().Sweep();
  EXPECT_TRUE(terminated_.empty());
  EXPECT_TRUE(HasRow("mvr-demo-1-aaaa"));
}

TEST_F(JanitorTest, UnmappedRunningVmIsTerminatedAfterItsStrikes) {
  ListVm("vm-9", aws::MicrovmState::kRunning);
  J().Sweep();
  EXPECT_TRUE(terminated_.empty());
  SweepReport r = J().Sweep();
  EXPECT_EQ(terminated_, std::vector<std::string>{"vm-9"});
  EXPECT_EQ(r.Get(Swept::kOrphansTerminated), 1);
  EXPECT_TRUE(table_.ScanOrphans()->empty());
}

TEST_F(JanitorTest, UnmappedVmIsSparedWhenTheReScanFindsAMappingRowWrittenMeanwhile) {
  ListVm("vm-9", aws::MicrovmState::kRunning);
  J().Sweep();
  // The second sweep's inventory sees no row; the launch commits just before the re-scan.
  int mapping_scans = 0;
  store_.before_scan = [&](const store::ScanRequest& r) {
    if (r.partition_prefix != "mvr-demo-" || ++mapping_scans != 2) return;
    store_.before_scan = nullptr;
    Launched("mvr-demo-7-bbbb", 17, "vm-9", 7);
  };
  SweepReport r = J().Sweep();
  EXPECT_TRUE(terminated_.empty());
  EXPECT_EQ(r.Get(Swept::kOrphansSpared), 1);
}

TEST_F(JanitorTest, VmOfALaunchInFlightIsNotAnOrphan) {
  ListVm("vm-5", aws::MicrovmState::kRunning);
  auto claim = table_.ClaimJob("octo/app", 5);
  ASSERT_TRUE(claim.ok());
  ASSERT_TRUE(
      table_.RecordMicrovm(RunnerTable::ClaimKey("octo/app", 5), claim->attempt_token, "vm-5")
          .ok());
  for (int i = 0; i < 3; ++i) J().Sweep();
  EXPECT_TRUE(terminated_.empty());
}

TEST_F(JanitorTest, VmAndRunnerOfALaunchAttemptThatDiedAreReapedAfterTheTakeoverAge) {
  ListVm("vm-5", aws::MicrovmState::kRunning);
  auto claim = table_.ClaimJob("octo/app", 5);
  ASSERT_TRUE(claim.ok());
  const store::Key key = RunnerTable::ClaimKey("octo/app", 5);
  ASSERT_TRUE(table_.RecordRunner(key, claim->attempt_token, 55).ok());
  ASSERT_TRUE(table_.RecordMicrovm(key, claim->attempt_token, "vm-5").ok());
  runners_ = fresh_runners_ = {Runner(55, "mvr-demo-5-cccc", false)};
  J().Sweep();
  J().Sweep();
  EXPECT_TRUE(terminated_.empty()) << "protected while the launch may still be working";
  m_.clock.Advance(config_.claim_takeover_after());
  J().Sweep();
  SweepReport r = J().Sweep();
  EXPECT_EQ(terminated_, std::vector<std::string>{"vm-5"});
  EXPECT_EQ(deleted_runners_, std::vector<int64_t>{55});
  EXPECT_EQ(r.Get(Swept::kOrphansTerminated), 1);
}

TEST_F(JanitorTest, RunnerIsSparedWhenTheReScanFindsTheLaunchThatRegisteredIt) {
  runners_ = fresh_runners_ = {Runner(77, "mvr-demo-7-eeee", false)};
  J().Sweep();
  int mapping_scans = 0;
  store_.before_scan = [&](const store::ScanRequest& r) {
    if (r.partition_prefix != "mvr-demo-" || ++mapping_scans != 2) return;
    store_.before_scan = nullptr;
    auto claim = table_.ClaimJob("octo/app", 7);
    ASSERT_TRUE(claim.ok());
    ASSERT_TRUE(
        table_.RecordRunner(RunnerTable::ClaimKey("octo/app", 7), claim->attempt_token, 77).ok());
  };
  SweepReport r = J().Sweep();
  EXPECT_TRUE(deleted_runners_.empty());
  EXPECT_EQ(r.Get(Swept::kOrphansSpared), 1);
}

TEST_F(JanitorTest, BusyRunnerNoLaunchOwnsIsLeftAlone) {
  runners_ = {Runner(66, "mvr-demo-6-dddd", false)};
  fresh_runners_ = {Runner(66, "mvr-demo-6-dddd", true)};
  for (int i = 0; i < 3; ++i) J().Sweep();
  EXPECT_TRUE(deleted_runners_.empty());
  EXPECT_GE(metrics_.GetJanitor("busy_spared"), 1);
}

TEST_F(JanitorTest, RowOfAVmThatIsGoneIsRemovedWithItsRunner) {
  Launched("mvr-demo-1-aaaa", 11, "vm-gone", 1);
  SweepReport r = J().Sweep();
  EXPECT_FALSE(HasRow("mvr-demo-1-aaaa"));
  EXPECT_EQ(deleted_runners_, std::vector<int64_t>{11});
  EXPECT_EQ(r.Get(Swept::kRowsRemoved), 1);
  EXPECT_TRUE(terminated_.empty());
}

TEST_F(JanitorTest, RowIsKeptWhenTheFreshReadShowsItsVmAlive) {
  Launched("mvr-demo-1-aaaa", 11, "vm-1", 1);
  // The listing lags: it does not show vm-1 yet, GetMicrovm does.
  EXPECT_CALL(vms_, GetMicrovm("vm-1")).WillRepeatedly(Invoke([](const std::string&) {
    aws::Microvm vm;
    vm.microvm_id = "vm-1";
    vm.state = aws::MicrovmState::kRunning;
    return Result<aws::Microvm>(vm);
  }));
  J().Sweep();
  EXPECT_TRUE(HasRow("mvr-demo-1-aaaa"));
  EXPECT_TRUE(deleted_runners_.empty());
}
}  // namespace
}  // namespace mvr::runnerset
