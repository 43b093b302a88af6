#include "aws/services/json_protocol.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "fake_http.h"
#include "http/curl_client.h"
#include "http/server.h"

namespace mvr::aws {
namespace {

using testing::FakeHttpClient;
using testing::ManualSeam;

JsonServiceConfig DynamoConfig() {
  JsonServiceConfig c;
  c.endpoint.url = "https://dynamodb.us-east-1.amazonaws.com";
  c.endpoint.region = "us-east-1";
  c.endpoint.signing_name = "dynamodb";
  c.target_prefix = "DynamoDB_20120810";
  c.retry.max_attempts = 1;
  return c;
}

// DynamoDB's and SQS's clients build their config here (it was written out twice, issue 57).
TEST(JsonServiceTest, CarriesTheEndpointPrefixTimeoutAndRetry) {
  RetryPolicy retry;
  retry.max_attempts = 7;
  const JsonServiceConfig c =
      JsonService(DynamoConfig().endpoint, "AmazonSQS", Duration(1'234), retry);
  EXPECT_EQ(c.endpoint.url, "https://dynamodb.us-east-1.amazonaws.com");
  EXPECT_EQ(c.endpoint.signing_name, "dynamodb");
  EXPECT_EQ(c.target_prefix, "AmazonSQS");
  EXPECT_EQ(c.content_type, "application/x-amz-json-1.0");
  EXPECT_EQ(c.timeout, Duration(1'234));
  EXPECT_EQ(c.retry.max_attempts, 7);
}

class JsonProtocolTest : public ::testing::Test {
 protected:
  FakeHttpClient http_;
  StaticCredentialsProvider creds_{testing::TestCredentials()};
  ManualSeam seam_;
  JsonProtocolClient client_{DynamoConfig(), http_, creds_, seam_.seam};
};

TEST_F(JsonProtocolTest, SendsTargetContentTypeAndSignature) {
  http_.PushJson(200, R"({"Item":{"pk":{"S":"a"}}})");
  JsonCallResult r = client_.Invoke("GetItem", {{"TableName", "t"}});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.body["Item"]["pk"]["S"], "a");
  const http::HttpRequest& req = http_.requests().at(0);
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.url, "https://dynamodb.us-east-1.amazonaws.com/");
  EXPECT_EQ(req.headers.Get("X-Amz-Target"), "DynamoDB_20120810.GetItem");
  EXPECT_EQ(req.headers.Get("Content-Type"), "application/x-amz-json-1.0");
  auto authz = req.headers.Get("Authorization").value_or("");
  EXPECT_NE(authz.find("/us-east-1/dynamodb/aws4_request"), std::string::npos) << authz;
  EXPECT_NE(authz.find("x-amz-target"), std::string::npos) << authz;
  EXPECT_EQ(nlohmann::json::parse(req.body)["TableName"], "t");
}

struct ErrorCase {
  int status;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  Code want;
  std::string want_type;
};

class JsonErrorMappingTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(JsonErrorMappingTest, MapsServiceErrorToCode) {
  const ErrorCase& c = GetParam();
  http::Headers headers;
  for (const auto& [k, v] : c.headers) headers.Set(k, v);
  Status s = MapJsonError(c.status, headers, c.body);
  EXPECT_EQ(s.code(), c.want) << s.ToString();
  EXPECT_EQ(s.error_type(), c.want_type) << s.ToString();
}

INSTANTIATE_TEST_SUITE_P(
    AllMappedErrors, JsonErrorMappingTest,
    ::testing::Values(
        ErrorCase{400,
                  R"({"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException",
                      "message":"Rate exceeded"})",
                  {},
                  Code::kThrottled,
                  "ThrottlingException"},
        ErrorCase{
            400,
            R"({"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException"})",
            {},
            Code::kThrottled,
            "ProvisionedThroughputExceededException"},
        ErrorCase{400,
                  R"({"__type":"RequestLimitExceeded"})",
                  {},
                  Code::kThrottled,
                  "RequestLimitExceeded"},
        ErrorCase{400,
                  R"({"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
                      "message":"The conditional request failed"})",
                  {},
                  Code::kConflict,
                  "ConditionalCheckFailedException"},
        ErrorCase{400,
                  R"({"__type":"com.amazonaws.dynamodb.v20120810#TransactionCanceledException"})",
                  {},
                  Code::kConflict,
                  "TransactionCanceledException"},
        ErrorCase{400,
                  R"({"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException"})",
                  {},
                  Code::kNotFound,
                  "ResourceNotFoundException"},
        ErrorCase{400,
                  R"({"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"gone"})",
                  {{"x-amzn-query-error", "AWS.SimpleQueueService.NonExistentQueue;Sender"}},
                  Code::kNotFound,
                  "QueueDoesNotExist"},
        ErrorCase{400,
                  R"({"__type":"com.amazon.coral.service#AccessDeniedException"})",
                  {},
                  Code::kUnauthorized,
                  "AccessDeniedException"},
        ErrorCase{400,
                  R"({"__type":"com.amazon.coral.service#UnrecognizedClientException"})",
                  {},
                  Code::kUnauthorized,
                  "UnrecognizedClientException"},
        ErrorCase{400,
                  R"({"__type":"com.amazon.coral.service#InvalidSignatureException"})",
                  {},
                  Code::kUnauthorized,
                  "InvalidSignatureException"},
        ErrorCase{400,
                  "",
                  {{"x-amzn-query-error", "AWS.SimpleQueueService.NonExistentQueue;Sender"}},
                  Code::kNotFound,
                  "AWS.SimpleQueueService.NonExistentQueue"},
        ErrorCase{403, "", {}, Code::kUnauthorized, ""},
        ErrorCase{400,
                  R"({"__type":"com.amazon.coral.validate#ValidationException"})",
                  {},
                  Code::kInvalidArgument,
                  "ValidationException"},
        ErrorCase{400,
                  R"({"message":"x"})",
                  {{"x-amzn-ErrorType", "ValidationException:http://internal.amazon.com/"}},
                  Code::kInvalidArgument,
                  "ValidationException"},
        ErrorCase{500,
                  R"({"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError"})",
                  {},
                  Code::kTransient,
                  "InternalServerError"},
        ErrorCase{503, "<html>Service Unavailable</html>", {}, Code::kTransient, ""},
        ErrorCase{429, "", {}, Code::kThrottled, ""},
        ErrorCase{400,
                  R"({"__type":"LimitExceededException"})",
                  {},
                  Code::kQuotaExceeded,
                  "LimitExceededException"}));

TEST(JsonErrorMapping, ShortErrorTypeStripsNamespaceAndUrl) {
  EXPECT_EQ(ShortErrorType("com.amazonaws.dynamodb.v20120810#ResourceNotFoundException"),
            "ResourceNotFoundException");
  EXPECT_EQ(ShortErrorType("ValidationException:http://internal.amazon.com/coral/"),
            "ValidationException");
  EXPECT_EQ(ShortErrorType("Plain"), "Plain");
}

TEST(JsonErrorMapping, HonoursRetryAfter) {
  http::Headers h;
  h.Set("Retry-After", "3");
  Status s = MapJsonError(429, h, "");
  ASSERT_TRUE(s.retry_after());
  EXPECT_EQ(*s.retry_after(), std::chrono::seconds(3));
}

TEST(JsonErrorMapping, IgnoresARetryAfterThatIsNotWholeSeconds) {
  for (const char* value : {"3abc", "-1", "Wed, 21 Oct 2015 07:28:00 GMT", "", "99999"}) {
    http::Headers h;
    h.Set("Retry-After", value);
    EXPECT_FALSE(MapJsonError(429, h, "").retry_after()) << value;
  }
}

TEST_F(JsonProtocolTest, ErrorBodyIsKeptForDetails) {
  http_.PushJson(400, R"({"__type":"#TransactionCanceledException","CancellationReasons":[]})");
  JsonCallResult r = client_.Invoke("TransactWriteItems", nlohmann::json::object());
  EXPECT_EQ(r.status.code(), Code::kConflict);
  EXPECT_TRUE(r.body.contains("CancellationReasons"));
  EXPECT_NE(r.status.message().find("DynamoDB_20120810.TransactWriteItems"), std::string::npos);
}

TEST_F(JsonProtocolTest, MalformedSuccessBodyIsInternalNotACrash) {
  for (const char* body : {"not json", "[1,2]", "{\"trunc", "\"string\""}) {
    http_.PushJson(200, body);
    JsonCallResult r = client_.Invoke("GetItem", nlohmann::json::object());
    EXPECT_EQ(r.status.code(), Code::kInternal) << body;
  }
}

TEST_F(JsonProtocolTest, MalformedErrorBodyStillMapsByStatus) {
  http_.PushJson(500, "{{{{");
  EXPECT_EQ(client_.Invoke("GetItem", {}).status.code(), Code::kTransient);
  http_.PushJson(400, "\xff\xfe garbage");
  EXPECT_EQ(client_.Invoke("GetItem", {}).status.code(), Code::kInvalidArgument);
}

TEST_F(JsonProtocolTest, TransportErrorStaysTransient) {
  http_.Push(Transient("connection refused"));
  EXPECT_EQ(client_.Invoke("GetItem", {}).status.code(), Code::kTransient);
}

TEST_F(JsonProtocolTest, CredentialErrorIsReportedWithTheOperation) {
  class NoCreds final : public CredentialsProvider {
   public:
    Result<AwsCredentials> Get() override { return Unauthorized("no AWS credentials found"); }
  } none;
  JsonProtocolClient c(DynamoConfig(), http_, none, seam_.seam);
  JsonCallResult r = c.Invoke("GetItem", {});
  EXPECT_EQ(r.status.code(), Code::kUnauthorized);
  EXPECT_TRUE(http_.requests().empty());
}

TEST_F(JsonProtocolTest, RetriesThrottlingThenSucceedsWithManualSleeps) {
  JsonServiceConfig config = DynamoConfig();
  config.retry.max_attempts = 4;
  JsonProtocolClient c(config, http_, creds_, seam_.seam);
  http_.PushJson(400, R"({"__type":"#ThrottlingException"})");
  http_.PushJson(503, "");
  http_.PushJson(200, "{}");
  JsonCallResult r = c.Call("PutItem", {});
  EXPECT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(http_.requests().size(), 3u);
  EXPECT_EQ(seam_.sleeper.calls(), 2);
}

TEST_F(JsonProtocolTest, DoesNotRetryConflictsOrWhenCallerTurnsRetriesOff) {
  JsonServiceConfig config = DynamoConfig();
  config.retry.max_attempts = 4;
  JsonProtocolClient c(config, http_, creds_, seam_.seam);
  http_.PushJson(400, R"({"__type":"#ConditionalCheckFailedException"})");
  EXPECT_EQ(c.Call("PutItem", {}).status.code(), Code::kConflict);
  EXPECT_EQ(http_.requests().size(), 1u);

  RetryPolicy once;
  once.max_attempts = 1;
  http_.PushJson(500, "");
  EXPECT_EQ(c.Call("PutItem", {}, once).status.code(), Code::kTransient);
  EXPECT_EQ(http_.requests().size(), 2u);
}

TEST_F(JsonProtocolTest, SecretNeverAppearsInRequestOrError) {
  http_.PushJson(400, R"({"__type":"#ValidationException","message":"bad"})");
  JsonCallResult r = client_.Invoke("GetItem", {});
  const std::string secret = testing::TestCredentials().secret_access_key.Reveal();
  EXPECT_EQ(r.status.ToString().find(secret), std::string::npos);
  for (const auto& [k, v] : http_.requests().at(0).headers) {
    EXPECT_EQ(v.find(secret), std::string::npos) << k;
  }
}

// A real exchange over loopback where the server never answers in time: the client's timeout
// fires and the error is Transient. The handler waits on a latch the test releases, not on time.
TEST(JsonProtocolTimeout, SlowServerIsTransient) {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  http::HttpServer server([&](const http::ServerRequest&) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return release; });
    return http::HttpResponse::Json(200, "{}");
  });
  auto port = server.Start("127.0.0.1", 0);
  ASSERT_TRUE(port.ok());
  http::CurlHttpClient http;
  StaticCredentialsProvider creds(testing::TestCredentials());
  ManualSeam seam;
  JsonServiceConfig config = DynamoConfig();
  config.endpoint.url = "http://127.0.0.1:" + std::to_string(*port);
  config.timeout = Duration(300);
  JsonProtocolClient client(config, http, creds, seam.seam);
  JsonCallResult r = client.Invoke("GetItem", {});
  EXPECT_EQ(r.status.code(), Code::kTransient) << r.status.ToString();
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  server.Stop();
}

}  // namespace
}  // namespace mvr::aws
