// DynamoDB answers (AWS JSON protocol) through the HttpClient seam: item maps, pages and their
// LastEvaluatedKey, transaction cancellation reasons, error bodies ("__type", message) and headers.
// Input: "OP STATUS", response header lines, blank line, body; OP picks the client call.
#include <cstdint>

#include "aws/services/dynamodb.h"
#include "aws_fixture.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mvr;
  using nlohmann::json;
  fuzz::FuzzedExchange x = fuzz::ParseExchange(data, size, 9);
  fuzz::FuzzedHttpClient http(x.response);
  fuzz::AwsFixture f("https://dynamodb.us-east-1.amazonaws.com", "dynamodb");
  aws::DynamoDbClient::Options options;
  options.retry = f.retry;
  aws::DynamoDbClient client(f.endpoint, http, f.credentials, f.deps(), options);
  const json key = {{"pk", {{"S", "k"}}}};
  switch (x.op) {
    case 0:
      (void)client.GetItem({"t", key, true, {}});
      break;
    case 1:
      (void)client.PutItem({"t", key, {}, aws::ReturnValues::kAllOld});
      break;
    case 2:
      (void)client.UpdateItem({"t",
                               key,
                               {"SET #g = :one", {{"#g", "g"}}, {{":one", {{"N", "1"}}}}},
                               {},
                               aws::ReturnValues::kAllNew});
      break;
    case 3:
      (void)client.DeleteItem({"t", key, {}, aws::ReturnValues::kAllOld});
      break;
    case 4: {
      aws::QueryRequest q;
      q.table = "t";
      q.key_condition = {"pk = :k", {}, {{":k", {{"S", "k"}}}}};
      (void)client.Query(q);
      (void)client.QueryAll(q, 5);
      break;
    }
    case 5: {
      aws::ScanRequest s;
      s.table = "t";
      (void)client.Scan(s);
      break;
    }
    case 6: {
      aws::TransactWriteItem put;
      put.table = "t";
      put.item = key;
      aws::TransactWriteItem check;
      check.kind = aws::TransactWriteItem::Kind::kConditionCheck;
      check.table = "t";
      check.key = key;
      check.condition = {"attribute_exists(pk)", {}, {}};
      (void)client.TransactWriteItems({put, check}, "token");
      break;
    }
    case 7:
      (void)client.DescribeTable("t");
      break;
    case 8:
      (void)client.CreateTableWithTtl({"t", {"pk", "S"}, std::nullopt}, "expires");
      break;
    default:
      (void)client.UpdateTimeToLive("t", "expires", true);
      break;
  }
  return 0;
}
