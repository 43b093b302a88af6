// The DynamoDB and SQS clients against moto's server (label "moto"), and SigV4 against moto with
// its IAM signature checking switched on. Each test starts its own moto_server on a free loopback
// port (ctest runs one test per process) and stops it by pid; without moto_server they skip.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <memory>

#include "aws/services/dynamodb.h"
#include "aws/services/sqs.h"
#include "aws/signing/endpoints.h"
#include "aws/signing/sigv4.h"
#include "fake_http.h"
#include "http/curl_client.h"
#include "support/moto.h"

namespace mvr::aws {
namespace {

using namespace ddb;  // NOLINT
using testing::EnvMap;

AwsCredentials Creds(const std::string& id, const std::string& secret) {
  AwsCredentials c;
  c.access_key_id = id;
  c.secret_access_key = Secret(secret);
  return c;
}

class MotoTest : public ::testing::Test {
 protected:
  void SetUp() override { StartMoto(mvr::testing::MotoServer::Options()); }

  void StartMoto(const mvr::testing::MotoServer::Options& options) {
    auto moto = mvr::testing::MotoServer::Start(options);
    if (!moto.ok()) {
      if (moto.status().code() == Code::kNotFound) GTEST_SKIP() << moto.status().message();
      FAIL() << moto.status().ToString();
    }
    moto_ = std::move(*moto);
    // The endpoint override path users take for local emulators.
    MapEnvironment env(EnvMap{{"AWS_REGION", "us-east-1"}, {"AWS_ENDPOINT_URL", moto_->url()}});
    ddb_endpoint_ = ResolveEndpoint(AwsService::kDynamoDb, env, SharedConfig()).value();
    sqs_endpoint_ = ResolveEndpoint(AwsService::kSqs, env, SharedConfig()).value();
  }

  std::unique_ptr<mvr::testing::MotoServer> moto_;
  ServiceEndpoint ddb_endpoint_, sqs_endpoint_;
  http::CurlHttpClient http_;
  StaticCredentialsProvider creds_{Creds("AKIDMOTOTEST", "moto-test-secret")};
  testing::ManualSeam seam_;
};

TEST_F(MotoTest, DynamoDbItemsConditionsQueryAndTransactions) {
  DynamoDbClient db(ddb_endpoint_, http_, creds_, seam_.seam);
  CreateTableRequest table;
  table.table = "mvr-leases";
  table.hash_key = KeyAttribute{"pk", "S"};
  table.range_key = KeyAttribute{"sk", "S"};
  ASSERT_TRUE(db.CreateTable(table).ok());
  EXPECT_EQ(db.CreateTable(table).code(), Code::kConflict);  // ResourceInUseException
  auto described = db.DescribeTable("mvr-leases");
  ASSERT_TRUE(described.ok()) << described.status().ToString();
  EXPECT_EQ((*described)["TableName"], "mvr-leases");

  // Conditional create: first wins, second is Conflict.
  PutItemRequest put;
  put.table = "mvr-leases";
  put.item = {{"pk", S("pool")}, {"sk", S("CONTROL")}, {"gen", N(1)}, {"state", S("READY")}};
  put.condition = Expression{"attribute_not_exists(pk)", {}, {}};
  ASSERT_TRUE(db.PutItem(put).ok());
  auto again = db.PutItem(put);
  EXPECT_EQ(again.status().code(), Code::kConflict);
  EXPECT_EQ(again.status().error_type(), "ConditionalCheckFailedException");

  // Fenced update with ReturnValues.
  UpdateItemRequest bump;
  bump.table = "mvr-leases";
  bump.key = {{"pk", S("pool")}, {"sk", S("CONTROL")}};
  bump.update = Expression{"SET #g = #g + :one", {{"#g", "gen"}}, {{":one", N(1)}}};
  bump.condition = Expression{"#g = :expected", {{"#g", "gen"}}, {{":expected", N(1)}}};
  bump.return_values = ReturnValues::kAllNew;
  auto bumped = db.UpdateItem(bump);
  ASSERT_TRUE(bumped.ok()) << bumped.status().ToString();
  EXPECT_EQ(GetN(*bumped, "gen"), 2);
  EXPECT_EQ(db.UpdateItem(bump).status().code(), Code::kConflict);  // stale generation

  auto got = db.GetItem(GetItemRequest{"mvr-leases", bump.key, true, {}});
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(GetS(**got, "state"), "READY");
  auto none = db.GetItem(
      GetItemRequest{"mvr-leases", {{"pk", S("pool")}, {"sk", S("MEMBER#none")}}, true, {}});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  // Pagination: 5 members, 2 per page.
  for (int i = 0; i < 5; ++i) {
    PutItemRequest m;
    m.table = "mvr-leases";
    m.item = {{"pk", S("pool")}, {"sk", S("MEMBER#" + std::to_string(i))}};
    ASSERT_TRUE(db.PutItem(m).ok());
  }
  QueryRequest q;
  q.table = "mvr-leases";
  q.key_condition =
      Expression{"pk = :p AND begins_with(sk, :m)", {}, {{":p", S("pool")}, {":m", S("MEMBER#")}}};
  q.consistent_read = true;
  q.limit = 2;
  auto first = db.Query(q);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->items.size(), 2u);
  EXPECT_TRUE(first->last_evaluated_key.has_value());
  auto all = db.QueryAll(q);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->size(), 5u);

  // A transaction whose condition check fails is Conflict with per-item reasons.
  TransactWriteItem add;
  add.kind = TransactWriteItem::Kind::kPut;
  add.table = "mvr-leases";
  add.item = {{"pk", S("pool")}, {"sk", S("MEMBER#9")}};
  TransactWriteItem check;
  check.kind = TransactWriteItem::Kind::kConditionCheck;
  check.table = "mvr-leases";
  check.key = {{"pk", S("pool")}, {"sk", S("CONTROL")}};
  check.condition = Expression{"#g = :g", {{"#g", "gen"}}, {{":g", N(99)}}};
  TransactWriteOutcome tx = db.TransactWriteItems({add, check});
  EXPECT_EQ(tx.status.code(), Code::kConflict) << tx.status.ToString();
  ASSERT_EQ(tx.reasons.size(), 2u);
  EXPECT_EQ(tx.reasons[0].code, "None");
  EXPECT_EQ(tx.reasons[1].code, "ConditionalCheckFailed");
  check.condition.values[":g"] = N(2);
  EXPECT_TRUE(db.TransactWriteItems({add, check}).ok());

  DeleteItemRequest del;
  del.table = "mvr-leases";
  del.key = {{"pk", S("pool")}, {"sk", S("MEMBER#9")}};
  del.return_values = ReturnValues::kAllOld;
  auto old = db.DeleteItem(del);
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(GetS(*old, "sk"), "MEMBER#9");

  ASSERT_TRUE(db.DeleteTable("mvr-leases").ok());
  EXPECT_EQ(db.GetItem(GetItemRequest{"mvr-leases", bump.key, true, {}}).status().code(),
            Code::kNotFound);
}

TEST_F(MotoTest, SqsSendReceiveVisibilityDeleteAndAttributes) {
  SqsClient sqs(sqs_endpoint_, http_, creds_, seam_.seam);
  auto url = sqs.CreateQueue("mvr-jobs", {{"VisibilityTimeout", "30"}});
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(sqs.GetQueueUrl("mvr-jobs").value_or(""), *url);
  EXPECT_EQ(sqs.GetQueueUrl("mvr-missing").status().code(), Code::kNotFound);

  ASSERT_TRUE(sqs.SendMessage(SendMessageRequest{*url, "job-1", 0}).ok());
  auto batch = sqs.SendMessageBatch(*url, {{"now", "job-2", 0}, {"later", "job-3", 900}});
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_EQ(batch->succeeded.size(), 2u);
  EXPECT_TRUE(batch->failed.empty());

  ReceiveMessageRequest rx;
  rx.queue_url = *url;
  rx.max_messages = 10;
  rx.wait_time_seconds = 1;
  rx.visibility_timeout = 120;
  auto got = sqs.ReceiveMessage(rx);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 2u);  // the delayed message stays hidden
  for (const auto& m : *got) EXPECT_EQ(m.receive_count, 1);

  // Hidden while the visibility timeout runs; visible again (count 2) once it is set to 0.
  rx.wait_time_seconds = 0;
  EXPECT_TRUE(sqs.ReceiveMessage(rx)->empty());
  ASSERT_TRUE(sqs.ChangeMessageVisibility(*url, got->at(0).receipt_handle, 0).ok());
  auto again = sqs.ReceiveMessage(rx);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ(again->at(0).message_id, got->at(0).message_id);
  EXPECT_EQ(again->at(0).receive_count, 2);

  ASSERT_TRUE(sqs.DeleteMessage(*url, again->at(0).receipt_handle).ok());
  auto deleted = sqs.DeleteMessageBatch(*url, {{"d", got->at(1).receipt_handle}});
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->succeeded.count("d"), 1u);

  auto attrs = sqs.GetQueueAttributes(*url);
  ASSERT_TRUE(attrs.ok()) << attrs.status().ToString();
  EXPECT_EQ(attrs->at("VisibilityTimeout"), "30");
  EXPECT_EQ(attrs->at("ApproximateNumberOfMessagesDelayed"), "1");

  ASSERT_TRUE(sqs.DeleteQueue(*url).ok());
  EXPECT_EQ(sqs.SendMessage(SendMessageRequest{*url, "x", 0}).status().code(), Code::kNotFound);
}

// Pulls "<Tag>value</Tag>" out of moto's IAM XML answers.
std::string XmlValue(const std::string& xml, const std::string& tag) {
  size_t start = xml.find("<" + tag + ">");
  if (start == std::string::npos) return "";
  start += tag.size() + 2;
  return xml.substr(start, xml.find("</" + tag + ">", start) - start);
}

class MotoSignatureTest : public MotoTest {
 protected:
  // moto checks signatures and IAM policies once INITIAL_NO_AUTH_ACTION_COUNT requests have
  // been served; the three setup calls below (CreateUser, PutUserPolicy, CreateAccessKey) are
  // the free ones.
  void SetUp() override {
    mvr::testing::MotoServer::Options options;
    options.env["INITIAL_NO_AUTH_ACTION_COUNT"] = "3";
    StartMoto(options);
  }

  Result<std::string> Iam(const std::string& form) {
    http::HttpRequest req;
    req.method = "POST";
    req.url = moto_->url() + "/";
    req.headers.Set("Content-Type", "application/x-www-form-urlencoded");
    req.body = form + "&Version=2010-05-08";
    MVR_RETURN_IF_ERROR(SignRequest(req, Creds("AKIDSETUP", "setup-secret"),
                                    SigningScope{"us-east-1", "iam"}, seam_.clock.Now()));
    MVR_ASSIGN_OR_RETURN(http::HttpResponse resp, http_.Send(req));
    if (resp.status != 200) return Internal("IAM setup failed: " + resp.body);
    return resp.body;
  }
};

TEST_F(MotoSignatureTest, WrongSecretIsRefusedAndTheRightOneAccepted) {
  ASSERT_TRUE(Iam("Action=CreateUser&UserName=mvr").ok());
  std::string policy = http::BuildQuery(
      {{"PolicyDocument",
        R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["dynamodb:*","sqs:*"],"Resource":"*"}]})"}});
  ASSERT_TRUE(Iam("Action=PutUserPolicy&UserName=mvr&PolicyName=mvr-all&" + policy).ok());
  auto key = Iam("Action=CreateAccessKey&UserName=mvr");
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  std::string id = XmlValue(*key, "AccessKeyId");
  std::string secret = XmlValue(*key, "SecretAccessKey");
  ASSERT_FALSE(id.empty());
  ASSERT_FALSE(secret.empty());

  StaticCredentialsProvider right(Creds(id, secret));
  StaticCredentialsProvider wrong(Creds(id, secret + "x"));
  DynamoDbClient good_db(ddb_endpoint_, http_, right, seam_.seam);
  DynamoDbClient bad_db(ddb_endpoint_, http_, wrong, seam_.seam);
  CreateTableRequest table;
  table.table = "mvr-signed";
  table.hash_key = KeyAttribute{"pk", "S"};
  Status refused = bad_db.CreateTable(table);
  EXPECT_EQ(refused.code(), Code::kUnauthorized) << refused.ToString();
  EXPECT_EQ(refused.message().find(secret), std::string::npos);
  Status accepted = good_db.CreateTable(table);
  EXPECT_TRUE(accepted.ok()) << accepted.ToString();

  SqsClient good_sqs(sqs_endpoint_, http_, right, seam_.seam);
  SqsClient bad_sqs(sqs_endpoint_, http_, wrong, seam_.seam);
  EXPECT_EQ(bad_sqs.CreateQueue("mvr-signed").status().code(), Code::kUnauthorized);
  EXPECT_TRUE(good_sqs.CreateQueue("mvr-signed").ok());
}

// The contract proxy in front of moto: a request that breaks DynamoDB's model is recorded with its
// operation and field path (and would fail the test at the MotoServer's destruction), while moto
// still answers it; a request that fits is counted as checked; an IAM request passes unchecked.
class MotoContractTest : public MotoTest {
 protected:
  // On even when MVR_MOTO_CHECK_CONTRACTS=0 times the other suites without it.
  void SetUp() override {
    mvr::testing::MotoServer::Options options;
    options.check_contracts = true;
    StartMoto(options);
  }
};

TEST_F(MotoContractTest, ProxyReportsARequestThatBreaksTheModel) {
  auto send = [&](const std::string& target, const std::string& body, const std::string& scope) {
    http::HttpRequest req;
    req.method = "POST";
    req.url = moto_->url() + "/";
    if (!target.empty()) req.headers.Set("X-Amz-Target", target);
    req.headers.Set("Content-Type", target.empty() ? "application/x-www-form-urlencoded"
                                                   : "application/x-amz-json-1.0");
    req.body = body;
    EXPECT_TRUE(SignRequest(req, Creds("AKIDMOTOTEST", "moto-test-secret"),
                            SigningScope{"us-east-1", scope}, seam_.clock.Now())
                    .ok());
    auto resp = http_.Send(req);
    EXPECT_TRUE(resp.ok()) << resp.status().ToString();
    return resp.ok() ? resp->status : 0;
  };
  EXPECT_EQ(send("DynamoDB_20120810.ListTables", "{}", "dynamodb"), 200);
  EXPECT_TRUE(moto_->ContractViolations().empty());
  // moto answers 400 here too, but for its own reason; the proxy names the model's.
  send("DynamoDB_20120810.PutItem", R"({"Item":{"pk":{"S":"a"}}})", "dynamodb");
  send("", "Action=ListUsers&Version=2010-05-08", "iam");
  std::vector<std::string> violations = moto_->TakeContractViolations();
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0], "dynamodb PutItem: TableName: required member is missing [POST /]");
  EXPECT_EQ(moto_->ContractCounts().checked, 2);
  EXPECT_EQ(moto_->ContractCounts().unchecked, 1);
  // Unclaimed, a breach fails the owning test when the MotoServer goes away.
  send("DynamoDB_20120810.GetItem", R"({"TableName":"t","Key":{}})", "dynamodb");
  EXPECT_NONFATAL_FAILURE(moto_.reset(),
                          "dynamodb GetItem: TableName: length 1 is below the minimum of 3");
}

}  // namespace
}  // namespace mvr::aws
