// The pooled start and stop around the reuse deadline and after things went wrong: a cancelled
// run's expired lease, a missing or terminated VM, an image version change, a failed suspend, a
// failed delivery and a failed registration (seed 000, "Failure behavior").
#include <gtest/gtest.h>

#include "action/pool_flow.h"
#include "tests/action/pool_flow_fixture.h"

namespace mvr::action {
namespace {

using std::chrono::seconds;
using testing::PoolFlowTest;

// Launched at t0 with the default lifetime (7200 s) and margin (1800 s): reuse deadline t0+5400.
constexpr seconds kToDeadline{5'400};

class PoolDeadlineTest : public PoolFlowTest {
 protected:
  // A member launched now, then suspended; returns its first start.
  StartResult Parked() {
    StartResult a = Started("job-a");
    Stopped(a);
    return a;
  }
  void ExpectReplacedAfter(seconds elapsed) {
    StartResult a = Parked();
    clock_.Advance(elapsed);
    const size_t before = Calls();
    StartResult b = Started("job-b");
    EXPECT_FALSE(b.warm_hit);
    EXPECT_NE(b.microvm_id, a.microvm_id);
    EXPECT_EQ(CountSince(before, "ResumeMicrovm"), 0);
    EXPECT_EQ(StateOf(a.microvm_id), aws::MicrovmState::kTerminated);
    EXPECT_EQ(MemberOf(a).state, MemberState::kDead);
    EXPECT_EQ(ActiveCount(b), 1);
  }
  void ExpectStopTerminatesAfter(seconds elapsed) {
    StartResult a = Started("job-a");
    clock_.Advance(elapsed);
    const size_t before = Calls();
    Stopped(a, "terminated (at or past its reuse deadline)");
    EXPECT_EQ(CountSince(before, "SuspendMicrovm"), 0);
    EXPECT_EQ(StateOf(a.microvm_id), aws::MicrovmState::kTerminated);
    EXPECT_EQ(MemberOf(a).state, MemberState::kDead);
    EXPECT_EQ(ActiveCount(a), 0);
  }
};

TEST_F(PoolDeadlineTest, StartOneSecondBeforeTheReuseDeadlineResumesTheMember) {
  StartResult a = Parked();
  clock_.Advance(kToDeadline - seconds(1));
  StartResult b = Started("job-b");
  EXPECT_TRUE(b.warm_hit);
  EXPECT_EQ(b.microvm_id, a.microvm_id);
}

TEST_F(PoolDeadlineTest, StartExactlyAtTheReuseDeadlineReplacesTheMember) {
  ExpectReplacedAfter(kToDeadline);
}

TEST_F(PoolDeadlineTest, StartOneSecondAfterTheReuseDeadlineReplacesTheMember) {
  ExpectReplacedAfter(kToDeadline + seconds(1));
}

TEST_F(PoolDeadlineTest, StopOneSecondBeforeTheReuseDeadlineSuspends) {
  StartResult a = Started("job-a");
  clock_.Advance(kToDeadline - seconds(1));
  Stopped(a, "suspended");
  EXPECT_EQ(MemberOf(a).state, MemberState::kReady);
}

TEST_F(PoolDeadlineTest, StopExactlyAtTheReuseDeadlineTerminates) {
  ExpectStopTerminatesAfter(kToDeadline);
}

TEST_F(PoolDeadlineTest, StopOneSecondAfterTheReuseDeadlineTerminates) {
  ExpectStopTerminatesAfter(kToDeadline + seconds(1));
}

TEST_F(PoolFlowTest, CancelledRunsLeaseExpiresAndTheNextAccessRecoversIt) {
  StartResult cancelled = Started("job-a", 1);  // its stop never runs
  EXPECT_EQ(Start("job-b", 1).status().code(), Code::kQuotaExceeded);
  clock_.Advance(seconds(7'200));  // lease-timeout-seconds defaults to the lifetime
  StartResult b = Started("job-b", 1);
  EXPECT_NE(b.microvm_id, cancelled.microvm_id);
  EXPECT_EQ(StateOf(cancelled.microvm_id), aws::MicrovmState::kTerminated);
  EXPECT_EQ(MemberOf(cancelled).state, MemberState::kDead);
  // The cancelled run's handle can no longer stop anything.
  const size_t before = Calls();
  EXPECT_EQ(Stop(cancelled.server).status().code(), Code::kConflict);
  EXPECT_TRUE(CallsSince(before).empty());
  Stopped(b);
}

TEST_F(PoolFlowTest, StopCancelledAfterSuspendingIsFinishedByTheNextStart) {
  StartResult a = Started("job-a", 1);
  // The stop wrote SUSPENDING and suspended the VM, then was cancelled before marking READY.
  PoolLeases leases(store_, clock_, random_, PoolPolicy());
  PoolHandle h = HandleOf(a);
  Lease lease = LeaseFromHandle(h, "123", "us-east-1").value();
  ASSERT_TRUE(leases.BeginRelease(lease).ok());
  cloud_[a.microvm_id].state = aws::MicrovmState::kSuspended;
  EXPECT_EQ(Start("job-b", 1).status().code(), Code::kQuotaExceeded);  // not yet expired
  clock_.Advance(std::chrono::minutes(15));
  const size_t before = Calls();
  StartResult b = Started("job-b", 1);
  EXPECT_TRUE(b.warm_hit);
  EXPECT_EQ(b.microvm_id, a.microvm_id);
  EXPECT_EQ(CountSince(before, "RunMicrovm"), 0);
  EXPECT_EQ(CountSince(before, "TerminateMicrovm"), 0);
  EXPECT_EQ(Stop(a.server).status().code(), Code::kConflict);  // the cancelled stop's lease
  Stopped(b);
}

TEST_F(PoolFlowTest, StartKilledBeforeRecordingItsLaunchIsRecoveredWithTheSameVm) {
  // A start reserved a member and called RunMicrovm, then died before recording the VM: the
  // MicroVM exists but the table still says CREATING.
  const std::string partition = internal::ResolvePool(vms_, Command("x")).value().partition;
  PoolPolicy killed_policy;
  killed_policy.lease_timeout = std::chrono::minutes(10);
  PoolLeases leases(store_, clock_, random_, killed_policy);
  PoolRequest r;
  r.partition = partition;
  r.server_name = "build-cache";
  r.image_id = "img-1";
  r.image_version = "3";
  r.region = "us-east-1";
  r.owner = "killed-start";
  r.capacity = 2;
  Acquisition killed = leases.Acquire(r).value();
  ASSERT_EQ(killed.kind, Acquisition::Kind::kReserved);
  aws::RunMicrovmRequest run;
  run.client_token = MemberLaunchToken(r.partition, killed.member);
  const std::string orphan = vms_.RunMicrovm(run).value().microvm_id;

  EXPECT_EQ(Start("job-b", 1).status().code(), Code::kQuotaExceeded);  // reservation unexpired
  clock_.Advance(std::chrono::minutes(10));
  const size_t before = Calls();
  StartResult b = Started("job-b", 1);
  EXPECT_EQ(b.microvm_id, orphan);  // the same clientToken found the same VM
  EXPECT_EQ(HandleOf(b).member_id, killed.lease.member_id);
  EXPECT_EQ(CountSince(before, "RunMicrovm"), 1);
  EXPECT_EQ(launched_, 1);  // the orphan only: no second VM
  EXPECT_EQ(MemberOf(b).state, MemberState::kLeased);
  Stopped(b);
}

TEST_F(PoolFlowTest, MissingOrTerminatedVmIsMarkedDeadAndReplaced) {
  StartResult a = Started("job-a");
  Stopped(a);
  cloud_.erase(a.microvm_id);  // the table item exists, the MicroVM does not
  StartResult b = Started("job-b");
  EXPECT_FALSE(b.warm_hit);
  EXPECT_NE(b.microvm_id, a.microvm_id);
  EXPECT_EQ(MemberOf(a).state, MemberState::kDead);
  Stopped(b);
  cloud_[b.microvm_id].state = aws::MicrovmState::kTerminated;  // the platform ended it
  const size_t before = Calls();
  StartResult c = Started("job-c");
  EXPECT_NE(c.microvm_id, b.microvm_id);
  EXPECT_EQ(MemberOf(b).state, MemberState::kDead);
  EXPECT_EQ(CountSince(before, "TerminateMicrovm"), 0);  // nothing to terminate
  EXPECT_EQ(ActiveCount(c), 1);
}

TEST_F(PoolFlowTest, ImageVersionChangeNeverResumesTheOldVm) {
  StartResult a = Started("job-a");
  Stopped(a);
  latest_version_ = "4";  // a new ACTIVE version of the image
  const size_t before = Calls();
  StartResult b = Started("job-b");
  EXPECT_FALSE(b.warm_hit);
  EXPECT_NE(b.microvm_id, a.microvm_id);
  EXPECT_NE(HandleOf(b).server_key_hash, HandleOf(a).server_key_hash);
  EXPECT_EQ(CountSince(before, "ResumeMicrovm"), 0);
  EXPECT_EQ(StateOf(a.microvm_id), aws::MicrovmState::kSuspended);
}

TEST_F(PoolFlowTest, FailedSuspendNeverMarksReadyAndTerminatesInstead) {
  StartResult a = Started("job-a");
  suspend_error_ = Internal("suspend hook failed");
  Result<StopResult> stop = Stop(a.server);
  ASSERT_FALSE(stop.ok());
  EXPECT_NE(stop.status().message().find("terminated the MicroVM"), std::string::npos)
      << stop.status().message();
  EXPECT_EQ(MemberOf(a).state, MemberState::kDead);
  EXPECT_EQ(StateOf(a.microvm_id), aws::MicrovmState::kTerminated);
}

TEST_F(PoolFlowTest, RegistrationFailureLeavesTheCachedVmUntouchedAndReady) {
  StartResult a = Started("job-a");
  Stopped(a);
  jit_error_ = Unauthorized("bad credentials");
  const size_t before = Calls();
  Result<StartResult> b = Start("job-b");
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(CallsSince(before).empty()) << CallsSince(before)[0];
  EXPECT_EQ(MemberOf(a).state, MemberState::kReady);
  jit_error_ = Status::Ok();
  EXPECT_TRUE(Started("job-c").warm_hit);
}

TEST_F(PoolFlowTest, FailedResumeRemovesTheRunnerAndKeepsTheSuspendedVm) {
  StartResult a = Started("job-a");
  Stopped(a);
  resume_error_ = InvalidArgument("resume refused");
  Result<StartResult> b = Start("job-b");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("resume refused"), std::string::npos);
  EXPECT_TRUE(runners_.empty());
  EXPECT_EQ(StateOf(a.microvm_id), aws::MicrovmState::kSuspended);  // its cache is kept
  EXPECT_EQ(MemberOf(a).state, MemberState::kReady);
  resume_error_ = Status::Ok();
  EXPECT_TRUE(Started("job-c").warm_hit);
}

TEST_F(PoolFlowTest, FailedDeliveryRemovesTheRunnerAndParksTheVm) {
  StartResult a = Started("job-a");
  Stopped(a);
  delivery_status_ = 400;
  Result<StartResult> b = Start("job-b");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("gave pool member"), std::string::npos)
      << b.status().message();
  EXPECT_TRUE(runners_.empty());
  EXPECT_EQ(StateOf(a.microvm_id), aws::MicrovmState::kSuspended);
  EXPECT_EQ(MemberOf(a).state, MemberState::kReady);
  delivery_status_ = 202;
  EXPECT_TRUE(Started("job-c").warm_hit);
}

}  // namespace
}  // namespace mvr::action
