#include "runnerset/runner_table.h"

#include <gtest/gtest.h>

#include "../fleet/fakes.h"
#include "store/memory_store.h"

namespace mvr::runnerset {
namespace {

using ClaimOutcome = RunnerTable::ClaimOutcome;

class RunnerTableTest : public ::testing::Test {
 protected:
  RunnerTable::Options Opts() {
    RunnerTable::Options o;
    o.takeover_after = Duration(60'000);
    return o;
  }
  MappingRow Row(const std::string& name, const std::string& vm) {
    MappingRow r;
    r.runner_name = name;
    r.runner_id = 5;
    r.microvm_id = vm;
    r.repository = "octo/app";
    r.job_id = 42;
    r.class_label = "mvr-small";
    r.times.received_ms = 1;
    return r;
  }

  fleet::testing::ManualSeam m_;
  store::MemoryStore store_{m_.clock};
  RunnerTable table_{store_, m_.seam, Opts()};
  store::Key key_ = RunnerTable::ClaimKey("octo/app", 42);
};

TEST_F(RunnerTableTest, ClaimKeyIsJobRepoAndId) { EXPECT_EQ(key_.partition, "job#octo/app#42"); }

TEST_F(RunnerTableTest, AFreshClaimIsBusyForOthersAndADuplicateOnceCommitted) {
  auto first = table_.ClaimJob("octo/app", 42);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->outcome, ClaimOutcome::kWon);
  EXPECT_EQ(first->attempt_token.size(), 32u);
  EXPECT_FALSE(first->taken_over);
  EXPECT_EQ(table_.ClaimJob("octo/app", 42)->outcome, ClaimOutcome::kBusy);
  ASSERT_TRUE(table_.Commit(key_, first->attempt_token, Row("mvr-x-42-a", "mvm-1")).ok());
  auto dup = table_.ClaimJob("octo/app", 42);
  EXPECT_EQ(dup->outcome, ClaimOutcome::kLaunched);
  EXPECT_EQ(dup->microvm_id, "mvm-1");
  // Even long after: a launched claim is never taken over.
  m_.clock.Advance(Duration(3'600'000));
  EXPECT_EQ(table_.ClaimJob("octo/app", 42)->outcome, ClaimOutcome::kLaunched);
  auto row = table_.GetMapping("mvr-x-42-a");
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ((*row)->microvm_id, "mvm-1");
  EXPECT_EQ((*row)->job_id, 42);
}

TEST_F(RunnerTableTest, AnOldClaimIsTakenOverWithWhatItsAttemptLeft) {
  auto dead = table_.ClaimJob("octo/app", 42);
  ASSERT_TRUE(table_.RecordRunner(key_, dead->attempt_token, 77).ok());
  ASSERT_TRUE(table_.RecordMicrovm(key_, dead->attempt_token, "mvm-dead").ok());
  m_.clock.Advance(Duration(59'000));
  EXPECT_EQ(table_.ClaimJob("octo/app", 42)->outcome, ClaimOutcome::kBusy);
  m_.clock.Advance(Duration(2'000));
  auto next = table_.ClaimJob("octo/app", 42);
  ASSERT_EQ(next->outcome, ClaimOutcome::kWon);
  ASSERT_TRUE(next->taken_over);
  EXPECT_EQ(next->taken_over->pending_runner_id, 77);
  EXPECT_EQ(next->taken_over->pending_microvm_id, "mvm-dead");
  EXPECT_NE(next->attempt_token, dead->attempt_token);
  // The new claim is fresh: a third attempt waits.
  EXPECT_EQ(table_.ClaimJob("octo/app", 42)->outcome, ClaimOutcome::kBusy);
}

TEST_F(RunnerTableTest, TheDeadAttemptCanNoLongerWriteOnceTakenOver) {
  auto dead = table_.ClaimJob("octo/app", 42);
  m_.clock.Advance(Duration(61'000));
  auto next = table_.ClaimJob("octo/app", 42);
  ASSERT_EQ(next->outcome, ClaimOutcome::kWon);
  EXPECT_TRUE(store::IsConditionFailed(table_.RecordMicrovm(key_, dead->attempt_token, "mvm-z")));
  Status late = table_.Commit(key_, dead->attempt_token, Row("mvr-x-42-dead", "mvm-z"));
  EXPECT_EQ(late.code(), Code::kConflict);
  // Nothing of the failed commit was written: the transaction is all or nothing.
  EXPECT_FALSE(*table_.GetMapping("mvr-x-42-dead"));
  // Its release is a no-op, and the successor still holds the claim.
  EXPECT_TRUE(table_.Release(key_, dead->attempt_token).ok());
  EXPECT_EQ(table_.ClaimJob("octo/app", 42)->outcome, ClaimOutcome::kBusy);
  EXPECT_TRUE(table_.Commit(key_, next->attempt_token, Row("mvr-x-42-b", "mvm-2")).ok());
}

TEST_F(RunnerTableTest, AReleasedClaimCanBeClaimedAgainAtOnce) {
  auto first = table_.ClaimJob("octo/app", 42);
  ASSERT_TRUE(table_.Release(key_, first->attempt_token).ok());
  auto again = table_.ClaimJob("octo/app", 42);
  EXPECT_EQ(again->outcome, ClaimOutcome::kWon);
  EXPECT_FALSE(again->taken_over);
}

TEST_F(RunnerTableTest, TerminateDeletesOnlyTheRowThatNamesTheVm) {
  auto c = table_.ClaimJob("octo/app", 42);
  ASSERT_TRUE(table_.Commit(key_, c->attempt_token, Row("mvr-x-42-a", "mvm-1")).ok());
  ASSERT_TRUE(table_.DeleteMapping("mvr-x-42-a", "mvm-other").ok());
  EXPECT_TRUE(*table_.GetMapping("mvr-x-42-a"));
  ASSERT_TRUE(table_.DeleteMapping("mvr-x-42-a", "mvm-1").ok());
  EXPECT_FALSE(*table_.GetMapping("mvr-x-42-a"));
  EXPECT_FALSE(*table_.GetMapping("mvr-x-unknown"));
}

}  // namespace
}  // namespace mvr::runnerset
