// The pooled warm start and stop (state-table + server name, lmvm2_ handles) over a stateful fake
// cloud, a memory store and a manual clock: reuse, fencing, capacity, retries, reconciliation and
// the reuse-deadline boundaries (seed 000, Phases 3 and 4).
#include <gtest/gtest.h>

#include <set>

#include "action/pool_keys.h"
#include "base/encoding.h"
#include "tests/action/pool_flow_fixture.h"

namespace mvr::action {
namespace {

using testing::PoolFlowTest;
TEST_F(PoolFlowTest, FirstStartLaunchesAMemberAndItsStopSuspendsIt) {
  StartResult a = Started("job-a");
  EXPECT_FALSE(a.warm_hit);
  ASSERT_EQ(a.server.rfind("lmvm2_", 0), 0u) << a.server;
  PoolHandle h = HandleOf(a);
  EXPECT_EQ(h.server_name, "build-cache");
  EXPECT_EQ(h.generation, 1);
  EXPECT_EQ(h.microvm_id, a.microvm_id);
  EXPECT_EQ(CountSince(0, "RunMicrovm"), 1);
  EXPECT_EQ(calls_[0].rfind("RunMicrovm mvr2-", 0), 0u) << calls_[0];  // the member's token
  EXPECT_EQ(MemberOf(a).state, MemberState::kLeased);
  for (const char* fixture : {kJitFixture, kTokenFixture, kProxyTokenFixture}) {
    EXPECT_EQ(Base64UrlDecode(a.server.substr(6)).value().find(fixture), std::string::npos);
  }
  Stopped(a);
  EXPECT_EQ(StateOf(a.microvm_id), aws::MicrovmState::kSuspended);
  EXPECT_EQ(MemberOf(a).state, MemberState::kReady);
  EXPECT_TRUE(runners_.empty());
}

TEST_F(PoolFlowTest, LaterRunReusesTheSuspendedMemberWithANewRunnerAndGeneration) {
  StartResult a = Started("job-a");
  Stopped(a);
  const size_t before = Calls();
  StartResult b = Started("job-b");
  EXPECT_TRUE(b.warm_hit);
  EXPECT_EQ(b.microvm_id, a.microvm_id);
  EXPECT_NE(b.runner_id, a.runner_id);
  EXPECT_NE(b.label, a.label);
  EXPECT_EQ(HandleOf(b).member_id, HandleOf(a).member_id);
  EXPECT_EQ(HandleOf(b).generation, HandleOf(a).generation + 1);
  EXPECT_EQ(CountSince(before, "RunMicrovm"), 0);
  EXPECT_EQ(CountSince(before, "ResumeMicrovm"), 1);
  Stopped(b);
}

TEST_F(PoolFlowTest, StaleHandleCannotStopOrSuspendANewerLease) {
  StartResult a = Started("job-a");
  Stopped(a);
  StartResult b = Started("job-b");
  ASSERT_EQ(b.microvm_id, a.microvm_id);
  const size_t before = Calls();
  Result<StopResult> stale = Stop(a.server);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().code(), Code::kConflict);
  EXPECT_NE(stale.status().message().find("stale server handle"), std::string::npos);
  EXPECT_TRUE(CallsSince(before).empty()) << CallsSince(before)[0];
  EXPECT_EQ(StateOf(b.microvm_id), aws::MicrovmState::kRunning);
  EXPECT_EQ(MemberOf(b).lease_id, HandleOf(b).lease_id);
  EXPECT_TRUE(runners_.count(b.runner_id));  // the newer job's runner is untouched
  Stopped(b);
}

TEST_F(PoolFlowTest, RetriedStopOfTheSameLeaseSaysItIsAlreadyReleased) {
  StartResult a = Started("job-a");
  Stopped(a);
  const size_t before = Calls();
  Stopped(a, "already released (pool member is READY)");
  EXPECT_EQ(CountSince(before, "SuspendMicrovm"), 0);
}

TEST_F(PoolFlowTest, PoolAtCapacityNamesServerAndCapacityAndLaunchesNothing) {
  StartResult a = Started("job-a", 1);
  const size_t before = Calls();
  Result<StartResult> b = Start("job-b", 1);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Code::kQuotaExceeded);
  EXPECT_NE(b.status().message().find("pool 'build-cache' is at capacity"), std::string::npos)
      << b.status().message();
  EXPECT_NE(b.status().message().find("server-capacity is 1"), std::string::npos);
  EXPECT_TRUE(CallsSince(before).empty());
  EXPECT_EQ(runners_.size(), 1u);  // b registered nothing
  Stopped(a);
}

TEST_F(PoolFlowTest, MixedCapacitiesTwoAndThreeNeitherShrinkNorBlockReuse) {
  StartResult a = Started("a", 2), b = Started("b", 2);
  EXPECT_EQ(Start("c", 2).status().code(), Code::kQuotaExceeded);
  StartResult d = Started("d", 3);  // the larger bound grows the pool to three
  EXPECT_EQ(ActiveCount(d), 3);
  EXPECT_EQ(Start("e", 3).status().code(), Code::kQuotaExceeded);
  Stopped(a);
  const size_t before = Calls();
  StartResult f = Started("f", 2);  // 3 members exist, but one is free: capacity is not asked
  EXPECT_TRUE(f.warm_hit);
  EXPECT_EQ(f.microvm_id, a.microvm_id);
  EXPECT_EQ(ActiveCount(f), 3);
  EXPECT_EQ(CountSince(before, "TerminateMicrovm"), 0);
  for (const StartResult* s : {&b, &d, &f}) Stopped(*s);
  EXPECT_EQ(ActiveCount(f), 3);  // stopping never shrinks the pool
}

TEST_F(PoolFlowTest, DifferentServerNamesAndRepositoriesAreSeparatePools) {
  StartResult a = Started("job-a", 1);
  StartCommand other_name = Command("job-b", 1);
  other_name.server = "other-cache";
  Result<StartResult> b = Start(other_name);
  ASSERT_TRUE(b.ok()) << b.status().ToString();  // capacity 1 of its own pool
  StartCommand other_repo = Command("job-c", 1);
  other_repo.identity.repository_id = "999";
  Result<StartResult> c = Start(other_repo);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::set<std::string> partitions = {HandleOf(a).server_key_hash, HandleOf(*b).server_key_hash,
                                      HandleOf(*c).server_key_hash};
  EXPECT_EQ(partitions.size(), 3u);
  EXPECT_EQ(launched_, 3);
  // A handle from another repository is refused by name before anything is touched.
  const size_t before = Calls();
  Result<StopResult> foreign = Stop(c->server);
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.status().message().find("repository"), std::string::npos);
  EXPECT_TRUE(CallsSince(before).empty());
  Stopped(a);
  Stopped(*b);
}

TEST_F(PoolFlowTest, OmittedCapacityGrowsToTheConcurrencyItMeets) {
  std::set<std::string> members;
  std::vector<StartResult> started;
  for (int i = 0; i < 6; ++i) {
    started.push_back(Started("job-" + std::to_string(i)));
    members.insert(HandleOf(started.back()).member_id);
  }
  EXPECT_EQ(members.size(), 6u);
  EXPECT_EQ(ActiveCount(started[0]), 6);
  for (const StartResult& s : started) Stopped(s);
}

TEST_F(PoolFlowTest, RetriedStartOfTheSameIdentityGetsItsLeaseBack) {
  jit_error_ = Transient("GitHub is down");
  Result<StartResult> failed = Start("job-a", 1);
  ASSERT_FALSE(failed.ok());
  // The reservation was launched before the registration failed; that VM was given back.
  jit_error_ = Status::Ok();
  StartResult retry = Started("job-a", 1);
  EXPECT_EQ(ActiveCount(retry), 1);
  const size_t before = Calls();
  // A rerun of the winning start: the same lease, no second member, no lifecycle call.
  Result<StartResult> rerun = Start("job-a", 1);
  ASSERT_FALSE(rerun.ok());
  EXPECT_NE(rerun.status().message().find("same identity"), std::string::npos)
      << rerun.status().message();
  EXPECT_EQ(CountSince(before, "RunMicrovm"), 0);
  EXPECT_EQ(CountSince(before, "SuspendMicrovm"), 0);
  EXPECT_EQ(MemberOf(retry).lease_id, HandleOf(retry).lease_id);
  EXPECT_EQ(StateOf(retry.microvm_id), aws::MicrovmState::kRunning);
  EXPECT_EQ(ActiveCount(retry), 1);
  Stopped(retry);
}

}  // namespace
}  // namespace mvr::action
