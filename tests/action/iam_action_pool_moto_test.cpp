// deploy/iam/action-pool.json enforced by moto: the Action's pooled start and stop flows on a
// DynamoDB state table served by moto with IAM enforced (tests/support/moto_iam.h), as a user
// that holds only action-pool.json, while the in-process MicroVMs service enforces action.json.
// The whole policy passes; without its statement the pooled start is denied; and the policy as
// it was before issue 29 (no dynamodb:Query) is denied at the first call of every pooled start.
// The same table holds the records of ephemeral starts (issue 52, item 8): a start and stop
// under action-pool.json write and remove them, and `mvr sweep`'s flow reads and removes them as
// a user holding only action-sweep.json, and is denied without its table statement.
#include <gtest/gtest.h>

#include "action/ephemeral_records.h"
#include "action/sweep.h"
#include "aws/services/dynamodb.h"
#include "aws/signing/endpoints.h"
#include "base/environment.h"
#include "store/dynamodb_store.h"
#include "support/moto_iam.h"
#include "tests/action/iam_policy_fixture.h"

namespace mvr::action {
namespace {

using nlohmann::json;

class ActionPoolMotoPolicyTest : public testing::ActionPolicyTest {
 protected:
  void SetUp() override {
    MVR_START_MOTO_WITH_OR_SKIP(moto_, mvr::testing::EnforcingMotoOptions(MVR_SOURCE_DIR));
    mvr::testing::MotoIam iam(moto_->url());
    // The table is made by whoever deploys (bootstrap), not by the Action.
    ASSERT_TRUE(Table(admin_).CreateTable().ok());
    auto pool = mvr::testing::LoadIamPolicy(MVR_SOURCE_DIR, "action-pool.json",
                                            mvr::testing::DefaultIamValues());
    ASSERT_TRUE(pool.ok()) << pool.status().ToString();
    pool_policy_ = *pool;
    // One user per variant of the policy: whole, without its statement, without Query.
    json no_query = pool_policy_;
    auto& actions = no_query["Statement"][0]["Action"];
    actions.erase(std::find(actions.begin(), actions.end(), "dynamodb:Query"));
    for (const auto& [name, policy] : std::vector<std::pair<std::string, json>>{
             {"whole", pool_policy_},
             {"without-statement", mvr::testing::WithoutStatement(pool_policy_, 0)},
             {"without-query", no_query}}) {
      auto key = iam.CreateUser("action-pool-" + name, policy);
      ASSERT_TRUE(key.ok()) << key.status().ToString();
      keys_[name] = *key;
    }
    auto sweep = mvr::testing::LoadIamPolicy(MVR_SOURCE_DIR, "action-sweep.json",
                                             mvr::testing::DefaultIamValues());
    ASSERT_TRUE(sweep.ok()) << sweep.status().ToString();
    ASSERT_EQ(mvr::testing::StatementSids(*sweep)[1], "ReadAndRemoveRecords");
    for (const auto& [name, policy] : std::vector<std::pair<std::string, json>>{
             {"sweep", *sweep},
             {"sweep-without-table", mvr::testing::WithoutStatement(*sweep, 1)}}) {
      auto key = iam.CreateUser(name, policy);
      ASSERT_TRUE(key.ok()) << key.status().ToString();
      keys_[name] = *key;
    }
    ASSERT_TRUE(iam.Enforce().ok());
  }

  store::DynamoDbStore& Table(const aws::AwsCredentials& creds) {
    MapEnvironment env({{"AWS_REGION", "us-east-1"}, {"AWS_ENDPOINT_URL", moto_->url()}});
    auto endpoint = aws::ResolveEndpoint(aws::AwsService::kDynamoDb, env, aws::SharedConfig());
    creds_.push_back(std::make_unique<aws::StaticCredentialsProvider>(creds));
    clients_.push_back(
        std::make_unique<aws::DynamoDbClient>(*endpoint, moto_http_, *creds_.back(), seam_));
    tables_.push_back(
        std::make_unique<store::DynamoDbStore>(*clients_.back(), "mvr-state", clock_));
    return *tables_.back();
  }

  // The pooled scenario as the user `name`, on a pool of its own in the one table.
  Status PooledAs(const std::string& name) {
    pool_store_ = &Table(keys_.at(name));
    Enforce(Policy());
    command_.server = "pool-" + name;
    return Pooled();
  }

  // The sweep's flow with its table reached as the user `sweeper` (its MicroVMs calls go through
  // the in-process service under action.json; SweepPolicyTest enforces action-sweep.json there).
  Result<SweepReport> SweepAs(const std::string& sweeper) {
    SweepCommand sweep;
    sweep.endpoints = command_.endpoints;
    sweep.repository_id = "123";
    sweep.state_table = "dynamodb:mvr-state";
    sweep.min_age = Duration(0);
    pool_store_ = &Table(keys_.at(sweeper));
    return SweepFlow(Deps()).Run(sweep);
  }
  bool Recorded(const std::string& microvm_id) {
    return Table(keys_.at("whole")).Get(EphemeralKey("123", microvm_id)).value().has_value();
  }

  std::unique_ptr<mvr::testing::MotoServer> moto_;
  http::CurlHttpClient moto_http_;
  aws::AwsCredentials admin_{"AKIDADMIN", Secret("admin-secret"), Secret(), {}, "test"};
  std::map<std::string, aws::AwsCredentials> keys_;
  json pool_policy_;
  std::vector<std::unique_ptr<aws::StaticCredentialsProvider>> creds_;
  std::vector<std::unique_ptr<aws::DynamoDbClient>> clients_;
  std::vector<std::unique_ptr<store::DynamoDbStore>> tables_;
};

TEST_F(ActionPoolMotoPolicyTest, PooledStartsAndStopsPassUnderTheWholePolicy) {
  Status s = PooledAs("whole");
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_F(ActionPoolMotoPolicyTest, WithoutItsStatementThePooledStartIsDenied) {
  ASSERT_EQ(mvr::testing::StatementSids(pool_policy_), std::vector<std::string>{"PoolTableItems"});
  Status s = PooledAs("without-statement");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("AccessDenied"), std::string::npos) << s.ToString();
  EXPECT_TRUE(VmIds().empty());  // denied before anything was launched
}

// Regression (issue 29): action-pool.json lacked dynamodb:Query, the first call of every pooled
// start (PoolLeases lists the pool with QueryAll), so on AWS every pooled start failed.
TEST_F(ActionPoolMotoPolicyTest, ThePolicyWithoutQueryDeniesEveryPooledStart) {
  Status s = PooledAs("without-query");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("dynamodb:Query"), std::string::npos) << s.ToString();
  EXPECT_TRUE(VmIds().empty());
}

// One test (one moto start): the records of ephemeral starts in the pools' table, written and
// removed under action-pool.json; the sweep denied without its table statement, then ending the
// finished VM under the whole action-sweep.json.
TEST_F(ActionPoolMotoPolicyTest, EphemeralRecordsAndTheSweepUnderTheirPolicies) {
  pool_store_ = &Table(keys_.at("whole"));
  Enforce(Policy());
  command_.server.clear();
  command_.state_table = "dynamodb:mvr-state";
  Result<StartResult> stopped = StartFlow(Deps()).Run(command_);
  ASSERT_TRUE(stopped.ok()) << stopped.status().ToString();
  EXPECT_TRUE(Recorded(stopped->microvm_id));
  StopCommand stop;
  stop.microvm_id = stopped->microvm_id;
  stop.state_table = "dynamodb:mvr-state";
  stop.repository_id = "123";
  ASSERT_TRUE(InProcessActionTest::Stop(stop).ok());
  EXPECT_FALSE(Recorded(stopped->microvm_id)) << "the stop did not remove its record";

  command_.identity.job = "never-stopped";
  Result<StartResult> left = StartFlow(Deps()).Run(command_);
  ASSERT_TRUE(left.ok()) << left.status().ToString();
  ASSERT_TRUE(
      github_->DeleteRunner(github::RunnerScope::Parse("octo/app").value(), left->runner_id).ok());

  Result<SweepReport> denied = SweepAs("sweep-without-table");
  ASSERT_FALSE(denied.ok());
  EXPECT_NE(denied.status().message().find("dynamodb:Query"), std::string::npos)
      << denied.status().ToString();
  EXPECT_EQ(VmState(left->microvm_id), "RUNNING");

  Result<SweepReport> swept = SweepAs("sweep");
  ASSERT_TRUE(swept.ok()) << swept.status().ToString();
  EXPECT_EQ(swept->terminated, 1);
  EXPECT_EQ(swept->failed, 0);
  EXPECT_EQ(VmState(left->microvm_id), "TERMINATED");
  EXPECT_FALSE(Recorded(left->microvm_id));
}

}  // namespace
}  // namespace mvr::action
