// The pooled warm start and stop (state-table + server name, lmvm2_ handles) against the in-process
// MicroVMs and GitHub models, a memory store and a manual clock: reuse, fencing, capacity, retries
// and separate pools (seed 000, Phases 3 and 4). Each test states what the models and the table
// hold afterwards.
#include <gtest/gtest.h>

#include <set>

#include "action/pool_keys.h"
#include "base/encoding.h"
#include "supervisor/run_payload.h"
#include "support/store_text.h"
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
  EXPECT_EQ(VmIds(), std::vector<std::string>{a.microvm_id});
  EXPECT_EQ(VmState(a.microvm_id), "RUNNING");
  for (const auto& call : microvms_->calls()) {  // launched under the member's token
    if (call.operation == "RunMicrovm") {
      EXPECT_EQ(call.client_token.rfind("mvr2-", 0), 0u);
    }
  }
  EXPECT_EQ(MemberOf(a).state, MemberState::kLeased);
  EXPECT_TRUE(RunnerExists(a.runner_id));
  std::vector<std::string> secrets = secrets_;
  secrets.push_back(testing::kGithubToken);
  ASSERT_GE(secrets.size(), 3u);  // the JIT config and the proxy token were met
  for (const std::string& secret : secrets) {
    EXPECT_EQ(Base64UrlDecode(a.server.substr(6)).value().find(secret), std::string::npos);
  }
  Stopped(a);
  EXPECT_EQ(VmState(a.microvm_id), "SUSPENDED");
  EXPECT_EQ(MemberOf(a).state, MemberState::kReady);
  EXPECT_TRUE(Runners().empty());
}

TEST_F(PoolFlowTest, LaterRunReusesTheSuspendedMemberWithANewRunnerAndGeneration) {
  StartResult a = Started("job-a");
  Stopped(a);
  StartResult b = Started("job-b");
  EXPECT_TRUE(b.warm_hit);
  EXPECT_EQ(b.microvm_id, a.microvm_id);
  EXPECT_NE(b.runner_id, a.runner_id);
  EXPECT_NE(b.label, a.label);
  EXPECT_EQ(HandleOf(b).member_id, HandleOf(a).member_id);
  EXPECT_EQ(HandleOf(b).generation, HandleOf(a).generation + 1);
  EXPECT_EQ(VmIds(), std::vector<std::string>{a.microvm_id});  // resumed, nothing launched
  EXPECT_EQ(VmState(b.microvm_id), "RUNNING");
  ASSERT_EQ(Runners().size(), 1u);
  EXPECT_EQ(Runners()[0].id, b.runner_id);
  EXPECT_TRUE(Runners()[0].online);
  Stopped(b);
}

// A later run delivers to the member with the nonce it was launched with, derived again from the
// member's launch token; no nonce is in the table or the handles.
TEST_F(PoolFlowTest, EveryRunDeliversTheMembersLaunchNonceWhichNoTableItemOrHandleHolds) {
  StartResult a = Started("job-a");
  ASSERT_EQ(guest_.payloads.size(), 1u);
  const std::string nonce = guest_.payloads[0].control_nonce.Reveal();
  ASSERT_TRUE(supervisor::CheckControlNonce(guest_.payloads[0].control_nonce).ok());
  Stopped(a);
  StartResult b = Started("job-b");
  ASSERT_EQ(b.microvm_id, a.microvm_id);
  EXPECT_EQ(guest_.control_nonces, (std::vector<std::string>{nonce, nonce}));
  EXPECT_EQ(testing_support::StoreText(store_).find(nonce), std::string::npos);
  for (const StartResult* r : {&a, &b}) {
    EXPECT_EQ(Base64UrlDecode(r->server.substr(6)).value().find(nonce), std::string::npos);
  }
  Stopped(b);
}

TEST_F(PoolFlowTest, StaleHandleCannotStopOrSuspendANewerLease) {
  StartResult a = Started("job-a");
  Stopped(a);
  StartResult b = Started("job-b");
  ASSERT_EQ(b.microvm_id, a.microvm_id);
  Result<StopResult> stale = Stop(a.server);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().code(), Code::kConflict);
  EXPECT_NE(stale.status().message().find("stale server handle"), std::string::npos);
  EXPECT_EQ(VmState(b.microvm_id), "RUNNING");
  EXPECT_EQ(MemberOf(b).lease_id, HandleOf(b).lease_id);
  EXPECT_TRUE(RunnerExists(b.runner_id));  // the newer job's runner is untouched
  Stopped(b);
}

TEST_F(PoolFlowTest, RetriedStopOfTheSameLeaseSaysItIsAlreadyReleased) {
  StartResult a = Started("job-a");
  Stopped(a);
  const int suspends = Calls("SuspendMicrovm");
  Stopped(a, "already released (pool member is READY)");
  EXPECT_EQ(Calls("SuspendMicrovm"), suspends);
  EXPECT_EQ(VmState(a.microvm_id), "SUSPENDED");
  EXPECT_EQ(MemberOf(a).state, MemberState::kReady);
}

TEST_F(PoolFlowTest, PoolAtCapacityNamesServerAndCapacityAndLaunchesNothing) {
  StartResult a = Started("job-a", 1);
  Result<StartResult> b = Start("job-b", 1);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Code::kQuotaExceeded);
  EXPECT_NE(b.status().message().find("pool 'build-cache' is at capacity"), std::string::npos)
      << b.status().message();
  EXPECT_NE(b.status().message().find("server-capacity is 1"), std::string::npos);
  EXPECT_EQ(VmIds(), std::vector<std::string>{a.microvm_id});  // b launched nothing
  ASSERT_EQ(Runners().size(), 1u);                             // and registered nothing
  EXPECT_EQ(Runners()[0].id, a.runner_id);
  Stopped(a);
}

TEST_F(PoolFlowTest, MixedCapacitiesTwoAndThreeNeitherShrinkNorBlockReuse) {
  StartResult a = Started("a", 2), b = Started("b", 2);
  EXPECT_EQ(Start("c", 2).status().code(), Code::kQuotaExceeded);
  StartResult d = Started("d", 3);  // the larger bound grows the pool to three
  EXPECT_EQ(ActiveCount(d), 3);
  EXPECT_EQ(Start("e", 3).status().code(), Code::kQuotaExceeded);
  Stopped(a);
  StartResult f = Started("f", 2);  // 3 members exist, but one is free: capacity is not asked
  EXPECT_TRUE(f.warm_hit);
  EXPECT_EQ(f.microvm_id, a.microvm_id);
  EXPECT_EQ(ActiveCount(f), 3);
  for (const StartResult* s : {&b, &d, &f}) Stopped(*s);
  EXPECT_EQ(ActiveCount(f), 3);  // stopping never shrinks the pool
  EXPECT_EQ(VmIds().size(), 3u);
  for (const std::string& id : VmIds()) EXPECT_EQ(VmState(id), "SUSPENDED") << id;
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
  EXPECT_EQ(VmIds().size(), 3u);
  // A handle from another repository is refused by name before anything is touched.
  Result<StopResult> foreign = Stop(c->server);
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.status().message().find("repository"), std::string::npos);
  EXPECT_EQ(VmState(c->microvm_id), "RUNNING");
  EXPECT_TRUE(RunnerExists(c->runner_id));
  EXPECT_EQ(MemberOf(*c).state, MemberState::kLeased);
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
  EXPECT_EQ(VmIds().size(), 6u);
  for (const StartResult& s : started) Stopped(s);
}

TEST_F(PoolFlowTest, RetriedStartOfTheSameIdentityGetsItsLeaseBack) {
  RefuseRegistration(503, "GitHub is down");
  Result<StartResult> failed = Start("job-a", 1);
  ASSERT_FALSE(failed.ok());
  // The reservation was launched before the registration failed; that VM was given back.
  ASSERT_EQ(VmIds().size(), 1u);
  const std::string first = VmIds()[0];
  EXPECT_EQ(VmState(first), "SUSPENDED");
  Allow();
  StartResult retry = Started("job-a", 1);
  EXPECT_EQ(retry.microvm_id, first);
  EXPECT_EQ(ActiveCount(retry), 1);
  // A rerun of the winning start: the same lease, no second member, its VM left running.
  Result<StartResult> rerun = Start("job-a", 1);
  ASSERT_FALSE(rerun.ok());
  EXPECT_NE(rerun.status().message().find("same identity"), std::string::npos)
      << rerun.status().message();
  EXPECT_EQ(VmIds(), std::vector<std::string>{first});
  EXPECT_EQ(MemberOf(retry).lease_id, HandleOf(retry).lease_id);
  EXPECT_EQ(VmState(retry.microvm_id), "RUNNING");
  EXPECT_TRUE(RunnerExists(retry.runner_id));
  EXPECT_EQ(ActiveCount(retry), 1);
  Stopped(retry);
}

}  // namespace
}  // namespace mvr::action
