// Acquire: reservation, reuse, idempotency, reconciliation and request-local capacity.
#include "action/pool_leases.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/action/pool_fixture.h"

namespace mvr::action {
namespace {

using testing::kMargin;
using testing::PoolWorld;
using Kind = Acquisition::Kind;

class PoolAcquireTest : public testing::PoolLeasesTest {};

TEST_P(PoolAcquireTest, EmptyPoolReservesThenReusesTheMostRecentlyUsedReadyMember) {
  Acquisition first = Acquire("run-a");
  EXPECT_EQ(first.kind, Kind::kReserved);
  EXPECT_EQ(first.member.state, MemberState::kCreating);
  EXPECT_EQ(first.member.generation, 1);
  EXPECT_EQ(ActiveCount(Partition()), 1);
  ASSERT_TRUE(leases_.RecordLaunch(first.lease, "mvm-1", world_.clock().Now(), kMargin).ok());
  Lease second = Start("run-b");
  EXPECT_NE(second.member_id, first.lease.member_id);

  Stop(first.lease);
  world_.clock().Advance(std::chrono::minutes(1));
  Stop(second);  // used more recently
  Acquisition next = Acquire("run-c");
  EXPECT_EQ(next.kind, Kind::kLeasedReady);
  EXPECT_EQ(next.lease.member_id, second.member_id);
  EXPECT_EQ(next.member.state, MemberState::kLeased);
  EXPECT_EQ(next.member.generation, second.generation + 1);
  EXPECT_NE(next.lease.lease_id, second.lease_id);
  EXPECT_EQ(ActiveCount(Partition()), 2);
}

TEST_P(PoolAcquireTest, SameIdentityGetsItsLeaseBackInsteadOfASecondMember) {
  Acquisition first = Acquire("run-a", 5);
  Acquisition retry = Acquire("run-a", 5);
  EXPECT_EQ(retry.kind, Kind::kExisting);
  EXPECT_EQ(retry.lease.member_id, first.lease.member_id);
  EXPECT_EQ(retry.lease.generation, first.lease.generation);
  EXPECT_EQ(MemberLaunchToken(Partition(), retry.member),
            MemberLaunchToken(Partition(), first.member));
  ASSERT_TRUE(leases_.RecordLaunch(first.lease, "mvm-1", world_.clock().Now(), kMargin).ok());
  EXPECT_EQ(Acquire("run-a", 5).kind, Kind::kExisting);
  EXPECT_EQ(ActiveCount(Partition()), 1);
}

TEST_P(PoolAcquireTest, RacingStartsNeverShareAGeneration) {
  Lease parked = Start("run-0", 1);
  Stop(parked);
  // run-b leases the only member between run-a's read and run-a's conditional write.
  std::optional<Acquisition> b;
  world_.store().before_write = [&] { b = Acquire("run-b", 1); };
  Acquisition a = Acquire("run-a", 1);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->kind, Kind::kLeasedReady);
  EXPECT_EQ(b->member.generation, parked.generation + 1);
  EXPECT_EQ(a.kind, Kind::kRefused);
  EXPECT_EQ(a.refusal.code(), Code::kQuotaExceeded);
  MemberRecord now = Member(parked);
  EXPECT_EQ(now.lease_id, b->lease.lease_id);
  EXPECT_EQ(now.lease_owner, "run-b");
}

TEST_P(PoolAcquireTest, CancelledRunsExpiredLeaseIsRecoveredOnNextAccess) {
  Lease cancelled = Start("run-a", 1);
  world_.clock().Advance(std::chrono::hours(2) - std::chrono::seconds(1));
  Acquisition blocked = Acquire("run-b", 1);
  EXPECT_EQ(blocked.kind, Kind::kRefused);
  EXPECT_TRUE(blocked.to_destroy.empty());
  world_.clock().Advance(std::chrono::seconds(1));  // the lease expires now

  Acquisition next = Acquire("run-b", 1);
  ASSERT_EQ(next.to_destroy.size(), 1u);
  EXPECT_EQ(next.to_destroy[0].member_id, cancelled.member_id);
  EXPECT_EQ(next.to_destroy[0].state, MemberState::kDestroying);
  EXPECT_EQ(next.to_destroy[0].generation, cancelled.generation + 1);
  EXPECT_EQ(next.kind, Kind::kRefused);  // the doomed member still counts until it is retired
  ASSERT_TRUE(leases_.Retire(LeaseOf(Partition(), next.to_destroy[0])).ok());
  EXPECT_EQ(leases_.BeginRelease(cancelled).status().code(), Code::kConflict);
  Acquisition after = Acquire("run-b", 1);
  EXPECT_EQ(after.kind, Kind::kReserved);
  EXPECT_NE(after.lease.member_id, cancelled.member_id);
  EXPECT_EQ(ActiveCount(Partition()), 1);
}

TEST_P(PoolAcquireTest, AbandonedReservationIsRelaunchedWithTheSameToken) {
  Acquisition abandoned = Acquire("run-a");
  world_.clock().Advance(std::chrono::hours(2));
  Acquisition next = Acquire("run-b");
  EXPECT_EQ(next.kind, Kind::kRelaunch);
  EXPECT_EQ(next.lease.member_id, abandoned.lease.member_id);
  EXPECT_EQ(next.member.state, MemberState::kCreating);
  EXPECT_EQ(next.member.generation, 2);
  EXPECT_EQ(MemberLaunchToken(Partition(), next.member),
            MemberLaunchToken(Partition(), abandoned.member));
  // The slow first caller can no longer record its launch; the new owner can.
  EXPECT_EQ(
      leases_.RecordLaunch(abandoned.lease, "mvm-1", world_.clock().Now(), kMargin).status().code(),
      Code::kConflict);
  EXPECT_TRUE(leases_.RecordLaunch(next.lease, "mvm-1", world_.clock().Now(), kMargin).ok());
  EXPECT_EQ(ActiveCount(Partition()), 1);
}

TEST_P(PoolAcquireTest, AnotherOwnersUnexpiredLeaseOrTransitionIsNeverTouched) {
  Lease leased = Start("run-a");
  Lease suspending = Start("run-b");
  ASSERT_TRUE(leases_.BeginRelease(suspending).ok());
  Acquisition creating = Acquire("run-c");
  const auto before = std::make_tuple(Raw(leased), Raw(suspending), Raw(creating.lease));
  world_.clock().Advance(std::chrono::minutes(14));
  Acquisition d = Acquire("run-d");
  EXPECT_EQ(d.kind, Kind::kReserved);
  EXPECT_TRUE(d.to_destroy.empty());
  EXPECT_EQ(std::make_tuple(Raw(leased), Raw(suspending), Raw(creating.lease)), before);
  // A stop stuck past its transition deadline is taken over, still SUSPENDING, for the caller
  // to finish (its VM may be SUSPENDED) or destroy; the old stop's lease can no longer finish it.
  world_.clock().Advance(std::chrono::minutes(1));
  Acquisition e = Acquire("run-e");
  EXPECT_TRUE(e.to_destroy.empty());
  ASSERT_EQ(e.to_repair.size(), 1u);
  EXPECT_EQ(e.to_repair[0].member_id, suspending.member_id);
  EXPECT_EQ(e.to_repair[0].state, MemberState::kSuspending);
  EXPECT_EQ(e.to_repair[0].generation, suspending.generation + 1);
  EXPECT_EQ(leases_.FinishSuspend(suspending).status().code(), Code::kConflict);
  auto repaired = leases_.FinishSuspend(LeaseOf(Partition(), e.to_repair[0]));
  ASSERT_TRUE(repaired.ok()) << repaired.status().ToString();
  EXPECT_EQ(repaired->state, MemberState::kReady);
  EXPECT_EQ(Raw(leased), std::get<0>(before));
}

TEST_P(PoolAcquireTest, MissingOrTerminatedVmIsRetiredAndReplaced) {
  Lease lease = Start("run-a");
  Stop(lease);
  Acquisition reuse = Acquire("run-b");
  ASSERT_EQ(reuse.kind, Kind::kLeasedReady);
  const TimePoint now = world_.clock().Now();
  EXPECT_EQ(DecideForVm(reuse.member, VmObservation::kMissing, now), VmDecision::kRetire);
  EXPECT_EQ(DecideForVm(reuse.member, VmObservation::kTerminated, now), VmDecision::kRetire);
  EXPECT_EQ(DecideForVm(reuse.member, VmObservation::kFailed, now), VmDecision::kDestroy);
  EXPECT_EQ(DecideForVm(reuse.member, VmObservation::kSuspended, now), VmDecision::kUse);
  ASSERT_TRUE(leases_.Retire(reuse.lease).ok());
  EXPECT_EQ(ActiveCount(Partition()), 0);
  Acquisition replacement = Acquire("run-b");
  EXPECT_EQ(replacement.kind, Kind::kReserved);
  EXPECT_NE(replacement.lease.member_id, lease.member_id);
  EXPECT_EQ(ActiveCount(Partition()), 1);
}

TEST_P(PoolAcquireTest, StartJustBeforeAtAndAfterTheReuseDeadline) {
  const TimePoint launched = world_.clock().Now();
  const TimePoint deadline = launched + std::chrono::seconds(7'200 - kMargin);
  for (Duration offset : {Duration(-1000), Duration(0), Duration(1000)}) {
    PoolWorld& world = world_;
    PoolLeases& leases = leases_;
    world.NewPool();
    world.clock().Set(launched);
    Acquisition a = leases.Acquire(world.Request("run-a")).value();
    ASSERT_TRUE(leases.RecordLaunch(a.lease, "mvm-1", launched, kMargin).ok());
    ASSERT_TRUE(leases.BeginRelease(a.lease).ok());
    ASSERT_TRUE(leases.FinishSuspend(a.lease).ok());
    world.clock().Set(deadline + offset);
    Acquisition b = leases.Acquire(world.Request("run-b")).value();
    if (offset < Duration(0)) {
      EXPECT_EQ(b.kind, Kind::kLeasedReady);
      EXPECT_TRUE(b.to_destroy.empty());
    } else {
      EXPECT_EQ(b.kind, Kind::kReserved) << offset.count();
      ASSERT_EQ(b.to_destroy.size(), 1u);
      EXPECT_EQ(b.to_destroy[0].member_id, a.lease.member_id);
      EXPECT_NE(b.lease.member_id, a.lease.member_id);
    }
  }
}

TEST_P(PoolAcquireTest, MixedCapacitiesTwoAndThree) {
  Lease a = Start("run-a", 2);
  Lease b = Start("run-b", 2);
  Acquisition c2 = Acquire("run-c", 2);
  ASSERT_EQ(c2.kind, Kind::kRefused);
  EXPECT_EQ(c2.refusal.code(), Code::kQuotaExceeded);
  EXPECT_NE(c2.refusal.message().find("pool 'build-cache' is at capacity"), std::string::npos);
  EXPECT_NE(c2.refusal.message().find("server-capacity is 2"), std::string::npos);
  Lease c3 = Start("run-c", 3);
  EXPECT_EQ(ActiveCount(Partition()), 3);
  EXPECT_EQ(Acquire("run-d", 2).kind, Kind::kRefused);  // 2 neither shrinks nor terminates
  EXPECT_EQ(Acquire("run-d", 3).kind, Kind::kRefused);
  EXPECT_EQ(ActiveCount(Partition()), 3);
  for (const Lease& l : {a, b, c3}) EXPECT_EQ(Member(l).state, MemberState::kLeased);
  // Any available member is leased whatever the request's capacity.
  Stop(b);
  Acquisition d = Acquire("run-d", 1);
  EXPECT_EQ(d.kind, Kind::kLeasedReady);
  EXPECT_EQ(d.lease.member_id, b.member_id);
}

TEST_P(PoolAcquireTest, OmittedCapacityGrowsToObservedConcurrency) {
  for (int i = 0; i < 7; ++i) Start("run-" + std::to_string(i));
  EXPECT_EQ(ActiveCount(Partition()), 7);
  EXPECT_EQ(Acquire("run-x").kind, Kind::kReserved);
  EXPECT_EQ(leases_.Acquire(world_.Request("run-y", 0)).status().code(), Code::kInvalidArgument);
}

TEST_P(PoolAcquireTest, ImageVersionChangeNeverReusesTheOldVm) {
  Lease old = Start("run-a");
  Stop(old);
  Acquisition fresh = Acquire("run-b", 1, "8");
  EXPECT_EQ(fresh.kind, Kind::kReserved);
  EXPECT_NE(fresh.lease.partition, old.partition);
  EXPECT_EQ(Member(old).state, MemberState::kReady);  // the old key's pool is left alone
  // A member whose recorded image differs from its partition's is retired, never resumed.
  PoolRequest odd = world_.Request("run-c");
  odd.image_version = "9";
  Acquisition c = leases_.Acquire(odd).value();
  EXPECT_EQ(c.kind, Kind::kReserved);
  ASSERT_EQ(c.to_destroy.size(), 1u);
  EXPECT_EQ(c.to_destroy[0].member_id, old.member_id);
}

// ABA: between run-a's read and its write, run-b leases and releases the member (READY again, one
// generation later). run-a's stale write must fail, or two runs would own one generation.
TEST_P(PoolAcquireTest, MemberRetakenBetweenReadAndWriteIsNeverLeasedTwiceAtOneGeneration) {
  Lease parked = Start("run-0");
  Stop(parked);
  std::optional<Acquisition> b;
  world_.store().before_write = [&] {
    b = Acquire("run-b");
    Stop(b->lease);
  };
  Acquisition a = Acquire("run-a");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->lease.generation, parked.generation + 1);
  EXPECT_EQ(a.kind, Kind::kLeasedReady);
  EXPECT_EQ(a.lease.member_id, parked.member_id);
  EXPECT_EQ(a.lease.generation, parked.generation + 2);
  EXPECT_EQ(Member(a.lease).lease_owner, "run-a");
}

// Twenty starts, each interrupted before each of its writes by other starts, in an order drawn
// from a seeded random: at most five reservations, never two owners of one generation.
TEST_P(PoolAcquireTest, TwentyInterleavedStartsWithCapacityFiveNeverOvershoot) {
  for (uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
    PoolWorld& world = world_;
    PoolLeases& leases = leases_;
    world.NewPool();
    SeededRandom order(seed);
    int next = 0;
    std::vector<Acquisition> done;
    std::function<void()> start_one = [&] {
      if (next >= 20) return;
      std::string owner = "run-" + std::to_string(next++);
      auto a = leases.Acquire(world.Request(owner, 5));
      ASSERT_TRUE(a.ok()) << a.status().ToString();
      done.push_back(*a);
    };
    world.store().nested = true;
    world.store().before_write = [&] {
      if (order.Uniform(2) == 0) start_one();
    };
    while (next < 20) start_one();
    world.store().before_write = nullptr;
    world.store().nested = false;

    int reserved = 0;
    std::set<std::string> members;
    for (const Acquisition& a : done) {
      if (a.kind == Kind::kReserved) {
        ++reserved;
        EXPECT_TRUE(members.insert(a.lease.member_id).second) << "two owners of one member";
      } else {
        EXPECT_EQ(a.kind, Kind::kRefused);
        EXPECT_EQ(a.refusal.code(), Code::kQuotaExceeded) << a.refusal.ToString();
      }
    }
    EXPECT_EQ(done.size(), 20u);
    EXPECT_EQ(reserved, 5) << "seed " << seed;
    auto control = world.store().Get({world.Request("x").partition, kControlSortKey});
    EXPECT_EQ(ControlFromItem(control->value()).value().active_count, 5);
  }
}

// One source, two binaries: the local backends in action_test, DynamoDB on moto in
// pool_leases_moto_test.
#ifdef MVR_POOL_MOTO
INSTANTIATE_TEST_SUITE_P(Moto, PoolAcquireTest, ::testing::Values("dynamodb"),
                         [](const auto& info) { return info.param; });
#else
INSTANTIATE_TEST_SUITE_P(Backends, PoolAcquireTest, ::testing::Values("memory", "sqlite"),
                         [](const auto& info) { return info.param; });
#endif

}  // namespace
}  // namespace mvr::action
