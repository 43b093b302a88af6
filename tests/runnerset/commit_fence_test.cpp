// The launch's commit fence (JobStateLedger::Fence in RunnerTable::Commit's transaction) on each
// store backend: the start or end of the job a launch serves (another job its runner's chain left
// waiting), recorded after the launch decided, refuses the commit, whatever launcher recorded it,
// with nothing of the commit written. Built twice: the local backends
// (memory, SQLite) in the unit suite, DynamoDB on moto's server (MVR_FENCE_MOTO; skips without
// moto_server), where the fence is a TransactWriteItems ConditionCheck.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "../fleet/fakes.h"
#include "runnerset/jobs/job_state.h"
#include "runnerset/table/runner_table.h"
#include "store/store_backends.h"

namespace mvr::runnerset {
namespace {

constexpr int64_t kJob = 42;

// One backend of each kind for the whole suite: moto's server takes seconds to start, so its
// tests share one table, each in its own repository.
store::testing::StoreBackend& Backend(const std::string& kind) {
  static std::map<std::string, std::unique_ptr<store::testing::StoreBackend>> backends;
  auto& b = backends[kind];
  if (!b) b = std::make_unique<store::testing::StoreBackend>(kind);
  return *b;
}

class JobStateFenceStoreTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (!backend_.skip_reason().empty()) GTEST_SKIP() << backend_.skip_reason();
    ASSERT_TRUE(backend_.error().empty()) << backend_.error();
    table_ = std::make_unique<RunnerTable>(*backend_.store(), m_.seam, RunnerTable::Options{});
    ledger_ = std::make_unique<JobStateLedger>(*backend_.store(), m_.clock);
  }
  MappingRow Row() {
    MappingRow r;
    r.runner_name = runner_;
    r.runner_id = 5;
    r.microvm_id = "mvm-1";
    r.repository = kRepo;
    r.job_id = kJob;
    r.class_label = "mvr-small";
    return r;
  }
  // Claims job 42; the token.
  std::string Win() {
    auto c = table_->ClaimJob(kRepo, kJob);
    EXPECT_TRUE(c.ok() && c->outcome == RunnerTable::ClaimOutcome::kWon);
    return c.ok() ? c->attempt_token : std::string();
  }
  runnerset::Claim ClaimNow() { return table_->GetClaim(kRepo, kJob).value().value(); }
  void Record(int64_t job, JobAction action) {
    ASSERT_TRUE(ledger_->Apply(kRepo, job, action).ok());
  }

  store::testing::StoreBackend& backend_ = Backend(GetParam());
  const std::string repo_ =
      std::string("octo/") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const char* const kRepo = repo_.c_str();
  const std::string runner_ = "mvr-x-42-" + repo_.substr(5);
  fleet::testing::ManualSeam m_;
  std::unique_ptr<RunnerTable> table_;
  std::unique_ptr<JobStateLedger> ledger_;
  const store::Key key_ = RunnerTable::ClaimKey(kRepo, kJob);
};

// A late queued of job 42 serving job 7, which its runner's chain left waiting: job 7's end is
// recorded (its `in_progress` not yet) between the launch's decision and its commit.
TEST_P(JobStateFenceStoreTest, ACompletedRecordedAfterTheDecisionRefusesTheCommit) {
  Record(kJob, JobAction::kCompleted);
  Record(7, JobAction::kQueued);
  const std::string token = Win();
  Record(7, JobAction::kCompleted);  // another launcher handles job 7's completed
  Status s =
      table_->Commit(key_, token, Row(), {JobStateLedger::Fence(kRepo, 7, JobPhase::kInProgress)},
                     JobRef{kRepo, 7});
  ASSERT_EQ(s.code(), Code::kConflict) << s.ToString();
  EXPECT_EQ(s.error_type(), RunnerTable::kCheckFailed) << s.ToString();
  EXPECT_NE(s.message().find("JOBSTATE#" + repo_ + "#7"), std::string::npos) << s.message();
  EXPECT_TRUE(ClaimNow().microvm_id.empty()) << "the claim is not stamped";
  EXPECT_EQ(ClaimNow().serves_job_id, 0) << "nor names the job";
  EXPECT_FALSE(table_->GetMapping(runner_).value()) << "no mapping row";
  // Still this attempt's: the launch undoes what it made and releases it.
  EXPECT_TRUE(table_->Release(key_, token).ok());
  EXPECT_FALSE(table_->GetClaim(kRepo, kJob).value());
}

// The fence is on the served job alone: the intent's own job recorded completed does not refuse.
TEST_P(JobStateFenceStoreTest, AJobStillQueuedCommitsWhateverTheIntentsOwnJob) {
  Record(7, JobAction::kQueued);
  const std::string token = Win();
  Record(kJob, JobAction::kCompleted);
  ASSERT_TRUE(table_
                  ->Commit(key_, token, Row(),
                           {JobStateLedger::Fence(kRepo, 7, JobPhase::kInProgress)},
                           JobRef{kRepo, 7})
                  .ok());
  EXPECT_EQ(ClaimNow().microvm_id, "mvm-1");
}

TEST_P(JobStateFenceStoreTest, NoRecordedStateIsBelowEveryPhase) {
  const std::string token = Win();
  ASSERT_TRUE(
      table_
          ->Commit(key_, token, Row(), {JobStateLedger::Fence(kRepo, kJob, JobPhase::kInProgress)})
          .ok());
}

// A late queued of job 42 (completed) serving job 7, which its runner's chain left waiting: the
// fence is on job 7, stopped once it is recorded in progress; the claim names it.
TEST_P(JobStateFenceStoreTest, ALaunchServingAnotherJobIsFencedOnThatJob) {
  Record(kJob, JobAction::kCompleted);
  Record(7, JobAction::kQueued);
  const std::string token = Win();
  const store::WriteOp fence = JobStateLedger::Fence(kRepo, 7, JobPhase::kInProgress);
  Record(7, JobAction::kInProgress);
  Status refused = table_->Commit(key_, token, Row(), {fence}, JobRef{kRepo, 7});
  EXPECT_EQ(refused.error_type(), RunnerTable::kCheckFailed) << refused.ToString();
  EXPECT_TRUE(ClaimNow().microvm_id.empty());

  // Job 8 still waits: the launch commits and its claim names the job it serves.
  Record(8, JobAction::kQueued);
  ASSERT_TRUE(table_
                  ->Commit(key_, token, Row(),
                           {JobStateLedger::Fence(kRepo, 8, JobPhase::kInProgress)},
                           JobRef{kRepo, 8})
                  .ok());
  const runnerset::Claim c = ClaimNow();
  EXPECT_EQ(c.microvm_id, "mvm-1");
  EXPECT_EQ(c.serves_repository, kRepo);
  EXPECT_EQ(c.serves_job_id, 8);
}

#ifdef MVR_FENCE_MOTO
INSTANTIATE_TEST_SUITE_P(Moto, JobStateFenceStoreTest, ::testing::Values("dynamodb"),
                         [](const auto& info) { return std::string(info.param); });
#else
INSTANTIATE_TEST_SUITE_P(Backends, JobStateFenceStoreTest, ::testing::Values("memory", "sqlite"),
                         [](const auto& info) { return std::string(info.param); });
#endif

}  // namespace
}  // namespace mvr::runnerset
