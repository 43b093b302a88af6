// DynamoDB client against a scripted HttpClient: request documents, answers, pagination,
// cancellation reasons, input checks and malformed answers.
#include "aws/services/dynamodb.h"

#include <gtest/gtest.h>

#include "fake_http.h"

namespace mvr::aws {
namespace {

using namespace ddb;  // NOLINT: S, N, Bool ... read better unqualified in tests

class DynamoDbTest : public ::testing::Test {
 protected:
  DynamoDbTest() {
    endpoint_.url = "https://dynamodb.us-east-1.amazonaws.com";
    endpoint_.region = "us-east-1";
    endpoint_.signing_name = "dynamodb";
  }
  DynamoDbClient Client() {
    DynamoDbClient::Options o;
    o.retry.max_attempts = 1;
    return DynamoDbClient(endpoint_, http_, creds_, seam_.seam, o);
  }
  nlohmann::json Sent(size_t i) const { return nlohmann::json::parse(http_.requests().at(i).body); }
  std::string Target(size_t i) const {
    return http_.requests().at(i).headers.GetOr("X-Amz-Target", "");
  }

  ServiceEndpoint endpoint_;
  testing::FakeHttpClient http_;
  StaticCredentialsProvider creds_{testing::TestCredentials()};
  testing::ManualSeam seam_;
};

TEST(DynamoDbAttributes, BuildersAndReaders) {
  Item item = {{"pk", S("a")},
               {"n", N(42)},
               {"b", Bool(true)},
               {"m", M({{"x", S("y")}})},
               {"l", L({S("1"), N(2)})}};
  EXPECT_EQ(item["n"], nlohmann::json({{"N", "42"}}));
  EXPECT_EQ(GetS(item, "pk"), "a");
  EXPECT_EQ(GetN(item, "n"), 42);
  EXPECT_EQ(GetBool(item, "b"), true);
  EXPECT_EQ(GetS(*GetM(item, "m"), "x"), "y");
  EXPECT_EQ(GetL(item, "l")->size(), 2u);
  EXPECT_FALSE(GetS(item, "n"));  // wrong type
  EXPECT_FALSE(GetN(item, "missing"));
  EXPECT_FALSE(GetN({{"big", N(std::string("1e400"))}}, "big"));
}

TEST_F(DynamoDbTest, GetItemIsConsistentAndParsesTheItem) {
  http_.PushJson(200, R"({"Item":{"pk":{"S":"a"},"gen":{"N":"3"}}})");
  auto r = Client().GetItem(GetItemRequest{"leases", {{"pk", S("a")}}, true, {}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(GetN(**r, "gen"), 3);
  EXPECT_EQ(Target(0), "DynamoDB_20120810.GetItem");
  EXPECT_EQ(Sent(0)["ConsistentRead"], true);
  EXPECT_EQ(Sent(0)["Key"]["pk"]["S"], "a");
}

TEST_F(DynamoDbTest, GetItemMissingIsNullopt) {
  http_.PushJson(200, "{}");
  auto r = Client().GetItem(GetItemRequest{"leases", {{"pk", S("a")}}, true, {}});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
}

TEST_F(DynamoDbTest, PutItemWithConditionNamesValuesAndReturnValues) {
  http_.PushJson(200, R"({"Attributes":{"pk":{"S":"a"},"gen":{"N":"1"}}})");
  PutItemRequest req;
  req.table = "leases";
  req.item = {{"pk", S("a")}, {"gen", N(2)}};
  req.condition = Expression{"#g = :old", {{"#g", "gen"}}, {{":old", N(1)}}};
  req.return_values = ReturnValues::kAllOld;
  auto r = Client().PutItem(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(GetN(*r, "gen"), 1);
  nlohmann::json sent = Sent(0);
  EXPECT_EQ(sent["ConditionExpression"], "#g = :old");
  EXPECT_EQ(sent["ExpressionAttributeNames"]["#g"], "gen");
  EXPECT_EQ(sent["ExpressionAttributeValues"][":old"]["N"], "1");
  EXPECT_EQ(sent["ReturnValues"], "ALL_OLD");
}

TEST_F(DynamoDbTest, FailedConditionIsConflict) {
  http_.PushJson(400,
                 R"({"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
                     "message":"The conditional request failed"})");
  PutItemRequest req;
  req.table = "leases";
  req.item = {{"pk", S("a")}};
  req.condition = Expression{"attribute_not_exists(pk)", {}, {}};
  auto r = Client().PutItem(req);
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_EQ(r.status().error_type(), "ConditionalCheckFailedException");
}

TEST_F(DynamoDbTest, UpdateItemMergesUpdateAndConditionPlaceholders) {
  http_.PushJson(200, R"({"Attributes":{"gen":{"N":"5"}}})");
  UpdateItemRequest req;
  req.table = "leases";
  req.key = {{"pk", S("a")}};
  req.update = Expression{"SET #g = #g + :one", {{"#g", "gen"}}, {{":one", N(1)}}};
  req.condition = Expression{"#o = :me", {{"#o", "owner"}}, {{":me", S("x")}}};
  req.return_values = ReturnValues::kUpdatedNew;
  auto r = Client().UpdateItem(req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(GetN(*r, "gen"), 5);
  nlohmann::json sent = Sent(0);
  EXPECT_EQ(sent["UpdateExpression"], "SET #g = #g + :one");
  EXPECT_EQ(sent["ExpressionAttributeNames"].size(), 2u);
  EXPECT_EQ(sent["ExpressionAttributeValues"].size(), 2u);
  EXPECT_EQ(sent["ReturnValues"], "UPDATED_NEW");
}

TEST_F(DynamoDbTest, DeleteItemOnMissingTableIsNotFound) {
  http_.PushJson(400, R"({"__type":"#ResourceNotFoundException","message":"no table"})");
  auto r = Client().DeleteItem(DeleteItemRequest{"leases", {{"pk", S("a")}}, {}, {}});
  EXPECT_EQ(r.status().code(), Code::kNotFound);
}

TEST_F(DynamoDbTest, QueryAllFollowsLastEvaluatedKey) {
  http_.PushJson(200, R"({"Items":[{"sk":{"S":"1"}},{"sk":{"S":"2"}}],
                          "LastEvaluatedKey":{"pk":{"S":"p"},"sk":{"S":"2"}}})");
  http_.PushJson(200, R"({"Items":[{"sk":{"S":"3"}}]})");
  QueryRequest q;
  q.table = "leases";
  q.key_condition = Expression{"pk = :p", {}, {{":p", S("p")}}};
  q.consistent_read = true;
  auto all = Client().QueryAll(q);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ(GetS(all->at(2), "sk"), "3");
  EXPECT_FALSE(Sent(0).contains("ExclusiveStartKey"));
  EXPECT_EQ(Sent(1)["ExclusiveStartKey"]["sk"]["S"], "2");
  EXPECT_EQ(Sent(1)["ConsistentRead"], true);
}

TEST_F(DynamoDbTest, QueryAllStopsOnARepeatedKey) {
  http_.SetHandler([](const http::HttpRequest&) -> Result<http::HttpResponse> {
    return http::HttpResponse::Json(200, R"({"Items":[],"LastEvaluatedKey":{"pk":{"S":"p"}}})");
  });
  QueryRequest q;
  q.table = "leases";
  q.key_condition = Expression{"pk = :p", {}, {{":p", S("p")}}};
  EXPECT_EQ(Client().QueryAll(q).status().code(), Code::kInternal);
}

TEST_F(DynamoDbTest, TransactionCancelledIsConflictWithPerItemReasons) {
  http_.PushJson(400, R"({"__type":"com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
    "message":"Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed]",
    "CancellationReasons":[{"Code":"None"},
      {"Code":"ConditionalCheckFailed","Message":"The conditional request failed"}]})");
  TransactWriteItem put;
  put.kind = TransactWriteItem::Kind::kPut;
  put.table = "leases";
  put.item = {{"pk", S("m1")}};
  TransactWriteItem check;
  check.kind = TransactWriteItem::Kind::kConditionCheck;
  check.table = "leases";
  check.key = {{"pk", S("control")}};
  check.condition = Expression{"#c < :cap", {{"#c", "count"}}, {{":cap", N(3)}}};
  TransactWriteOutcome out = Client().TransactWriteItems({put, check}, "token-1");
  EXPECT_EQ(out.status.code(), Code::kConflict);
  ASSERT_EQ(out.reasons.size(), 2u);
  EXPECT_EQ(out.reasons[0].code, "None");
  EXPECT_EQ(out.reasons[1].code, "ConditionalCheckFailed");
  nlohmann::json sent = Sent(0);
  EXPECT_EQ(sent["ClientRequestToken"], "token-1");
  EXPECT_TRUE(sent["TransactItems"][0].contains("Put"));
  EXPECT_EQ(sent["TransactItems"][1]["ConditionCheck"]["ConditionExpression"], "#c < :cap");
}

TEST_F(DynamoDbTest, InputChecksNameTheProblemWithoutCallingTheService) {
  EXPECT_EQ(Client().GetItem(GetItemRequest{"t", {{"pk", S("a")}}, true, {}}).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(Client().GetItem(GetItemRequest{"table", {}, true, {}}).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(Client().TransactWriteItems({}).status.code(), Code::kInvalidArgument);
  TransactWriteItem check;
  check.kind = TransactWriteItem::Kind::kConditionCheck;
  check.table = "table";
  check.key = {{"pk", S("a")}};
  EXPECT_EQ(Client().TransactWriteItems({check}).status.code(), Code::kInvalidArgument);
  EXPECT_TRUE(http_.requests().empty());
}

TEST_F(DynamoDbTest, MalformedAnswersAreInternal) {
  http_.PushJson(200, R"({"Item":"not a map"})");
  EXPECT_EQ(Client().GetItem(GetItemRequest{"leases", {{"pk", S("a")}}, true, {}}).status().code(),
            Code::kInternal);
  http_.PushJson(200, R"({"Items":{"a":1}})");
  QueryRequest q;
  q.table = "leases";
  q.key_condition = Expression{"pk = :p", {}, {{":p", S("p")}}};
  EXPECT_EQ(Client().Query(q).status().code(), Code::kInternal);
  http_.PushJson(200, R"({"Attributes":[1]})");
  EXPECT_EQ(Client().PutItem(PutItemRequest{"leases", {{"pk", S("a")}}, {}, {}}).status().code(),
            Code::kInternal);
  http_.PushJson(200, R"({"NoTable":{}})");
  EXPECT_EQ(Client().DescribeTable("leases").status().code(), Code::kInternal);
}

TEST_F(DynamoDbTest, ThrottlingIsThrottledAndTimeoutIsTransient) {
  http_.PushJson(400, R"({"__type":"#ProvisionedThroughputExceededException"})");
  EXPECT_EQ(Client().GetItem(GetItemRequest{"leases", {{"pk", S("a")}}, true, {}}).status().code(),
            Code::kThrottled);
  http_.Push(Transient("operation timed out after 10000 ms"));
  EXPECT_EQ(Client().GetItem(GetItemRequest{"leases", {{"pk", S("a")}}, true, {}}).status().code(),
            Code::kTransient);
}

TEST_F(DynamoDbTest, CreateTableSendsKeySchema) {
  http_.PushJson(200, R"({"TableDescription":{}})");
  CreateTableRequest req;
  req.table = "leases";
  req.hash_key = KeyAttribute{"pk", "S"};
  req.range_key = KeyAttribute{"sk", "S"};
  ASSERT_TRUE(Client().CreateTable(req).ok());
  nlohmann::json sent = Sent(0);
  EXPECT_EQ(sent["KeySchema"][1]["KeyType"], "RANGE");
  EXPECT_EQ(sent["BillingMode"], "PAY_PER_REQUEST");
}

TEST_F(DynamoDbTest, ScanSendsFilterConsistencyAndStartKeyAndParsesThePage) {
  http_.PushJson(200,
                 R"({"Items":[{"pk":{"S":"job#1"}}],"LastEvaluatedKey":{"pk":{"S":"job#1"}}})");
  ScanRequest req;
  req.table = "runners";
  req.filter = Expression{"begins_with(#p, :x)", {{"#p", "pk"}}, {{":x", S("job#")}}};
  req.consistent_read = true;
  req.limit = 5;
  req.exclusive_start_key = Item{{"pk", S("job#0")}};
  auto page = Client().Scan(req);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->items.size(), 1u);
  ASSERT_TRUE(page->last_evaluated_key.has_value());
  EXPECT_EQ(Target(0), "DynamoDB_20120810.Scan");
  nlohmann::json sent = Sent(0);
  EXPECT_EQ(sent["FilterExpression"], "begins_with(#p, :x)");
  EXPECT_EQ(sent["ExpressionAttributeValues"][":x"], S("job#"));
  EXPECT_EQ(sent["ConsistentRead"], true);
  EXPECT_EQ(sent["Limit"], 5);
  EXPECT_EQ(sent["ExclusiveStartKey"]["pk"], S("job#0"));
}

TEST_F(DynamoDbTest, UpdateTimeToLiveNamesTheAttribute) {
  http_.PushJson(200, R"({"TimeToLiveSpecification":{}})");
  ASSERT_TRUE(Client().UpdateTimeToLive("runners", "ttl", true).ok());
  EXPECT_EQ(Target(0), "DynamoDB_20120810.UpdateTimeToLive");
  EXPECT_EQ(Sent(0)["TimeToLiveSpecification"],
            nlohmann::json({{"AttributeName", "ttl"}, {"Enabled", true}}));
  EXPECT_EQ(Client().UpdateTimeToLive("runners", "", true).code(), Code::kInvalidArgument);
}

TEST_F(DynamoDbTest, CreateTableWithTtlDeletesTheTableWhenTtlFails) {
  http_.PushJson(200, R"({"TableDescription":{}})");
  http_.PushJson(400, R"({"__type":"ValidationException","message":"bad ttl"})");
  http_.PushJson(200, R"({"TableDescription":{}})");
  CreateTableRequest req;
  req.table = "runners";
  req.hash_key = KeyAttribute{"pk", "S"};
  Status s = Client().CreateTableWithTtl(req, "ttl");
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  ASSERT_EQ(http_.requests().size(), 3u);
  EXPECT_EQ(Target(2), "DynamoDB_20120810.DeleteTable");
  EXPECT_EQ(Sent(2)["TableName"], "runners");
}

}  // namespace
}  // namespace mvr::aws
