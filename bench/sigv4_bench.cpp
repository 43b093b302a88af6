// SigV4 signatures per second for a typical DynamoDB request (a conditional UpdateItem of a
// lease item, ~600 bytes of JSON, session-token credentials as on Lambda), and for the pieces:
// the derived signing key and the canonical request. Run: build-*/bench/sigv4_bench
#include <benchmark/benchmark.h>

#include "aws/signing/sigv4.h"
#include "base/encoding.h"
#include "base/time_format.h"

namespace mvr::aws {
namespace {

http::HttpRequest TypicalDynamoDbRequest() {
  http::HttpRequest req;
  req.method = "POST";
  req.url = "https://dynamodb.us-east-1.amazonaws.com/";
  req.headers.Set("Content-Type", "application/x-amz-json-1.0");
  req.headers.Set("X-Amz-Target", "DynamoDB_20120810.UpdateItem");
  req.headers.Set("Accept", "application/json");
  req.body =
      R"({"TableName":"mvr-runner-set","Key":{"pk":{"S":"REPOSITORY#123456789#SERVER#)"
      R"(9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},"sk":{"S":"MEMBER#)"
      R"(mvm-0a1b2c3d4e5f"}},"UpdateExpression":"SET #s = :leased, #l = :lease, #g = #g + :one,)"
      R"( #u = :now","ConditionExpression":"#s = :ready AND #g = :gen","ExpressionAttributeNames")"
      R"(:{"#s":"state","#l":"leaseId","#g":"generation","#u":"updatedAt"},)"
      R"("ExpressionAttributeValues":{":leased":{"S":"LEASED"},":ready":{"S":"READY"},":lease":)"
      R"({"S":"lease-6f1c0e2a-8b7d-4c1e-9a2f-3d4b5c6d7e8f"},":one":{"N":"1"},":gen":{"N":"41"},)"
      R"(":now":{"N":"1767225600"}},"ReturnValues":"ALL_NEW"})";
  return req;
}

AwsCredentials LambdaCredentials() {
  AwsCredentials c;
  c.access_key_id = "ASIAEXAMPLEEXAMPLE12";
  c.secret_access_key = Secret("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
  c.session_token = Secret(std::string(800, 'T'));  // Lambda session tokens are ~800-1000 chars
  return c;
}

void BM_SignDynamoDbUpdateItem(benchmark::State& state) {
  const http::HttpRequest base = TypicalDynamoDbRequest();
  const AwsCredentials creds = LambdaCredentials();
  const SigningScope scope{"us-east-1", "dynamodb"};
  const TimePoint now = ParseRfc3339("2026-11-30T04:00:00Z").value();
  for (auto _ : state) {
    http::HttpRequest req = base;
    Status s = SignRequest(req, creds, scope, now);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(req.headers);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel("signatures");
}
BENCHMARK(BM_SignDynamoDbUpdateItem);

void BM_DerivedSigningKey(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(DerivedSigningKey("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                                               "20261130", "us-east-1", "dynamodb"));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DerivedSigningKey);

void BM_CanonicalRequest(benchmark::State& state) {
  http::HttpRequest req = TypicalDynamoDbRequest();
  req.headers.Set("Host", "dynamodb.us-east-1.amazonaws.com");
  req.headers.Set("X-Amz-Date", "20261130T040000Z");
  const std::string payload_hash = Sha256Hex(req.body);
  for (auto _ : state) {
    benchmark::DoNotOptimize(CanonicalRequest("POST", "/", "", req.headers,
                                              "accept;content-type;host;x-amz-date;x-amz-target",
                                              payload_hash));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CanonicalRequest);

}  // namespace
}  // namespace mvr::aws

BENCHMARK_MAIN();
