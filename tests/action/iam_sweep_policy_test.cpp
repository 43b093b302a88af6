// deploy/iam/action-sweep.json enforced (issue 52, item 8): the Action's ephemeral start runs
// under action.json with its own key, and `mvr sweep`'s flow under a second key that holds only
// the sweep policy, against the in-process MicroVMs service evaluating both (--iam-policies'
// evaluator). Under the whole sweep policy the sweep ends the finished VM; without its MicroVMs
// statement it is denied and leaves the VM and its record. (The table statement is enforced by
// DynamoDB only; the in-process state table here is a memory store.)
#include <gtest/gtest.h>

#include "action/ephemeral_records.h"
#include "action/sweep.h"
#include "tests/action/iam_policy_fixture.h"

namespace mvr::action {
namespace {

using nlohmann::json;

constexpr char kSweepKeyId[] = "AKIASWEEPEXAMPLE0001";
constexpr char kSweepSecret[] = "sweep-secret-key-for-the-iam-test-only-0001";

class SweepPolicyTest : public testing::ActionPolicyTest {
 protected:
  // The world with action.json for the Action's key and `sweep_policy` for the sweep's.
  void EnforceBoth(const json& sweep_policy) {
    json map = {{testing::kAccessKeyId, json::array({Policy()})},
                {kSweepKeyId, json::array({sweep_policy})}};
    auto parsed = emulate::microvms::MicrovmsIamPolicies::Parse(JsonText(map), "test", "us-east-1",
                                                                "123456789012");
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    policies_ = std::make_unique<emulate::microvms::MicrovmsIamPolicies>(std::move(*parsed));
    emulate::microvms::InProcessMicrovmsOptions o = Options();
    o.front.iam_policies = policies_.get();
    o.front.sigv4_keys[kSweepKeyId] = kSweepSecret;
    Rebuild(o);
    command_.execution_role_arn = testing::kExecutionRole;
    command_.server.clear();
    command_.state_table = "memory:";
    aws::MicrovmsClientOptions options;
    options.endpoint = {microvms_->api_url(), "us-east-1", "lambda", "test"};
    sweep_client_ = std::make_unique<aws::MicrovmsClient>(
        options, aws::MicrovmsClientDeps{vms_api_, sweep_credentials_, seam_});
  }

  json SweepPolicy() {
    auto policy = mvr::testing::LoadIamPolicy(MVR_SOURCE_DIR, "action-sweep.json",
                                              mvr::testing::DefaultIamValues());
    EXPECT_TRUE(policy.ok()) << policy.status().ToString();
    return policy.ok() ? *policy : json::object();
  }

  // An ephemeral start (Action's key) whose runner is then gone, and a sweep (sweep's key).
  SweepReport StartFinishAndSweep(std::string* microvm_id) {
    Result<StartResult> started = StartFlow(Deps()).Run(command_);
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    if (!started.ok()) return {};
    *microvm_id = started->microvm_id;
    EXPECT_TRUE(
        github_->DeleteRunner(github::RunnerScope::Parse("octo/app").value(), started->runner_id)
            .ok());
    SweepCommand sweep;
    sweep.endpoints = command_.endpoints;
    sweep.repository_id = "123";
    sweep.state_table = "memory:";
    sweep.min_age = Duration(0);
    sweep.timeout = std::chrono::seconds(30);
    ActionDeps deps = Deps();
    ActionDeps as_sweeper{deps.seam,      *sweep_client_, deps.github,    deps.http,
                          deps.on_secret, nullptr,        deps.pool_store};
    Result<SweepReport> report = SweepFlow(as_sweeper).Run(sweep);
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    return report.ok() ? *report : SweepReport{};
  }

  aws::StaticCredentialsProvider sweep_credentials_{
      aws::AwsCredentials{kSweepKeyId, Secret(kSweepSecret), Secret(""), std::nullopt, "test"}};
  std::unique_ptr<aws::MicrovmsClient> sweep_client_;
};

TEST_F(SweepPolicyTest, TheSweepPolicyIsEnoughToEndAFinishedVm) {
  pool_store_ = FreshStateTable();
  EnforceBoth(SweepPolicy());
  std::string microvm_id;
  SweepReport r = StartFinishAndSweep(&microvm_id);
  EXPECT_EQ(r.terminated, 1);
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(VmState(microvm_id), "TERMINATED");
}

TEST_F(SweepPolicyTest, WithoutItsMicrovmStatementTheSweepIsDeniedAndChangesNothing) {
  const json policy = SweepPolicy();
  ASSERT_EQ(mvr::testing::StatementSids(policy)[0], "ReadAndEndRecordedMicrovms");
  pool_store_ = FreshStateTable();
  EnforceBoth(mvr::testing::WithoutStatement(policy, 0));
  std::string microvm_id;
  SweepReport r = StartFinishAndSweep(&microvm_id);
  EXPECT_EQ(r.terminated, 0);
  EXPECT_EQ(r.kept, 1);  // GetMicrovm denied: the VM's state is unknown, so it is kept
  EXPECT_EQ(VmState(microvm_id), "RUNNING");
  EXPECT_TRUE(pool_store_->Get(EphemeralKey("123", microvm_id)).value().has_value());
}

}  // namespace
}  // namespace mvr::action
