// Release: fencing on lease id and generation, retries, the reuse deadline, handles.
#include "action/pool_leases.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/action/pool_fixture.h"

namespace mvr::action {
namespace {

using testing::kMargin;
using testing::PoolWorld;
using Kind = Acquisition::Kind;

class PoolReleaseTest : public testing::PoolLeasesTest {};

TEST_P(PoolReleaseTest, StaleOwnerCannotStopSuspendOrRewrite) {
  Lease old = Start("run-a");
  Stop(old);
  Lease current = Acquire("run-b").lease;
  ASSERT_EQ(current.member_id, old.member_id);
  const store::Attributes before = Raw(current);

  auto stop = leases_.BeginRelease(old);
  EXPECT_EQ(stop.status().code(), Code::kConflict);
  EXPECT_NE(stop.status().message().find("stale server handle"), std::string::npos);
  EXPECT_NE(
      stop.status().message().find("LEASED at generation " + std::to_string(current.generation)),
      std::string::npos);
  EXPECT_EQ(leases_.FinishSuspend(old).status().code(), Code::kConflict);
  EXPECT_EQ(leases_.BeginDestroy(old).status().code(), Code::kConflict);
  EXPECT_EQ(leases_.Retire(old).code(), Code::kConflict);
  EXPECT_EQ(leases_.RecordLaunch(old, "mvm-x", world_.clock().Now(), kMargin).status().code(),
            Code::kConflict);
  // A forged lease id at the current generation is refused as well.
  Lease forged = current;
  forged.lease_id = std::string(32, '0');
  EXPECT_EQ(leases_.BeginRelease(forged).status().code(), Code::kConflict);
  EXPECT_EQ(Raw(current), before);
  Stop(current);
}

TEST_P(PoolReleaseTest, RetriedStopContinuesTheSameRelease) {
  Lease lease = Start("run-a");
  auto plan = leases_.BeginRelease(lease);
  ASSERT_TRUE(plan.ok());
  auto again = leases_.BeginRelease(lease);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->action, ReleasePlan::Action::kSuspend);
  ASSERT_TRUE(leases_.FinishSuspend(lease).ok());
  EXPECT_EQ(Member(lease).state, MemberState::kReady);
  EXPECT_TRUE(Member(lease).lease_owner.empty());
  EXPECT_FALSE(Member(lease).lease_expires_at.has_value());
  // A retried FinishSuspend and a retried stop of the same lease answer "done", not "stale".
  auto retried = leases_.FinishSuspend(lease);
  ASSERT_TRUE(retried.ok()) << retried.status().ToString();
  EXPECT_EQ(retried->state, MemberState::kReady);
  auto done = leases_.BeginRelease(lease);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->action, ReleasePlan::Action::kReleased);
  // Once another run leased the member, the same calls are stale and change nothing.
  Lease next = Start("run-b");
  ASSERT_EQ(next.member_id, lease.member_id);
  EXPECT_EQ(leases_.FinishSuspend(lease).status().code(), Code::kConflict);
  EXPECT_EQ(leases_.BeginRelease(lease).status().code(), Code::kConflict);
  EXPECT_EQ(Member(lease).lease_id, next.lease_id);
  EXPECT_EQ(Member(lease).state, MemberState::kLeased);
}

TEST_P(PoolReleaseTest, FailedSuspendNeverMarksReady) {
  Lease lease = Start("run-a");
  ASSERT_TRUE(leases_.BeginRelease(lease).ok());
  ASSERT_TRUE(leases_.BeginDestroy(lease).ok());  // suspend failed: terminate instead
  EXPECT_EQ(leases_.FinishSuspend(lease).status().code(), Code::kConflict);
  ASSERT_TRUE(leases_.Retire(lease).ok());
  EXPECT_EQ(Member(lease).state, MemberState::kDead);
  EXPECT_EQ(ActiveCount(Partition()), 0);
  EXPECT_TRUE(leases_.Retire(lease).ok());  // a retried retirement changes nothing
  EXPECT_EQ(ActiveCount(Partition()), 0);
  EXPECT_EQ(leases_.BeginDestroy(lease).status().code(), Code::kConflict);
}

TEST_P(PoolReleaseTest, HandleNamesExactlyTheLeaseItWasGivenFor) {
  Acquisition a = Acquire("run-a");
  MemberRecord m = leases_.RecordLaunch(a.lease, "mvm-1", world_.clock().Now(), kMargin).value();
  PoolHandle h;
  h.repository_id = "123456";
  h.server_key_hash = ServerKeyHash(world_.Key());
  h.server_name = "build-cache";
  h.region = "us-east-1";
  h.member_id = m.member_id;
  h.lease_id = m.lease_id;
  h.generation = m.generation;
  h.microvm_id = m.microvm_id;
  h.reuse_deadline = *m.reuse_deadline;
  h.runner_name = "lambda-mvm-1";
  PoolHandle decoded = DecodePoolHandle(EncodePoolHandle(h)).value();
  Lease lease = LeaseFromHandle(decoded, "123456", "us-east-1").value();
  EXPECT_EQ(lease.partition, a.lease.partition);
  EXPECT_EQ(lease.member_id, a.lease.member_id);
  EXPECT_EQ(lease.lease_id, a.lease.lease_id);
  EXPECT_EQ(lease.generation, a.lease.generation);
  EXPECT_NE(LeaseFromHandle(decoded, "999", "us-east-1").status().message().find("repository"),
            std::string::npos);
  EXPECT_NE(LeaseFromHandle(decoded, "123456", "eu-west-1").status().message().find("region"),
            std::string::npos);
  Stop(lease);
}

TEST_P(PoolReleaseTest, StopJustBeforeAtAndAfterTheReuseDeadline) {
  const TimePoint launched = world_.clock().Now();
  const TimePoint deadline = launched + std::chrono::seconds(7'200 - kMargin);
  for (Duration offset : {Duration(-1000), Duration(0), Duration(1000)}) {
    PoolWorld& world = world_;
    PoolLeases& leases = leases_;
    world.NewPool();
    world.clock().Set(launched);
    Acquisition a = leases.Acquire(world.Request("run-a")).value();
    ASSERT_TRUE(leases.RecordLaunch(a.lease, "mvm-1", launched, kMargin).ok());
    world.clock().Set(deadline + offset);
    ReleasePlan plan = leases.BeginRelease(a.lease).value();
    if (offset < Duration(0)) {
      EXPECT_EQ(plan.action, ReleasePlan::Action::kSuspend);
      EXPECT_EQ(plan.member.state, MemberState::kSuspending);
    } else {
      EXPECT_EQ(plan.action, ReleasePlan::Action::kTerminate) << offset.count();
      EXPECT_EQ(plan.member.state, MemberState::kDestroying);
      EXPECT_EQ(leases.FinishSuspend(a.lease).status().code(), Code::kConflict);
      EXPECT_TRUE(leases.Retire(a.lease).ok());
    }
  }
}

// One source, two binaries: the local backends in action_test, DynamoDB on moto in
// pool_leases_moto_test.
#ifdef MVR_POOL_MOTO
INSTANTIATE_TEST_SUITE_P(Moto, PoolReleaseTest, ::testing::Values("dynamodb"),
                         [](const auto& info) { return info.param; });
#else
INSTANTIATE_TEST_SUITE_P(Backends, PoolReleaseTest, ::testing::Values("memory", "sqlite"),
                         [](const auto& info) { return info.param; });
#endif

}  // namespace
}  // namespace mvr::action
