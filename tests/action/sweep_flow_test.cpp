// `mvr sweep`'s flow against the in-process MicroVMs and GitHub models (issue 52, item 8): an
// ephemeral start with a state table records its VM (no secret), the sweep ends that VM once its
// runner is gone and removes the record, and never touches a VM without a record (a warm server,
// a runner set's VM), a VM whose runner is still registered, or anything when GitHub cannot be
// read. A stop removes the record itself.
#include "action/sweep.h"

#include <gtest/gtest.h>

#include "action/ephemeral_records.h"
#include "store/memory_store.h"
#include "tests/action/actions_env.h"
#include "tests/action/inprocess_world.h"

namespace mvr::action {
namespace {

class SweepFlowTest : public testing::InProcessActionTest {
 protected:
  SweepFlowTest() {
    pool_store_ = &store_;
    command_.state_table = "memory:";
    sweep_.endpoints = command_.endpoints;
    sweep_.repository_id = "123";
    sweep_.state_table = "memory:";
    sweep_.min_age = Duration(0);
  }

  SweepReport Sweep() {
    Result<SweepReport> r = SweepFlow(Deps()).Run(sweep_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : SweepReport{};
  }
  std::optional<store::Item> RecordOf(const std::string& microvm_id) {
    return store_.Get(EphemeralKey("123", microvm_id)).value();
  }
  void RemoveRunner(int64_t runner_id) {
    ASSERT_TRUE(
        github_->DeleteRunner(github::RunnerScope::Parse("octo/app").value(), runner_id).ok());
  }

  store::MemoryStore store_{clock_};
  SweepCommand sweep_;
};

TEST_F(SweepFlowTest, EndsTheRecordedVmWhoseRunnerIsGoneAndNothingElse) {
  const std::string warm_server = RunningVm();  // launched without a record, as a warm server is
  Result<StartResult> job = Start();
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::optional<store::Item> record = RecordOf(job->microvm_id);
  ASSERT_TRUE(record.has_value()) << "the ephemeral start recorded nothing";
  EXPECT_EQ(record->GetNumber("runnerId"), job->runner_id);
  const std::string dump = store::AttributesToJson(record->attributes).dump();
  EXPECT_EQ(dump.find(testing::kGithubToken), std::string::npos);
  for (const std::string& secret : secrets_) {
    EXPECT_EQ(dump.find(secret), std::string::npos) << "a secret in the record";
  }

  // Its runner is registered (the job may still run): kept.
  SweepReport first = Sweep();
  EXPECT_EQ(first.kept, 1);
  EXPECT_EQ(first.terminated, 0);
  EXPECT_EQ(VmState(job->microvm_id), "RUNNING");

  // The job is over (GitHub removes a JIT runner after its job); the VM ran on, no stop came.
  RemoveRunner(job->runner_id);
  SweepReport second = Sweep();
  EXPECT_EQ(second.terminated, 1) << (second.records.empty() ? ""
                                                             : second.records[0].decision.reason);
  EXPECT_EQ(VmState(job->microvm_id), "TERMINATED");
  EXPECT_FALSE(RecordOf(job->microvm_id).has_value());
  EXPECT_EQ(VmState(warm_server), "RUNNING") << "a VM without a record was touched";
  EXPECT_EQ(Calls("TerminateMicrovm"), 1);

  // Nothing left to do.
  SweepReport third = Sweep();
  EXPECT_TRUE(third.records.empty());
  ExpectNoSecrets(Status::Ok());
}

TEST_F(SweepFlowTest, DryRunAndAnUnreadableGithubChangeNothing) {
  Result<StartResult> job = Start();
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  RemoveRunner(job->runner_id);

  sweep_.dry_run = true;
  SweepReport dry = Sweep();
  ASSERT_EQ(dry.records.size(), 1u);
  EXPECT_EQ(dry.records[0].decision.action, SweepAction::kTerminate);
  EXPECT_EQ(VmState(job->microvm_id), "RUNNING");
  EXPECT_TRUE(RecordOf(job->microvm_id).has_value());

  // A runner listing that fails proves nothing: kept.
  sweep_.dry_run = false;
  github_api_.refusals.push_back({"GET", "/actions/runners", 503, "", "unavailable"});
  SweepReport blind = Sweep();
  EXPECT_EQ(blind.kept, 1);
  EXPECT_EQ(VmState(job->microvm_id), "RUNNING");
  EXPECT_EQ(Calls("TerminateMicrovm"), 0);
}

TEST_F(SweepFlowTest, AVmGoneAlreadyLosesItsRecordAndAStopRemovesItsOwn) {
  Result<StartResult> a = Start();
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  command_.identity.job = "second";
  Result<StartResult> b = Start();
  ASSERT_TRUE(b.ok()) << b.status().ToString();

  // a's stop ran: its record goes with its VM.
  StopCommand stop;
  stop.microvm_id = a->microvm_id;
  stop.runner_id = a->runner_id;
  stop.state_table = "memory:";
  stop.repository_id = "123";
  ASSERT_TRUE(Stop(stop).ok());
  EXPECT_FALSE(RecordOf(a->microvm_id).has_value());

  // b's VM ended some other way (its maximum duration, say): the sweep only forgets the record.
  ASSERT_TRUE(vms_->TerminateMicrovm(b->microvm_id).ok());
  SweepReport r = Sweep();
  EXPECT_EQ(r.forgotten, 1);
  EXPECT_FALSE(RecordOf(b->microvm_id).has_value());
}

TEST_F(SweepFlowTest, AStartThatFailsAfterTheLaunchLeavesNoRecord) {
  command_.startup_timeout = std::chrono::seconds(60);
  guest_.runners_connect = false;
  Result<StartResult> r = Start();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("removed its state-table record"), std::string::npos)
      << r.status().ToString();
  EXPECT_TRUE(store_.QueryAll({EphemeralPartition("123"), "", 100, ""}).value().empty());
}

// The sweep's inputs, as action.yml passes them (mode: sweep gets every input of the action):
// defaults, and each bad value refused by name with what to give.
TEST(SweepInputsTest, DefaultsAndBadValuesAreNamed) {
  MapEnvironment env = testing::ActionsEnv();
  env.Set("INPUT_STATE-TABLE", "dynamodb:mvr-state");
  env.Set("INPUT_STARTUP-TIMEOUT-SECONDS", "300");  // another mode's input: ignored
  Result<SweepCommand> c = ParseSweep(InputReader(env, {}));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->state_table, "dynamodb:mvr-state");
  EXPECT_EQ(c->repository_id, "123");
  EXPECT_EQ(c->endpoints.repository, "octo/app");
  EXPECT_EQ(c->min_age, std::chrono::seconds(120));
  EXPECT_EQ(c->timeout, std::chrono::seconds(600));
  EXPECT_FALSE(c->dry_run);
  c = ParseSweep(InputReader(env, {{"min-age-seconds", "0"}, {"dry-run", "true"}}));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->min_age, Duration(0));
  EXPECT_TRUE(c->dry_run);

  auto refused = [&](MapEnvironment e, std::map<std::string, std::string> flags,
                     const std::string& needle) {
    Result<SweepCommand> r = ParseSweep(InputReader(e, std::move(flags)));
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
  };
  refused(env, {{"dry-run", "yes"}}, "'dry-run' must be true or false");
  refused(env, {{"min-age-seconds", "-1"}}, "'min-age-seconds' must be between 0 and 28800");
  refused(env, {{"state-table", "postgres:x"}}, "'state-table' must be dynamodb:TABLE");
  MapEnvironment no_table = env;
  no_table.Set("INPUT_STATE-TABLE", "");
  refused(no_table, {}, "'state-table' is required");
  MapEnvironment no_id = env;
  no_id.Set("GITHUB_REPOSITORY_ID", "");
  refused(no_id, {}, "--repository-id");
  MapEnvironment no_token = env;
  no_token.Set("INPUT_GITHUB-TOKEN", "");
  refused(no_token, {}, "'github-token' is required");
}

}  // namespace
}  // namespace mvr::action
