// MicroVMs client failures: each modelled error mapped to mvr's code with the service's name,
// Retry-After honoured, malformed answers Internal (never a crash), transport failures Transient,
// and secrets never in a Status message.
#include <gtest/gtest.h>

#include <sstream>

#include "aws/microvms/microvms_errors.h"
#include "aws/microvms_test_fixture.h"

namespace mvr::aws::testing {
namespace {

using nlohmann::json;

struct ErrorCase {
  std::string type;
  int http_status;
  Code code;
};

class MicrovmsErrorTest : public MicrovmsClientTest,
                          public ::testing::WithParamInterface<ErrorCase> {};

TEST_P(MicrovmsErrorTest, MapsTheModelledErrorFromTheHeader) {
  const ErrorCase& c = GetParam();
  http_.SetHandler([&c](const http::HttpRequest&) -> Result<http::HttpResponse> {
    auto r = http::HttpResponse::Json(c.http_status, R"({"message":"it failed"})");
    r.headers.Set("x-amzn-ErrorType", c.type + ":http://internal.amazon.com/coral/");
    return r;
  });
  Status status = client_.TerminateMicrovm("mvm-1");
  EXPECT_EQ(status.code(), c.code) << status.ToString();
  EXPECT_EQ(status.error_type(), c.type);
  EXPECT_EQ(status.message(), "TerminateMicrovm: " + c.type + ": it failed (HTTP " +
                                  std::to_string(c.http_status) + ")");
  EXPECT_EQ(Model().ErrorStatus(c.type), c.http_status);
}

TEST_P(MicrovmsErrorTest, MapsTheModelledErrorFromTheBody) {
  const ErrorCase& c = GetParam();
  AnswerAll(c.http_status, {{"__type", "com.amazonaws.lambda#" + c.type}, {"Message", "m"}});
  Status status = client_.GetMicrovm("mvm-1").status();
  EXPECT_EQ(status.code(), c.code) << status.ToString();
  EXPECT_EQ(status.error_type(), c.type);
}

INSTANTIATE_TEST_SUITE_P(
    EachModelledError, MicrovmsErrorTest,
    ::testing::Values(ErrorCase{"ServiceQuotaExceededException", 402, Code::kQuotaExceeded},
                      ErrorCase{"ThrottlingException", 429, Code::kThrottled},
                      ErrorCase{"ConflictException", 409, Code::kConflict},
                      ErrorCase{"ResourceNotFoundException", 404, Code::kNotFound},
                      ErrorCase{"ValidationException", 400, Code::kInvalidArgument},
                      ErrorCase{"AccessDeniedException", 403, Code::kUnauthorized},
                      ErrorCase{"InternalServerException", 500, Code::kTransient},
                      ErrorCase{"InsufficientCapacityException", 500, Code::kTransient}),
    [](const auto& info) { return info.param.type; });

TEST_F(MicrovmsClientTest, ThrottlingHonoursRetryAfter) {
  http_.SetHandler([](const http::HttpRequest&) -> Result<http::HttpResponse> {
    auto r = http::HttpResponse::Json(429, R"({"message":"Rate exceeded"})");
    r.headers.Set("x-amzn-ErrorType", "ThrottlingException");
    r.headers.Set("Retry-After", "3");
    return r;
  });
  RunMicrovmRequest request;
  request.image_identifier = "img";
  Status status = client_.RunMicrovm(request).status();
  EXPECT_EQ(status.code(), Code::kThrottled);
  ASSERT_TRUE(status.retry_after().has_value());
  EXPECT_EQ(status.retry_after()->count(), 3000);
  EXPECT_TRUE(IsRetryableMicrovmsError(status));
}

TEST_F(MicrovmsClientTest, UnnamedErrorsMapByHttpStatus) {
  http_.SetHandler([](const http::HttpRequest&) -> Result<http::HttpResponse> {
    return http::HttpResponse::Text(503, "<html>Service Unavailable</html>");
  });
  Status status = client_.GetMicrovm("mvm-1").status();
  EXPECT_EQ(status.code(), Code::kTransient);
  EXPECT_EQ(status.message(), "GetMicrovm: error (HTTP 503)");
  EXPECT_TRUE(IsRetryableMicrovmsError(status));
  EXPECT_EQ(MicrovmsCodeForHttpStatus(402), Code::kQuotaExceeded);
  EXPECT_EQ(MicrovmsCodeForHttpStatus(401), Code::kUnauthorized);
  EXPECT_EQ(MicrovmsCodeForHttpStatus(418), Code::kInvalidArgument);
  EXPECT_EQ(MicrovmsCodeForHttpStatus(302), Code::kInternal);
}

TEST_F(MicrovmsClientTest, FinalErrorsAreNotRetryable) {
  AnswerAll(409, {{"__type", "ConflictException"}, {"message", "clientToken reused"}});
  Status status = client_.SuspendMicrovm("mvm-1");
  EXPECT_EQ(status.code(), Code::kConflict);
  EXPECT_FALSE(IsRetryableMicrovmsError(status));
}

TEST_F(MicrovmsClientTest, TransportFailuresStayTransient) {
  http_.SetHandler([](const http::HttpRequest&) -> Result<http::HttpResponse> {
    return Transient("timed out after 30000 ms");
  });
  Status status = client_.GetMicrovm("mvm-1").status();
  EXPECT_EQ(status.code(), Code::kTransient);
  EXPECT_EQ(status.message(), "GetMicrovm: timed out after 30000 ms");
  EXPECT_TRUE(IsRetryableMicrovmsError(status));
  EXPECT_EQ(LastRequest().timeout.count(), 30000);
}

TEST_F(MicrovmsClientTest, NonJsonSuccessIsInternal) {
  http_.SetHandler([](const http::HttpRequest&) -> Result<http::HttpResponse> {
    return http::HttpResponse::Text(200, "<html>captive portal</html>");
  });
  auto vm = client_.GetMicrovm("mvm-1");
  EXPECT_EQ(vm.status().code(), Code::kInternal);
  EXPECT_NE(vm.status().message().find("not a JSON object"), std::string::npos);
  AnswerAll(200, json::array({1, 2}));
  EXPECT_EQ(client_.GetMicrovm("mvm-1").status().code(), Code::kInternal);
}

TEST_F(MicrovmsClientTest, WrongTypesAreInternalNamingTheField) {
  AnswerAll(200, {{"microvmId", "mvm-1"}, {"state", "RUNNING"}, {"startedAt", "yesterday"}});
  Status status = client_.GetMicrovm("mvm-1").status();
  EXPECT_EQ(status.code(), Code::kInternal);
  EXPECT_EQ(status.message(),
            "GetMicrovm: malformed response: startedAt: expected a timestamp (epoch seconds)");

  AnswerAll(200, {{"items", {{{"microvmId", 5}, {"state", "RUNNING"}}}}});
  status = client_.ListMicrovms(ListMicrovmsRequest{}).status();
  EXPECT_EQ(status.message(),
            "ListMicrovms: malformed response: items[0].microvmId: expected a string");

  AnswerAll(200, {{"state", "RUNNING"}});
  status = client_.GetMicrovm("mvm-1").status();
  EXPECT_EQ(status.message(),
            "GetMicrovm: malformed response: microvmId: required member is missing");

  AnswerAll(200, {{"items", "none"}});
  EXPECT_EQ(client_.ListMicrovmImages(ListMicrovmImagesRequest{}).status().code(), Code::kInternal);
  AnswerAll(200, {{"microvmId", "m"}, {"state", "RUNNING"}, {"idlePolicy", 3}});
  EXPECT_EQ(client_.GetMicrovm("m").status().message(),
            "GetMicrovm: malformed response: idlePolicy: expected an object");
}

TEST_F(MicrovmsClientTest, BadInputIsRefusedBeforeSending) {
  RunMicrovmRequest r;
  r.image_identifier = "img";
  r.maximum_duration_in_seconds = 28801;
  Status status = client_.RunMicrovm(r).status();
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "RunMicrovm: maximumDurationInSeconds: 28801 exceeds the maximum of 28800");
  r.maximum_duration_in_seconds = 60;
  r.idle_policy = IdlePolicy{59, 0, false};
  EXPECT_EQ(client_.RunMicrovm(r).status().message(),
            "RunMicrovm: idlePolicy.maxIdleDurationSeconds: 59 is below the minimum of 60");
  CreateMicrovmAuthTokenRequest token;
  token.microvm_identifier = "mvm-1";
  token.expiration_in_minutes = 61;
  token.allowed_ports = {PortSpecification::Port(8080)};
  EXPECT_EQ(client_.CreateMicrovmAuthToken(token).status().message(),
            "CreateMicrovmAuthToken: expirationInMinutes: 61 exceeds the maximum of 60");
  token.expiration_in_minutes = 60;
  token.allowed_ports.clear();
  EXPECT_EQ(client_.CreateMicrovmAuthToken(token).status().message(),
            "CreateMicrovmAuthToken: allowedPorts: 0 items is below the minimum of 1");
  EXPECT_EQ(client_.GetMicrovm("").status().message(),
            "GetMicrovm: microvmIdentifier: length 0 is below the minimum of 1");
  EXPECT_TRUE(http_.requests().empty());
}

TEST_F(MicrovmsClientTest, OversizedRunHookPayloadIsRefusedWithoutShowingIt) {
  RunMicrovmRequest r;
  r.image_identifier = "img";
  const std::string fixture = "PAYLOAD-FIXTURE-";
  std::string payload;
  while (payload.size() < 5000) payload += fixture;
  r.run_hook_payload = Secret(payload);
  Status status = client_.RunMicrovm(r).status();
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_EQ(status.message().find(fixture), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("runHookPayload"), std::string::npos);
  // 4096 bytes of multi-byte text is fewer than 4096 characters, but still over the byte limit.
  std::string wide;
  for (int i = 0; i < 2100; ++i) wide += "\xC3\xA9";
  r.run_hook_payload = Secret(wide);
  EXPECT_EQ(client_.RunMicrovm(r).status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(http_.requests().empty());
}

TEST_F(MicrovmsClientTest, ServiceMessagesEchoingThePayloadAreScrubbed) {
  const std::string payload = "SECRET-RUN-PAYLOAD-0042";
  AnswerAll(400, {{"__type", "ValidationException"},
                  {"message", "runHookPayload '" + payload + "' is not valid"}});
  RunMicrovmRequest r;
  r.image_identifier = "img";
  r.run_hook_payload = Secret(payload);
  Status status = client_.RunMicrovm(r).status();
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_EQ(status.message().find(payload), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("***"), std::string::npos);
}

TEST_F(MicrovmsClientTest, AuthTokensNeverReachStatusMessages) {
  const std::string token = "TOKEN-FIXTURE-9f8e7d";
  // A good answer: the token comes back as a Secret.
  AnswerAll(200, {{"authToken", {{"X-aws-proxy-auth", token}}}});
  CreateMicrovmAuthTokenRequest r;
  r.microvm_identifier = "mvm-1";
  r.expiration_in_minutes = 10;
  r.allowed_ports = {PortSpecification::Port(8080)};
  auto ok = client_.CreateMicrovmAuthToken(r);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->ProxyAuth().Reveal(), token);
  std::ostringstream printed;
  printed << ok->ProxyAuth();
  EXPECT_EQ(printed.str(), "***");

  // Malformed answers carrying the token: the error names the field, never the value.
  for (const json& bad : {json{{"authToken", {{"X-aws-proxy-auth", token}}}, {"x", 1}},
                          json{{"authToken", {{"X-aws-proxy-auth", json::array({token})}}}},
                          json{{"authToken", token}}, json{{"authToken", {{"Other", token}}}}}) {
    AnswerAll(200, bad);
    auto result = client_.CreateMicrovmAuthToken(r);
    if (result.ok()) continue;  // the first one is fine: unknown members are ignored
    EXPECT_EQ(result.status().code(), Code::kInternal);
    EXPECT_EQ(result.status().message().find(token), std::string::npos)
        << result.status().message();
  }
}

}  // namespace
}  // namespace mvr::aws::testing
