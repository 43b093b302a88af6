// Warm pools: the sweeper keeps a class's pool of suspended VMs at target and replaces what must
// go; the launcher's warm path claims a member first-writer-wins, resumes it, then registers;
// the janitor leaves pool members alone. Asserted on the MicroVMs model's VMs, GitHub's runners
// and the pool's rows.
#include <algorithm>

#include "supervisor/run_payload.h"
#include "support/store_text.h"
#include "warm_pool_fixture.h"

namespace mvr::runnerset::testing {
namespace {

TEST_F(WarmPoolTest, SweepFillsThePoolWithSuspendedPreBootedVms) {
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_EQ(r.booted, 2);
  EXPECT_EQ(r.errors, 0);
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"suspended", 2}}));
  for (const std::string& vm : MemberVms()) EXPECT_EQ(State(vm), "SUSPENDED") << vm;
  // At target: the next sweep boots nothing.
  EXPECT_EQ(Sweeper().Sweep().booted, 0);
  EXPECT_EQ(platform_.Calls("RunMicrovm"), 2);
  EXPECT_EQ(platform_.VmIds().size(), 2u);
}

// A sweep launches all its pre-boots, then follows them together for a minute; one slower than
// that is stepped by the next sweep. It never waits on one VM while the others wait (in turn,
// a pool of 100 took over 11 minutes to fill).
TEST_F(WarmPoolTest, PreBootsAreFollowedTogetherAndASlowOneIsSteppedByTheNextSweep) {
  auto options = mvr::testing::InProcessPlatform::DefaultOptions();
  options.model.latency.suspend.low = 2 * kMinute;  // the service is still at it after a minute
  platform_.Rebuild(options);
  const TimePoint start = m_.clock.Now();
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_EQ(r.booted, 2);
  EXPECT_EQ(platform_.Calls("SuspendMicrovm"), 2) << "each asked for once, as soon as it RAN";
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"parking", 2}}));
  EXPECT_LE(m_.clock.Now() - start, Duration(65'000)) << "a minute for the lot, not per VM";
  m_.clock.Advance(2 * kMinute);
  platform_.microvms->RunDue();
  for (const std::string& vm : MemberVms()) ASSERT_EQ(State(vm), "SUSPENDED") << vm;
  r = Sweeper().Sweep();
  EXPECT_EQ(r.booted, 0) << "members on their way count toward the target";
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"suspended", 2}}));
}

TEST_F(WarmPoolTest, AClassWithoutAPoolGetsNoMembersAndCostsNoCalls) {
  config_.classes[0].warm_pool_size = 0;
  EXPECT_EQ(Sweeper().Sweep().booted, 0);
  EXPECT_TRUE(platform_.trace.empty()) << platform_.trace.front();
  EXPECT_TRUE(platform_.VmIds().empty());
}

TEST_F(WarmPoolTest, APoolMadeSmallerRetiresItsExtraMembers) {
  Fill();
  config_.classes[0].warm_pool_size = 1;
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_EQ(r.retired, 1);
  EXPECT_EQ(r.booted, 0);
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"suspended", 1}}));
  EXPECT_EQ(Terminated().size(), 1u);
}

// warmPoolSize as windows: inside this hour's window the pool fills to its size; in the next
// hour only the catch-all window (size 0) matches, and the sweep retires the members.
TEST_F(WarmPoolTest, AScheduledPoolFillsInsideItsWindowAndEmptiesOutsideIt) {
  const TimeZone utc = *TimeZone::Load("UTC");
  m_.clock.Advance(std::chrono::minutes(60 - utc.LocalAt(m_.clock.Now()).minute));
  const int hour = utc.LocalAt(m_.clock.Now()).hour;
  auto window = [&](const std::string& cron, int size) {
    return PoolWindow{cron, *CronSchedule::Parse(cron), utc, size};
  };
  RunnerClass& c = config_.classes[0];
  c.warm_pool_windows = {window("* " + std::to_string(hour) + " * * *", 2), window("* * * * *", 0)};
  c.warm_pool_size = 2;
  c.max_duration_seconds = 3 * 3600;  // the members outlive the hour
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_EQ(r.booted, 2);
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"suspended", 2}}));
  m_.clock.Advance(std::chrono::minutes(61));
  r = Sweeper().Sweep();
  EXPECT_EQ(r.retired, 2) << "outside the window the pool's size is 0";
  EXPECT_EQ(r.booted, 0);
  EXPECT_TRUE(Members().empty());
}

TEST_F(WarmPoolTest, WarmLaunchResumesAMemberThenRegistersThenDelivers) {
  Fill();
  const size_t before = platform_.trace.size();
  const int runs = platform_.Calls("RunMicrovm");
  LaunchOutcome o = NewLauncher().Handle(NewJob());
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(platform_.Calls("RunMicrovm"), runs) << "a warm launch boots nothing";
  // 001's order on the warm path: resume first, then register against it, then deliver (with a
  // token for the control port).
  const std::string vm = "POST /2025-09-09/microvms/" + o.microvm_id;
  EXPECT_EQ(Changes(before),
            (std::vector<std::string>{vm + "/resume",
                                      "POST /repos/octo/app/actions/runners/generate-jitconfig",
                                      vm + "/auth-token", "POST /v1/runner/start"}));
  EXPECT_EQ(State(o.microvm_id), "RUNNING");
  EXPECT_TRUE(platform_.RunnerNamed(o.runner_name).ok());
  auto row = table_.GetMapping(o.runner_name);
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ((*row)->microvm_id, o.microvm_id);
  // The member's own times go with the job, for the status page's cost table: it ran from its
  // launch to its park, and was suspended from its park to the resume.
  const LaunchTimes& t = (*row)->times;
  EXPECT_GT(t.member_created_ms, 0);
  EXPECT_GE(t.member_parked_ms, t.member_created_ms);
  EXPECT_GE(t.running_ms, t.member_parked_ms);
  // The job's end keeps them, with when its VM was terminated.
  const TimePoint ended = m_.clock.Now();
  LaunchOutcome end = NewLauncher().Terminate({o.runner_name, "octo/app", 0, ended, "d-1"});
  ASSERT_EQ(end.decision, LaunchDecision::kTerminated) << end.detail;
  Result<std::vector<JobRecord>> records = table_.RecentJobRecords(5);
  ASSERT_TRUE(records.ok() && records->size() == 1u);
  EXPECT_EQ((*records)[0].path, "warm");
  const JobRecord::VmTimes& ended_vm = (*records)[0].vm;
  EXPECT_EQ(ended_vm.running_ms, t.running_ms);
  EXPECT_EQ(ended_vm.member_parked_ms, t.member_parked_ms);
  EXPECT_EQ(ended_vm.member_created_ms, t.member_created_ms);
  EXPECT_GE(ended_vm.ended_ms, ToUnixMillis(ended));
  // The commit removed the member: one suspended member is left, and the claim row stays.
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"suspended", 1}}));
  EXPECT_FALSE(*pool_.Claim(o.microvm_id, "job#other"));
}

// A member minutes old is delivered to by another process: its nonce is derived again from the
// launch token on its row under the set's key, and is stored nowhere.
TEST_F(WarmPoolTest, AMemberIsLaunchedWithADerivedNonceThatTheLaunchDeliversAndNothingStores) {
  Fill();
  std::map<std::string, std::string> nonces;  // by VM id
  for (const std::string& vm : MemberVms()) {
    auto payload = platform_.PayloadOf(vm);
    ASSERT_TRUE(payload.ok()) << payload.status().ToString();
    auto derived = supervisor::DeriveControlNonce(control_key_, platform_.ClientTokenOf(vm));
    ASSERT_TRUE(derived.ok());
    EXPECT_EQ(payload->control_nonce.Reveal(), derived->Reveal()) << vm;
    nonces[vm] = derived->Reveal();
  }
  ASSERT_EQ(nonces.size(), 2u);
  LaunchOutcome o = NewLauncher().Handle(NewJob());
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  ASSERT_EQ(platform_.guest.control_nonces.size(), 1u);
  EXPECT_EQ(platform_.guest.control_nonces[0], nonces.at(o.microvm_id));
  const std::string stored = testing_support::StoreText(store_);
  EXPECT_NE(stored.find("launchToken=\"mvr-pool-"), std::string::npos)
      << "the other member's row keeps its launch token";
  for (const auto& [id, nonce] : nonces) {
    EXPECT_EQ(stored.find(nonce), std::string::npos) << "a nonce in the table";
    EXPECT_EQ(m_.sink.Joined().find(nonce), std::string::npos) << "a nonce in the log";
  }
}

// A member launched by a release before nonces (no launch token on its row) is delivered to
// without one, as before.
TEST_F(WarmPoolTest, AMemberWithoutALaunchTokenIsDeliveredToWithoutANonce) {
  control_key_ = Secret();
  Fill();
  for (const std::string& vm : MemberVms()) {
    EXPECT_TRUE(platform_.PayloadOf(vm)->control_nonce.empty()) << vm;
  }
  control_key_ = Secret("a-key-that-arrived-later");
  LaunchOutcome o = NewLauncher().Handle(NewJob());
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  ASSERT_EQ(platform_.guest.control_nonces.size(), 1u);
  EXPECT_EQ(platform_.guest.control_nonces[0], "");
}

// On DynamoDB a scan of the pool's rows reads the whole runner table: a launch reads it once,
// for the warm path. The cap check reads the cap's seats, not the pool; only its reconciliation
// (a process's first launch, then once a period) leaves the pool's members out of a listing.
TEST_F(WarmPoolTest, ALaunchReadsThePoolOnce) {
  Fill();
  Launcher& launcher = NewLauncher();
  ASSERT_EQ(launcher.Handle(NewJob()).decision, LaunchDecision::kLaunched);
  int scans = 0;
  store_.before_scan = [&](const store::ScanRequest&) { ++scans; };
  LaunchOutcome o = launcher.Handle(NewJob());
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(platform_.Calls("ResumeMicrovm"), 2);
  EXPECT_EQ(scans, 1);
}

TEST_F(WarmPoolTest, FailureAfterTheResumeTerminatesTheMemberAndReleasesTheJob) {
  config_.classes[0].warm_pool_size = 1;
  Fill();
  const std::string member = MemberVms().at(0);
  platform_.guest.start_status = 400;
  platform_.guest.start_body = R"({"error":"no"})";
  const LaunchIntent in = NewJob();
  LaunchOutcome o = NewLauncher().Handle(in);
  ASSERT_EQ(o.decision, LaunchDecision::kFailed) << o.detail;
  EXPECT_EQ(State(member), "TERMINATED");
  EXPECT_TRUE(Members().empty()) << "the used member's row went with its VM";
  EXPECT_TRUE(platform_.Runners().empty()) << "the runner registered against it was removed";
  EXPECT_EQ(ClaimNow(in.job_id), RunnerTable::ClaimOutcome::kWon)
      << "the job's claim was released for the retry";
}

// The set's key is its GitHub credential: once it rotates, a member launched before refuses the
// nonce the launch derives (403 wrong_nonce). The launch fails and terminates the member, whose
// row goes with it: it is never offered again, and the job's retry launches without it.
TEST_F(WarmPoolTest, AMemberLaunchedUnderARotatedKeyIsTerminatedNotOfferedAgain) {
  config_.classes[0].warm_pool_size = 1;
  Fill();
  const std::string member = MemberVms().at(0);
  platform_.guest.check_nonce = true;
  control_key_ = Secret("the-rotated-github-credential");
  const LaunchIntent in = NewJob();
  LaunchOutcome o = NewLauncher().Handle(in);
  ASSERT_EQ(o.decision, LaunchDecision::kFailed) << o.detail;
  EXPECT_NE(o.detail.find("wrong_nonce"), std::string::npos) << o.detail;
  EXPECT_EQ(State(member), "TERMINATED");
  EXPECT_TRUE(Members().empty());
  EXPECT_TRUE(platform_.Runners().empty());
  LaunchOutcome retry = NewLauncher().Handle(in);
  ASSERT_EQ(retry.decision, LaunchDecision::kLaunched) << retry.detail;
  EXPECT_NE(retry.microvm_id, member);
}

TEST_F(WarmPoolTest, TwoLaunchersOneMemberOnlyOneWinsAndTheOtherGoesCold) {
  config_.classes[0].warm_pool_size = 1;
  Fill();
  const std::string member = MemberVms().at(0);
  const int runs = platform_.Calls("RunMicrovm");
  LaunchOutcome first = NewLauncher().Handle(NewJob());
  LaunchOutcome second = NewLauncher().Handle(NewJob());
  ASSERT_EQ(first.decision, LaunchDecision::kLaunched) << first.detail;
  ASSERT_EQ(second.decision, LaunchDecision::kLaunched) << second.detail;
  EXPECT_EQ(first.microvm_id, member);
  EXPECT_NE(second.microvm_id, member);
  EXPECT_EQ(platform_.Calls("ResumeMicrovm"), 1);
  EXPECT_EQ(platform_.Calls("RunMicrovm"), runs + 1) << "the loser of the member launches cold";
}

TEST_F(WarmPoolTest, ClaimIsFirstWriterWins) {
  EXPECT_TRUE(*pool_.Claim("vm-9", "job#octo/app#1"));
  EXPECT_FALSE(*pool_.Claim("vm-9", "job#octo/app#2"));
  EXPECT_FALSE(*pool_.Claim("vm-9", kSweeperHolder));
}

TEST_F(WarmPoolTest, LosingAMemberClaimTriesTheNextMember) {
  config_.max_concurrent_vms = 10;
  Fill();
  const std::vector<std::string> members = MemberVms();
  ASSERT_EQ(members.size(), 2u);
  // Another launch reached the first and the second's claim is still open: this launch goes cold.
  ASSERT_TRUE(*pool_.Claim(members[0], "job#octo/app#7"));
  ASSERT_TRUE(*pool_.Claim(members[1], "job#octo/app#8"));
  ASSERT_TRUE(pool_.RemoveMember(members[1]).ok());
  LaunchOutcome o = NewLauncher().Handle(NewJob());
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_TRUE(o.microvm_id != members[0] && o.microvm_id != members[1]) << "both taken: cold";
  platform_.TerminateVm(o.microvm_id);
  Fill();  // refills
  const int runs = platform_.Calls("RunMicrovm");
  LaunchOutcome next = NewLauncher().Handle(NewJob());
  ASSERT_EQ(next.decision, LaunchDecision::kLaunched) << next.detail;
  EXPECT_EQ(platform_.Calls("RunMicrovm"), runs) << "an unclaimed member was there";
}

TEST_F(WarmPoolTest, MemberOfAnOldImageVersionIsNotUsedAndIsReplaced) {
  Fill();
  const std::vector<std::string> old_members = MemberVms();
  const std::string version = platform_.NewImageVersion();  // becomes the active one
  const int runs = platform_.Calls("RunMicrovm");
  LaunchOutcome o = NewLauncher().Handle(NewJob());
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(platform_.Calls("ResumeMicrovm"), 0);
  EXPECT_EQ(platform_.Calls("RunMicrovm"), runs + 1);
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_EQ(r.retired, 2);
  EXPECT_EQ(r.booted, 2);
  for (const std::string& vm : old_members) EXPECT_EQ(State(vm), "TERMINATED") << vm;
  const std::vector<PoolMember> members = MemberRows();
  ASSERT_EQ(members.size(), 2u);
  for (const PoolMember& m : members) EXPECT_EQ(m.image_version, version);
}

TEST_F(WarmPoolTest, MemberNearItsMaximumDurationIsReplacedAndNotUsed) {
  Fill();
  // 3600 s maximum, replaced within 600 s of it.
  m_.clock.Advance(Duration(3000'000 + 1'000));
  LaunchOutcome o = NewLauncher().Handle(NewJob());
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(platform_.Calls("ResumeMicrovm"), 0)
      << "a member about to expire would cut the job short";
  PoolSweepReport r = Fill();
  EXPECT_EQ(r.retired, 2);
  EXPECT_EQ(r.booted, 2);
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"suspended", 2}}));
}

TEST_F(WarmPoolTest, SweeperNeverRetiresAMemberALaunchClaimedFirst) {
  Fill();
  const std::string claimed = MemberVms().at(0);
  ASSERT_TRUE(*pool_.Claim(claimed, "job#octo/app#5"));
  platform_.NewImageVersion();
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_EQ(r.retired, 1);  // the other one only
  EXPECT_EQ(State(claimed), "SUSPENDED");
}

TEST_F(WarmPoolTest, AMemberALaunchClaimedAndAbandonedIsTerminated) {
  Fill();
  const std::string claimed = MemberVms().at(0);
  ASSERT_TRUE(*pool_.Claim(claimed, "job#octo/app#5"));
  m_.clock.Advance(config_.claim_takeover_after() + kMinute);
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_GE(r.retired, 1);
  EXPECT_EQ(State(claimed), "TERMINATED");
}

TEST_F(WarmPoolTest, RowOfAGoneMemberIsRemovedAndThePoolRefilled) {
  Fill();
  platform_.TerminateVm(MemberVms().at(0));  // the service ended it
  PoolSweepReport r = Fill();
  EXPECT_EQ(r.removed, 1);
  EXPECT_EQ(r.booted, 1);
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"suspended", 2}}));
}

TEST_F(WarmPoolTest, APreBootThatCannotBeSuspendedIsNeverReadyAndIsRetiredAfterBootTimeout) {
  platform_.vms_api.refusals.push_back(
      {"POST", "/suspend", 500, "InternalServerException", "suspend broke"});
  Sweeper().Sweep();
  const std::vector<std::string> first = MemberVms();
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_GE(r.errors, 1);
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"booting", 2}})) << "tried again next sweep";
  m_.clock.Advance(Duration(config_.warm_pool.boot_timeout_seconds * 1000LL + 1'000));
  r = Sweeper().Sweep();
  EXPECT_EQ(r.retired, 2);
  for (const std::string& vm : first) EXPECT_EQ(State(vm), "TERMINATED") << vm;
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"booting", 2}})) << "replaced by new ones";
}

TEST_F(WarmPoolTest, PoolMembersDoNotCountAgainstTheConcurrencyCap) {
  config_.max_concurrent_vms = 1;
  config_.classes[0].warm_pool_size = 3;
  Fill();  // three suspended members, over the cap of 1
  ASSERT_EQ(Members(), (std::map<std::string, int>{{"suspended", 3}}));
  LaunchOutcome o = NewLauncher().Handle(NewJob());
  EXPECT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
}

TEST_F(WarmPoolTest, JanitorLeavesAPreBootingMemberAndSuspendedMembersAlone) {
  config_.janitor.strikes = 1;
  Fill();
  // A member being pre-booted: RUNNING, old enough to be suspect, named only by its pool row.
  const std::string booting = VmAged(10 * kMinute);
  PoolMember m;
  m.microvm_id = booting;
  m.class_label = "mvr-small";
  m.image = "img-1";
  m.image_version = "1";
  m.created_ms = (m_.clock.Now() - 10 * kMinute).time_since_epoch().count();
  m.expires_ms = m.created_ms + 3600'000;
  ASSERT_TRUE(pool_.AddMember(m).ok());
  for (int i = 0; i < 3; ++i) {
    SweepReport r = J().Sweep();
    EXPECT_EQ(r.Get(Swept::kOrphansTerminated), 0);
    EXPECT_EQ(r.Get(Swept::kVmsTerminated), 0);
  }
  EXPECT_EQ(platform_.Calls("TerminateMicrovm"), 0);
  EXPECT_EQ(State(booting), "RUNNING");
  EXPECT_EQ(platform_.VmIdsIn("SUSPENDED").size(), 2u);
}

TEST_F(WarmPoolTest, JanitorStillReapsAnUnmappedRunningVmThatIsNoMember) {
  config_.janitor.strikes = 1;
  const std::string stray = VmAged(10 * kMinute);
  J().Sweep();
  EXPECT_EQ(State(stray), "TERMINATED");
}

// The pool sweep hands the members of a class no longer configured to the warm pool's sweeper
// (pools/sweep/pool_sweeper.h): claimed, their VMs ended and their rows deleted.
TEST_F(WarmPoolTest, MembersOfAClassNoLongerConfiguredAreRetired) {
  Fill();
  const std::vector<std::string> old_members = MemberVms();
  ASSERT_EQ(old_members.size(), 2u);
  config_.classes[0].label = "mvr-renamed";
  config_.classes[0].warm_pool_size = 0;
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_EQ(r.retired, 2);
  EXPECT_EQ(r.booted, 0);
  EXPECT_EQ(r.errors, 0) << (r.error_messages.empty() ? "" : r.error_messages[0]);
  EXPECT_TRUE(MemberRows().empty());
  for (const std::string& vm : old_members) EXPECT_EQ(State(vm), "TERMINATED") << vm;
}

}  // namespace
}  // namespace mvr::runnerset::testing
