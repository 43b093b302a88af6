#include "runnerset/table/runner_table.h"

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

// The status page's history: newest first whatever order the writes came in, bounded by the
// limit asked for, every field back as written, and gone after the history TTL.
TEST_F(RunnerTableTest, JobRecordsComeBackNewestFirstAndExpire) {
  for (int64_t ended : {3000, 1000, 2000}) {
    JobRecord r;
    r.repository = "octo/app";
    r.job_id = ended;
    r.job_name = "<b>build</b>";
    r.class_label = "mvr-small";
    r.path = "warm";
    r.runner_name = "mvr-demo-" + std::to_string(ended);
    r.times.received_ms = ended - 500;
    r.started_ms = ended - 100;
    r.ended_ms = ended;
    r.conclusion = "success";
    r.vm = {ended - 450, ended - 9000, ended - 8000, ended + 20};
    r.image_version = "7";
    ASSERT_TRUE(table_.PutJobRecord(r).ok());
  }
  Result<std::vector<JobRecord>> got = table_.RecentJobRecords(2);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].job_id, 3000);
  EXPECT_EQ((*got)[1].job_id, 2000);
  EXPECT_EQ((*got)[0].job_name, "<b>build</b>");
  EXPECT_EQ((*got)[0].path, "warm");
  EXPECT_EQ((*got)[0].times.received_ms, 2500);
  EXPECT_EQ((*got)[0].started_ms, 2900);
  EXPECT_EQ((*got)[0].conclusion, "success");
  EXPECT_EQ((*got)[0].vm.running_ms, 2550);
  EXPECT_EQ((*got)[0].vm.member_created_ms, -6000);
  EXPECT_EQ((*got)[0].vm.member_parked_ms, -5000);
  EXPECT_EQ((*got)[0].vm.ended_ms, 3020);
  EXPECT_EQ((*got)[0].image_version, "7");
  m_.clock.Advance(Opts().history_ttl + Duration(1000));
  got = table_.RecentJobRecords(10);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty()) << "records outlived the history TTL";
}

TEST_F(RunnerTableTest, SweepsComeBackNewestFirstWithTheirCountersAndErrors) {
  for (int64_t started : {10'000, 20'000}) {
    SweepRecord s;
    s.started_ms = started;
    s.duration_ms = 7;
    s.counters = {{"vms_listed", started / 1000}};
    s.errors = {"listing the runners: \"throttled\""};
    ASSERT_TRUE(table_.PutSweep(s).ok());
  }
  Result<std::vector<SweepRecord>> got = table_.RecentSweeps(10);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].started_ms, 20'000);
  ASSERT_EQ((*got)[0].counters.size(), 1u);
  EXPECT_EQ((*got)[0].counters[0].second, 20);
  ASSERT_EQ((*got)[1].errors.size(), 1u);
  EXPECT_EQ((*got)[1].errors[0], "listing the runners: \"throttled\"");
}

}  // namespace
}  // namespace mvr::runnerset
