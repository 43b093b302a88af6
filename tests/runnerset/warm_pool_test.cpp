// Warm pools: the sweeper keeps a class's pool of suspended VMs at target and replaces what must
// go; the launcher's warm path claims a member first-writer-wins, resumes it, then registers;
// the janitor leaves pool members alone.
#include <nlohmann/json.hpp>

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
  EXPECT_EQ(vms_by_id_["vm-1"].state, aws::MicrovmState::kSuspended);
  EXPECT_EQ(vms_by_id_["vm-2"].state, aws::MicrovmState::kSuspended);
  // At target: the next sweep boots nothing.
  EXPECT_EQ(Sweeper().Sweep().booted, 0);
  EXPECT_EQ(Count("run "), 2u);
}

// A sweep launches all its pre-boots, then follows them together for a minute; one slower than
// that is stepped by the next sweep. It never waits on one VM while the others wait (in turn,
// a pool of 100 took over 11 minutes to fill).
TEST_F(WarmPoolTest, PreBootsAreFollowedTogetherAndASlowOneIsSteppedByTheNextSweep) {
  ON_CALL(vms_, SuspendMicrovm(_)).WillByDefault(Invoke([this](const std::string& id) {
    return Move(id, "suspend", aws::MicrovmState::kSuspending);  // the service is still at it
  }));
  const TimePoint start = m_.clock.Now();
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_EQ(r.booted, 2);
  EXPECT_EQ(Count("suspend "), 2u) << "each asked for once, as soon as its VM was RUNNING";
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"parking", 2}}));
  EXPECT_LE(m_.clock.Now() - start, Duration(65'000)) << "a minute for the lot, not per VM";
  vms_by_id_["vm-1"].state = aws::MicrovmState::kSuspended;
  vms_by_id_["vm-2"].state = aws::MicrovmState::kSuspended;
  r = Sweeper().Sweep();
  EXPECT_EQ(r.booted, 0) << "members on their way count toward the target";
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"suspended", 2}}));
}

TEST_F(WarmPoolTest, AClassWithoutAPoolGetsNoMembersAndCostsNoCalls) {
  config_.classes[0].warm_pool_size = 0;
  EXPECT_CALL(vms_, GetMicrovmImage(_)).Times(0);
  EXPECT_EQ(Sweeper().Sweep().booted, 0);
  EXPECT_EQ(Count("run "), 0u);
}

TEST_F(WarmPoolTest, APoolMadeSmallerRetiresItsExtraMembers) {
  Fill();
  config_.classes[0].warm_pool_size = 1;
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_EQ(r.retired, 1);
  EXPECT_EQ(r.booted, 0);
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"suspended", 1}}));
}

TEST_F(WarmPoolTest, WarmLaunchResumesAMemberThenRegistersThenDelivers) {
  Fill();
  calls_.clear();
  LaunchOutcome o = NewLauncher().Handle(Intent(42));
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(Count("run "), 0u) << "a warm launch boots nothing";
  // 001's order on the warm path: resume first, then register against it, then deliver.
  ASSERT_EQ(calls_.size(), 3u);
  EXPECT_EQ(calls_[0].rfind("resume vm-", 0), 0u) << calls_[0];
  EXPECT_EQ(calls_[1].rfind("register mvr-demo-42-", 0), 0u) << calls_[1];
  EXPECT_EQ(calls_[2], "deliver");
  auto row = table_.GetMapping(o.runner_name);
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ((*row)->microvm_id, o.microvm_id);
  // The commit removed the member: one suspended member is left, and the claim row stays.
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"suspended", 1}}));
  EXPECT_FALSE(*pool_.Claim(o.microvm_id, "job#other"));
}

// A member minutes old is delivered to by another process: its nonce is derived again from the
// launch token on its row under the set's key, and is stored nowhere.
TEST_F(WarmPoolTest, AMemberIsLaunchedWithADerivedNonceThatTheLaunchDeliversAndNothingStores) {
  Fill();
  ASSERT_FALSE(runs_.empty());
  std::map<std::string, std::string> nonces;  // by VM id
  for (const auto& [id, run] : runs_) {
    auto payload = supervisor::DecodeRunPayload(run.run_hook_payload.Reveal());
    ASSERT_TRUE(payload.ok()) << payload.status().ToString();
    auto derived = supervisor::DeriveControlNonce(control_key_, run.client_token);
    ASSERT_TRUE(derived.ok());
    EXPECT_EQ(payload->control_nonce.Reveal(), derived->Reveal()) << id;
    nonces[id] = derived->Reveal();
  }
  LaunchOutcome o = NewLauncher().Handle(Intent(42));
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  ASSERT_EQ(delivered_.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(delivered_[0]).value("nonce", ""), nonces.at(o.microvm_id));
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
  for (const auto& [id, run] : runs_) {
    EXPECT_TRUE(supervisor::DecodeRunPayload(run.run_hook_payload.Reveal())->control_nonce.empty());
  }
  control_key_ = Secret("a-key-that-arrived-later");
  LaunchOutcome o = NewLauncher().Handle(Intent(42));
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  ASSERT_EQ(delivered_.size(), 1u);
  EXPECT_FALSE(nlohmann::json::parse(delivered_[0]).contains("nonce"));
}

// On DynamoDB a scan of the pool's rows reads the whole runner table: the cap check and the
// warm path share one.
TEST_F(WarmPoolTest, ALaunchReadsThePoolOnce) {
  Fill();
  int scans = 0;
  store_.before_scan = [&](const store::ScanRequest&) { ++scans; };
  LaunchOutcome o = NewLauncher().Handle(Intent(42));
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(Count("resume "), 1u);
  EXPECT_EQ(scans, 1);
}

TEST_F(WarmPoolTest, FailureAfterTheResumeTerminatesTheMemberAndReleasesTheJob) {
  config_.classes[0].warm_pool_size = 1;
  Fill();
  EXPECT_CALL(http_, Send(_)).WillRepeatedly(Invoke([](const http::HttpRequest&) {
    return Result<http::HttpResponse>(http::HttpResponse::Json(400, R"({"error":"no"})"));
  }));
  LaunchOutcome o = NewLauncher().Handle(Intent(42));
  ASSERT_EQ(o.decision, LaunchDecision::kFailed) << o.detail;
  EXPECT_EQ(vms_by_id_["vm-1"].state, aws::MicrovmState::kTerminated);
  EXPECT_TRUE(Members().empty()) << "the used member's row went with its VM";
  EXPECT_EQ(table_.ClaimJob("octo/app", 42)->outcome, RunnerTable::ClaimOutcome::kWon)
      << "the job's claim was released for the retry";
}

TEST_F(WarmPoolTest, TwoLaunchersOneMemberOnlyOneWinsAndTheOtherGoesCold) {
  config_.classes[0].warm_pool_size = 1;
  Fill();
  calls_.clear();
  LaunchOutcome first = NewLauncher().Handle(Intent(1));
  LaunchOutcome second = NewLauncher().Handle(Intent(2));
  ASSERT_EQ(first.decision, LaunchDecision::kLaunched) << first.detail;
  ASSERT_EQ(second.decision, LaunchDecision::kLaunched) << second.detail;
  EXPECT_EQ(first.microvm_id, "vm-1");
  EXPECT_NE(second.microvm_id, "vm-1");
  EXPECT_EQ(Count("resume "), 1u);
  EXPECT_EQ(Count("run "), 1u) << "the loser of the member launches cold";
}

TEST_F(WarmPoolTest, ClaimIsFirstWriterWins) {
  EXPECT_TRUE(*pool_.Claim("vm-9", "job#octo/app#1"));
  EXPECT_FALSE(*pool_.Claim("vm-9", "job#octo/app#2"));
  EXPECT_FALSE(*pool_.Claim("vm-9", kSweeperHolder));
}

TEST_F(WarmPoolTest, LosingAMemberClaimTriesTheNextMember) {
  config_.max_concurrent_vms = 10;
  Fill();
  // Another launch reached vm-1 and vm-2's claim is still open: this launch takes vm-2.
  ASSERT_TRUE(*pool_.Claim("vm-1", "job#octo/app#7"));
  ASSERT_TRUE(*pool_.Claim("vm-2", "job#octo/app#8"));
  ASSERT_TRUE(pool_.RemoveMember("vm-2").ok());
  LaunchOutcome o = NewLauncher().Handle(Intent(42));
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(o.microvm_id, "vm-3") << "both members taken: cold";
  vms_by_id_.erase("vm-3");
  Fill();  // refills (vm-4, vm-5 ...)
  const size_t runs = Count("run ");
  LaunchOutcome next = NewLauncher().Handle(Intent(43));
  ASSERT_EQ(next.decision, LaunchDecision::kLaunched) << next.detail;
  EXPECT_EQ(Count("run "), runs) << "an unclaimed member was there";
}

TEST_F(WarmPoolTest, MemberOfAnOldImageVersionIsNotUsedAndIsReplaced) {
  Fill();
  version_ = "4";  // a new version of the class's image becomes active
  calls_.clear();
  LaunchOutcome o = NewLauncher().Handle(Intent(42));
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(Count("resume "), 0u);
  EXPECT_EQ(Count("run "), 1u);
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_EQ(r.retired, 2);
  EXPECT_EQ(r.booted, 2);
  EXPECT_EQ(vms_by_id_["vm-1"].state, aws::MicrovmState::kTerminated);
  EXPECT_EQ(vms_by_id_["vm-2"].state, aws::MicrovmState::kTerminated);
  auto members = pool_.ScanMembers();
  ASSERT_TRUE(members.ok());
  ASSERT_EQ(members->size(), 2u);
  for (const PoolMember& m : *members) EXPECT_EQ(m.image_version, "4");
}

TEST_F(WarmPoolTest, MemberNearItsMaximumDurationIsReplacedAndNotUsed) {
  Fill();
  // 3600 s maximum, replaced within 600 s of it.
  m_.clock.Advance(Duration(3000'000 + 1'000));
  calls_.clear();
  LaunchOutcome o = NewLauncher().Handle(Intent(42));
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(Count("resume "), 0u) << "a member about to expire would cut the job short";
  PoolSweepReport r = Fill();
  EXPECT_EQ(r.retired, 2);
  EXPECT_EQ(r.booted, 2);
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"suspended", 2}}));
}

TEST_F(WarmPoolTest, SweeperNeverRetiresAMemberALaunchClaimedFirst) {
  Fill();
  ASSERT_TRUE(*pool_.Claim("vm-1", "job#octo/app#5"));
  version_ = "4";
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_EQ(r.retired, 1);  // vm-2 only
  EXPECT_NE(vms_by_id_["vm-1"].state, aws::MicrovmState::kTerminated);
}

TEST_F(WarmPoolTest, AMemberALaunchClaimedAndAbandonedIsTerminated) {
  Fill();
  ASSERT_TRUE(*pool_.Claim("vm-1", "job#octo/app#5"));
  m_.clock.Advance(config_.claim_takeover_after() + kMinute);
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_GE(r.retired, 1);
  EXPECT_EQ(vms_by_id_["vm-1"].state, aws::MicrovmState::kTerminated);
}

TEST_F(WarmPoolTest, RowOfAGoneMemberIsRemovedAndThePoolRefilled) {
  Fill();
  vms_by_id_.erase("vm-1");  // the service lost it
  PoolSweepReport r = Fill();
  EXPECT_EQ(r.removed, 1);
  EXPECT_EQ(r.booted, 1);
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"suspended", 2}}));
}

TEST_F(WarmPoolTest, APreBootThatCannotBeSuspendedIsNeverReadyAndIsRetiredAfterBootTimeout) {
  ON_CALL(vms_, SuspendMicrovm(_)).WillByDefault(Return(Internal("suspend broke")));
  Sweeper().Sweep();
  PoolSweepReport r = Sweeper().Sweep();
  EXPECT_GE(r.errors, 1);
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"booting", 2}})) << "tried again next sweep";
  m_.clock.Advance(Duration(config_.warm_pool.boot_timeout_seconds * 1000LL + 1'000));
  r = Sweeper().Sweep();
  EXPECT_EQ(r.retired, 2);
  EXPECT_EQ(vms_by_id_["vm-1"].state, aws::MicrovmState::kTerminated);
  EXPECT_EQ(vms_by_id_["vm-2"].state, aws::MicrovmState::kTerminated);
  EXPECT_EQ(Members(), (std::map<std::string, int>{{"booting", 2}})) << "replaced by new ones";
}

TEST_F(WarmPoolTest, PoolMembersDoNotCountAgainstTheConcurrencyCap) {
  config_.max_concurrent_vms = 1;
  config_.classes[0].warm_pool_size = 3;
  Fill();  // three suspended members, over the cap of 1
  LaunchOutcome o = NewLauncher().Handle(Intent(42));
  EXPECT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
}

TEST_F(WarmPoolTest, JanitorLeavesAPreBootingMemberAndSuspendedMembersAlone) {
  config_.janitor.strikes = 1;
  Fill();
  // A member being pre-booted: RUNNING, old enough to be suspect, named only by its pool row.
  aws::Microvm booting = Make("vm-9", aws::MicrovmState::kRunning);
  booting.started_at = m_.clock.Now() - 10 * kMinute;
  vms_by_id_["vm-9"] = booting;
  PoolMember m;
  m.microvm_id = "vm-9";
  m.class_label = "mvr-small";
  m.image = "img-1";
  m.image_version = "3";
  m.created_ms = (m_.clock.Now() - 10 * kMinute).time_since_epoch().count();
  m.expires_ms = m.created_ms + 3600'000;
  ASSERT_TRUE(pool_.AddMember(m).ok());
  for (int i = 0; i < 3; ++i) {
    SweepReport r = J().Sweep();
    EXPECT_EQ(r.Get(Swept::kOrphansTerminated), 0);
    EXPECT_EQ(r.Get(Swept::kVmsTerminated), 0);
  }
  EXPECT_EQ(Count("terminate "), 0u);
  EXPECT_EQ(vms_by_id_["vm-9"].state, aws::MicrovmState::kRunning);
}

TEST_F(WarmPoolTest, JanitorStillReapsAnUnmappedRunningVmThatIsNoMember) {
  config_.janitor.strikes = 1;
  aws::Microvm stray = Make("vm-8", aws::MicrovmState::kRunning);
  stray.started_at = m_.clock.Now() - 10 * kMinute;
  vms_by_id_["vm-8"] = stray;
  J().Sweep();
  EXPECT_EQ(vms_by_id_["vm-8"].state, aws::MicrovmState::kTerminated);
}

}  // namespace
}  // namespace mvr::runnerset::testing
