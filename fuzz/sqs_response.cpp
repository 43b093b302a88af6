// SQS answers (AWS JSON protocol) through the HttpClient seam: message lists and attributes,
// batch results with per-entry failures, queue URLs and attributes, error bodies.
// Input: "OP STATUS", response header lines, blank line, body; OP picks the client call.
#include <cstdint>

#include "aws/services/sqs.h"
#include "aws_fixture.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mvr;
  fuzz::FuzzedExchange x = fuzz::ParseExchange(data, size, 8);
  fuzz::FuzzedHttpClient http(x.response);
  fuzz::AwsFixture f("https://sqs.us-east-1.amazonaws.com", "sqs");
  aws::SqsClient::Options options;
  options.retry = f.retry;
  aws::SqsClient client(f.endpoint, http, f.credentials, f.deps(), options);
  const std::string queue = "https://sqs.us-east-1.amazonaws.com/123456789012/q";
  switch (x.op) {
    case 0:
      (void)client.SendMessage({queue, "body", 0});
      break;
    case 1:
      (void)client.SendMessageBatch(queue, {{"a", "one", 0}, {"b", "two", 5}});
      break;
    case 2: {
      aws::ReceiveMessageRequest r;
      r.queue_url = queue;
      r.max_messages = 10;
      r.visibility_timeout = 30;
      (void)client.ReceiveMessage(r);
      break;
    }
    case 3:
      (void)client.DeleteMessage(queue, "rh");
      break;
    case 4:
      (void)client.DeleteMessageBatch(queue, {{"a", "rh-a"}, {"b", "rh-b"}});
      break;
    case 5:
      (void)client.ChangeMessageVisibility(queue, "rh", 60);
      break;
    case 6:
      (void)client.GetQueueAttributes(queue);
      break;
    case 7:
      (void)client.GetQueueUrl("q");
      break;
    default:
      (void)client.CreateQueue("q", {{"VisibilityTimeout", "30"}});
      break;
  }
  return 0;
}
