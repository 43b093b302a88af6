// Amazon SQS client over the AWS JSON protocol (AmazonSQS.<Operation>): send (single and batch,
// with delay), long-poll receive with visibility and attributes, delete, visibility changes, queue
// attributes, and queue setup for tests and scripts. A missing queue is NotFound; throttling
// Throttled; batch entries that fail are reported per entry, not as a failed call.
// Thread-safety: safe to share between threads when the injected seam objects are.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "aws/services/json_protocol.h"

namespace mvr::aws {

struct SqsMessage {
  std::string message_id;
  std::string receipt_handle;  // opaque; needed to delete or change visibility
  std::string body;
  std::map<std::string, std::string> attributes;  // ApproximateReceiveCount, SentTimestamp ...
  int receive_count = 0;                          // ApproximateReceiveCount, 0 when not requested
};

struct SendMessageRequest {
  std::string queue_url;
  std::string body;
  int delay_seconds = 0;  // 0-900
};

struct SendBatchEntry {
  std::string id;  // unique within the batch: [A-Za-z0-9_-]{1,80}
  std::string body;
  int delay_seconds = 0;
};

struct DeleteBatchEntry {
  std::string id;
  std::string receipt_handle;
};

struct BatchFailure {
  std::string id;
  std::string code;
  std::string message;
  bool sender_fault = false;
};

struct BatchResult {
  std::map<std::string, std::string> succeeded;  // entry id → MessageId ("" for deletes)
  std::vector<BatchFailure> failed;
};

struct ReceiveMessageRequest {
  std::string queue_url;
  int max_messages = 1;                   // 1-10
  int wait_time_seconds = 0;              // 0-20 (long polling)
  std::optional<int> visibility_timeout;  // seconds, 0-43200
  // System attributes to return; ApproximateReceiveCount is always asked for.
  std::vector<std::string> attribute_names = {"ApproximateReceiveCount", "SentTimestamp"};
};

class SqsClient {
 public:
  struct Options {
    Duration timeout{10'000};  // long polls add their wait time on top
    RetryPolicy retry;
  };

  SqsClient(const ServiceEndpoint& endpoint, http::HttpClient& http,
            CredentialsProvider& credentials, Seam seam);
  SqsClient(const ServiceEndpoint& endpoint, http::HttpClient& http,
            CredentialsProvider& credentials, Seam seam, Options options);

  // Returns the MessageId.
  Result<std::string> SendMessage(const SendMessageRequest& request);
  // 1-10 entries. The call fails only when the whole request fails.
  Result<BatchResult> SendMessageBatch(const std::string& queue_url,
                                       const std::vector<SendBatchEntry>& entries);
  Result<std::vector<SqsMessage>> ReceiveMessage(const ReceiveMessageRequest& request);
  Status DeleteMessage(const std::string& queue_url, const std::string& receipt_handle);
  Result<BatchResult> DeleteMessageBatch(const std::string& queue_url,
                                         const std::vector<DeleteBatchEntry>& entries);
  Status ChangeMessageVisibility(const std::string& queue_url, const std::string& receipt_handle,
                                 int visibility_timeout_seconds);
  // Names such as "ApproximateNumberOfMessages", or {"All"}.
  Result<std::map<std::string, std::string>> GetQueueAttributes(
      const std::string& queue_url, const std::vector<std::string>& names = {"All"});
  Result<std::string> GetQueueUrl(const std::string& queue_name);

  // Returns the queue URL. Attributes as SQS names them ("VisibilityTimeout": "30",
  // "RedrivePolicy": "{...}").
  Result<std::string> CreateQueue(const std::string& queue_name,
                                  const std::map<std::string, std::string>& attributes = {});
  Status DeleteQueue(const std::string& queue_url);

 private:
  JsonProtocolClient rpc_;
};

}  // namespace mvr::aws
