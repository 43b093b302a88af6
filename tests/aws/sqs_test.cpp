// SQS client against a scripted HttpClient: request documents, answers, batch failures, errors,
// input checks and malformed answers.
#include "aws/services/sqs.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "fake_http.h"

namespace mvr::aws {
namespace {

constexpr char kQueue[] = "https://sqs.us-east-1.amazonaws.com/123456789012/jobs";

ReceiveMessageRequest Receive() {
  ReceiveMessageRequest r;
  r.queue_url = kQueue;
  return r;
}

class SqsTest : public ::testing::Test {
 protected:
  SqsTest() {
    endpoint_.url = "https://sqs.us-east-1.amazonaws.com";
    endpoint_.region = "us-east-1";
    endpoint_.signing_name = "sqs";
  }
  SqsClient Client() {
    SqsClient::Options o;
    o.retry.max_attempts = 1;
    return SqsClient(endpoint_, http_, creds_, seam_.seam, o);
  }
  nlohmann::json Sent(size_t i) const { return nlohmann::json::parse(http_.requests().at(i).body); }

  ServiceEndpoint endpoint_;
  testing::FakeHttpClient http_;
  StaticCredentialsProvider creds_{testing::TestCredentials()};
  testing::ManualSeam seam_;
};

TEST_F(SqsTest, SendMessageWithDelay) {
  http_.PushJson(200, R"({"MessageId":"m-1","MD5OfMessageBody":"x"})");
  auto id = Client().SendMessage(SendMessageRequest{kQueue, "hello", 30});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, "m-1");
  const auto& req = http_.requests().at(0);
  EXPECT_EQ(req.headers.Get("X-Amz-Target"), "AmazonSQS.SendMessage");
  EXPECT_EQ(req.headers.Get("Content-Type"), "application/x-amz-json-1.0");
  EXPECT_EQ(Sent(0)["DelaySeconds"], 30);
  EXPECT_EQ(Sent(0)["MessageBody"], "hello");
}

TEST_F(SqsTest, SendMessageBatchReportsPerEntryFailures) {
  http_.PushJson(200, R"({"Successful":[{"Id":"a","MessageId":"m-a"}],
      "Failed":[{"Id":"b","Code":"InvalidParameterValue","Message":"too big","SenderFault":true}]})");
  auto r = Client().SendMessageBatch(kQueue, {{"a", "one", 0}, {"b", "two", 5}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->succeeded.at("a"), "m-a");
  ASSERT_EQ(r->failed.size(), 1u);
  EXPECT_EQ(r->failed[0].id, "b");
  EXPECT_TRUE(r->failed[0].sender_fault);
  EXPECT_EQ(Sent(0)["Entries"][1]["DelaySeconds"], 5);
}

TEST_F(SqsTest, ReceiveMessageLongPollsWithVisibilityAndReceiveCount) {
  http_.PushJson(200, R"({"Messages":[{"MessageId":"m-1","ReceiptHandle":"rh-1","Body":"job",
      "Attributes":{"ApproximateReceiveCount":"3","SentTimestamp":"1767225600000"}}]})");
  ReceiveMessageRequest req;
  req.queue_url = kQueue;
  req.max_messages = 10;
  req.wait_time_seconds = 20;
  req.visibility_timeout = 60;
  auto r = Client().ReceiveMessage(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(r->at(0).receive_count, 3);
  EXPECT_EQ(r->at(0).receipt_handle, "rh-1");
  EXPECT_EQ(r->at(0).attributes.at("SentTimestamp"), "1767225600000");
  nlohmann::json sent = Sent(0);
  EXPECT_EQ(sent["WaitTimeSeconds"], 20);
  EXPECT_EQ(sent["VisibilityTimeout"], 60);
  EXPECT_EQ(sent["MaxNumberOfMessages"], 10);
  // The receive count is asked for as a message system attribute; botocore's model types the
  // deprecated AttributeNames as queue attribute names, which it is not.
  const nlohmann::json& names = sent["MessageSystemAttributeNames"];
  EXPECT_NE(std::find(names.begin(), names.end(), "ApproximateReceiveCount"), names.end());
  EXPECT_FALSE(sent.contains("AttributeNames"));
  // The HTTP timeout covers the long poll.
  EXPECT_GT(http_.requests().at(0).timeout, Duration(20'000));
}

TEST_F(SqsTest, ReceiveNothingIsAnEmptyList) {
  http_.PushJson(200, "{}");
  auto r = Client().ReceiveMessage(Receive());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
}

TEST_F(SqsTest, DeleteAndVisibilityAndAttributes) {
  http_.PushJson(200, "{}");
  EXPECT_TRUE(Client().DeleteMessage(kQueue, "rh-1").ok());
  http_.PushJson(200, "{}");
  EXPECT_TRUE(Client().ChangeMessageVisibility(kQueue, "rh-1", 0).ok());
  EXPECT_EQ(Sent(1)["VisibilityTimeout"], 0);
  http_.PushJson(200, R"({"Successful":[{"Id":"x"}]})");
  auto batch = Client().DeleteMessageBatch(kQueue, {{"x", "rh-x"}});
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->succeeded.count("x"), 1u);
  http_.PushJson(200, R"({"Attributes":{"ApproximateNumberOfMessages":"4"}})");
  auto attrs = Client().GetQueueAttributes(kQueue, {"ApproximateNumberOfMessages"});
  ASSERT_TRUE(attrs.ok());
  EXPECT_EQ(attrs->at("ApproximateNumberOfMessages"), "4");
}

TEST_F(SqsTest, MissingQueueIsNotFound) {
  http_.PushJson(400, R"({"__type":"com.amazonaws.sqs#QueueDoesNotExist",
                          "message":"The specified queue does not exist."})",
                 {{"x-amzn-query-error", "AWS.SimpleQueueService.NonExistentQueue;Sender"}});
  auto r = Client().GetQueueUrl("nope");
  EXPECT_EQ(r.status().code(), Code::kNotFound);
}

TEST_F(SqsTest, ThrottlingServerErrorsAndTimeouts) {
  http_.PushJson(400, R"({"__type":"com.amazonaws.sqs#RequestThrottled"})");
  EXPECT_EQ(Client().SendMessage(SendMessageRequest{kQueue, "x", 0}).status().code(),
            Code::kThrottled);
  http_.PushJson(500, R"({"__type":"com.amazonaws.sqs#InternalError"})");
  EXPECT_EQ(Client().SendMessage(SendMessageRequest{kQueue, "x", 0}).status().code(),
            Code::kTransient);
  http_.Push(Transient("timed out"));
  EXPECT_EQ(Client().DeleteMessage(kQueue, "rh").code(), Code::kTransient);
}

TEST_F(SqsTest, InputChecksNameTheProblem) {
  auto bad_delay = Client().SendMessage(SendMessageRequest{kQueue, "x", 901});
  EXPECT_EQ(bad_delay.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad_delay.status().message().find("delay"), std::string::npos);
  EXPECT_EQ(Client().SendMessage(SendMessageRequest{"jobs", "x", 0}).status().code(),
            Code::kInvalidArgument);
  ReceiveMessageRequest too_many;
  too_many.queue_url = kQueue;
  too_many.max_messages = 11;
  EXPECT_EQ(Client().ReceiveMessage(too_many).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Client().SendMessageBatch(kQueue, {}).status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(http_.requests().empty());
}

TEST_F(SqsTest, MalformedAnswersAreInternal) {
  http_.PushJson(200, "{}");
  EXPECT_EQ(Client().SendMessage(SendMessageRequest{kQueue, "x", 0}).status().code(),
            Code::kInternal);
  http_.PushJson(200, R"({"Messages":[{"Body":"no ids"}]})");
  EXPECT_EQ(Client().ReceiveMessage(Receive()).status().code(), Code::kInternal);
  http_.PushJson(200, R"({"Messages":[{"MessageId":"m","ReceiptHandle":"r",
                          "Attributes":{"ApproximateReceiveCount":"many"}}]})");
  EXPECT_EQ(Client().ReceiveMessage(Receive()).status().code(), Code::kInternal);
  http_.PushJson(200, R"({"Successful":"x"})");
  EXPECT_EQ(Client().DeleteMessageBatch(kQueue, {{"a", "r"}}).status().code(), Code::kInternal);
  http_.PushJson(200, "<xml/>");
  EXPECT_EQ(Client().CreateQueue("jobs").status().code(), Code::kInternal);
}

}  // namespace
}  // namespace mvr::aws
