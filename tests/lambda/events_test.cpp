// The Function URL and SQS event shapes and their answers.
#include "lambda/events.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "lambda/runtime_api.h"

namespace mvr::lambda {
namespace {

using nlohmann::json;

json UrlEvent(const std::string& body, bool base64) {
  return {{"version", "2.0"},
          {"rawPath", "/"},
          {"headers", {{"x-github-event", "workflow_job"}, {"content-type", "application/json"}}},
          {"requestContext", {{"http", {{"method", "POST"}, {"path", "/"}}}}},
          {"body", base64 ? Base64Encode(body) : body},
          {"isBase64Encoded", base64}};
}

TEST(FunctionUrlEventTest, Base64BodyIsDecodedToTheExactBytes) {
  const std::string raw = "{\"action\":\"queued\",\n \"x\":\"\xc3\xa9\"}";
  auto r = ParseFunctionUrlEvent(UrlEvent(raw, true).dump());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->method, "POST");
  EXPECT_EQ(r->body, raw);
}

TEST(FunctionUrlEventTest, PlainBodyAndLowerCaseHeadersAreReadCaseInsensitively) {
  auto r = ParseFunctionUrlEvent(UrlEvent("{}", false).dump());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "{}");
  EXPECT_EQ(r->headers.Get("X-GitHub-Event"), "workflow_job");
}

TEST(FunctionUrlEventTest, AnEventWithoutRequestContextIsRefusedNamingIt) {
  auto r = ParseFunctionUrlEvent(R"({"Records":[]})");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("requestContext.http.method"), std::string::npos);
  EXPECT_FALSE(ParseFunctionUrlEvent("not json").ok());
  json bad = UrlEvent("x", true);
  bad["body"] = "!!!not base64!!!";
  EXPECT_FALSE(ParseFunctionUrlEvent(bad.dump()).ok());
}

TEST(FunctionUrlEventTest, ResponseHasTheFunctionUrlShape) {
  json r = json::parse(FunctionUrlResponse(202, R"({"decision":"launch"})"));
  EXPECT_EQ(r["statusCode"], 202);
  EXPECT_EQ(r["headers"]["content-type"], "application/json");
  EXPECT_EQ(r["body"], R"({"decision":"launch"})");
  EXPECT_EQ(r["isBase64Encoded"], false);
}

TEST(FunctionUrlEventTest, AnswersAndErrorDocumentsAreWrittenWhateverTheirBytes) {
  // A message may quote a peer's bytes that are not UTF-8; writing the answer must not throw (an
  // exception here would fail the invocation instead of answering it).
  const std::string bad = "no such repo 'o/r\xc3'";
  json r = json::parse(FunctionUrlResponse(400, bad));
  EXPECT_EQ(r["body"], "no such repo 'o/r\xef\xbf\xbd'");
  json e = json::parse(ErrorDocument({"Mvr.ConfigError", bad}));
  EXPECT_EQ(e["errorType"], "Mvr.ConfigError");
  EXPECT_EQ(e["errorMessage"], "no such repo 'o/r\xef\xbf\xbd'");
}

TEST(SqsEventTest, RecordsCarryIdReceiptBodyAndReceiveCount) {
  json event = {{"Records",
                 {{{"messageId", "m-1"},
                   {"receiptHandle", "r-1"},
                   {"body", "{\"v\":1}"},
                   {"attributes", {{"ApproximateReceiveCount", "3"}}},
                   {"eventSource", "aws:sqs"}},
                  {{"messageId", "m-2"}, {"receiptHandle", "r-2"}, {"body", ""}}}}};
  auto r = ParseSqsEvent(event.dump());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].message_id, "m-1");
  EXPECT_EQ((*r)[0].receipt_handle, "r-1");
  EXPECT_EQ((*r)[0].body, "{\"v\":1}");
  EXPECT_EQ((*r)[0].receive_count, 3);
  EXPECT_EQ((*r)[1].receive_count, 1);
}

TEST(SqsEventTest, NonSqsEventsAreRefusedNamingWhatIsMissing) {
  auto r = ParseSqsEvent(R"({"requestContext":{}})");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Records"), std::string::npos);
  auto no_id = ParseSqsEvent(R"({"Records":[{"receiptHandle":"r","body":"b"}]})");
  ASSERT_FALSE(no_id.ok());
  EXPECT_NE(no_id.status().message().find("Records[0].messageId"), std::string::npos);
}

TEST(SqsEventTest, BatchItemFailuresNameOnlyTheFailedMessages) {
  EXPECT_EQ(json::parse(BatchItemFailures({})), json::parse(R"({"batchItemFailures":[]})"));
  EXPECT_EQ(json::parse(BatchItemFailures({"m-2"})),
            json::parse(R"({"batchItemFailures":[{"itemIdentifier":"m-2"}]})"));
}

}  // namespace
}  // namespace mvr::lambda
