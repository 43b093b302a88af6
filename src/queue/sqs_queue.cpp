#include "queue/sqs_queue.h"
#include "base/json_text.h"

#include <cstdlib>
#include <map>

#include <nlohmann/json.hpp>

namespace mvr::queue {
namespace {
int Seconds(Duration d) { return static_cast<int>((d.count() + 999) / 1000); }
}  // namespace

SqsQueue::SqsQueue(aws::SqsClient& client, std::string queue_url)
    : client_(client), url_(std::move(queue_url)) {}

SqsQueue::SqsQueue(std::unique_ptr<aws::SqsClient> client, std::string queue_url)
    : owned_(std::move(client)), client_(*owned_), url_(std::move(queue_url)) {}

Result<std::string> SqsQueue::Send(const OutgoingMessage& message) {
  MVR_RETURN_IF_ERROR(ValidateOutgoing(message));
  return client_.SendMessage(aws::SendMessageRequest{url_, message.body, Seconds(message.delay)});
}

Result<std::vector<std::string>> SqsQueue::SendBatch(const std::vector<OutgoingMessage>& messages) {
  MVR_RETURN_IF_ERROR(ValidateBatch(messages));
  std::vector<aws::SendBatchEntry> entries;
  for (size_t i = 0; i < messages.size(); ++i) {
    entries.push_back(
        aws::SendBatchEntry{"e" + std::to_string(i), messages[i].body, Seconds(messages[i].delay)});
  }
  MVR_ASSIGN_OR_RETURN(aws::BatchResult result, client_.SendMessageBatch(url_, entries));
  if (!result.failed.empty()) {
    const auto& f = result.failed.front();
    return Transient("send batch: " + std::to_string(result.failed.size()) + " of " +
                     std::to_string(entries.size()) + " messages failed (" + f.code + ": " +
                     f.message + "); the others were sent");
  }
  std::vector<std::string> ids;
  for (const auto& e : entries) ids.push_back(result.succeeded[e.id]);
  return ids;
}

Result<std::vector<QueueMessage>> SqsQueue::Receive(const ReceiveOptions& options) {
  MVR_RETURN_IF_ERROR(ValidateReceive(options));
  aws::ReceiveMessageRequest request;
  request.queue_url = url_;
  request.max_messages = options.max_messages;
  request.wait_time_seconds = Seconds(options.wait);
  request.visibility_timeout = Seconds(options.visibility);
  MVR_ASSIGN_OR_RETURN(std::vector<aws::SqsMessage> got, client_.ReceiveMessage(request));
  std::vector<QueueMessage> out;
  for (auto& m : got) {
    out.push_back(QueueMessage{m.message_id, m.receipt_handle, std::move(m.body), m.receive_count});
  }
  return out;
}

Status SqsQueue::Delete(const std::string& receipt) {
  if (receipt.empty()) return InvalidArgument("delete: the receipt is empty");
  return client_.DeleteMessage(url_, receipt);
}

Status SqsQueue::ChangeVisibility(const std::string& receipt, Duration visibility) {
  MVR_RETURN_IF_ERROR(ValidateVisibility(visibility));
  Status s = client_.ChangeMessageVisibility(url_, receipt, Seconds(visibility));
  // SQS answers 400 for a receipt whose message is gone or no longer in flight.
  if (s.code() == Code::kInvalidArgument &&
      (s.error_type().find("ReceiptHandle") != std::string::npos ||
       s.error_type().find("MessageNotInflight") != std::string::npos)) {
    return NotFound("change visibility: " + s.message()).WithErrorType(s.error_type());
  }
  return s;
}

Result<QueueDepth> SqsQueue::Depth() {
  auto count = [](std::map<std::string, std::string>& attrs, const char* name) {
    return static_cast<int64_t>(std::atoll(attrs[name].c_str()));
  };
  MVR_ASSIGN_OR_RETURN(
      auto attrs, client_.GetQueueAttributes(
                      url_, {"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
                             "ApproximateNumberOfMessagesDelayed", "RedrivePolicy"}));
  QueueDepth depth;
  depth.waiting = count(attrs, "ApproximateNumberOfMessages");
  depth.in_flight = count(attrs, "ApproximateNumberOfMessagesNotVisible");
  depth.delayed = count(attrs, "ApproximateNumberOfMessagesDelayed");
  nlohmann::json redrive = nlohmann::json::parse(attrs["RedrivePolicy"], nullptr, false);
  const std::string arn = redrive.is_object() ? redrive.value("deadLetterTargetArn", "") : "";
  if (arn.empty()) return depth;
  // The dead-letter queue is named by its ARN, whose last part is its name.
  depth.dead_letter_queue = arn.substr(arn.rfind(':') + 1);
  // The queue's own counts stand when its dead-letter queue cannot be read.
  Result<std::string> dlq = client_.GetQueueUrl(depth.dead_letter_queue);
  auto dead = dlq.ok() ? client_.GetQueueAttributes(*dlq, {"ApproximateNumberOfMessages"})
                       : Result<std::map<std::string, std::string>>(dlq.status());
  if (dead.ok()) {
    depth.dead_letters = count(*dead, "ApproximateNumberOfMessages");
  } else {
    depth.dead_letter_error = dead.status().message();
  }
  return depth;
}

Result<QueueUrls> CreateQueueWithDeadLetter(aws::SqsClient& client, const std::string& name,
                                            int max_receive_count) {
  if (max_receive_count < 1 || max_receive_count > 1000) {
    return InvalidArgument("maxReceiveCount must be 1-1000");
  }
  QueueUrls urls;
  MVR_ASSIGN_OR_RETURN(urls.dead_letter, client.CreateQueue(name + "-dlq"));
  auto attrs = client.GetQueueAttributes(urls.dead_letter, {"QueueArn"});
  Status status = attrs.status();
  if (status.ok() && attrs->count("QueueArn") == 0) {
    status = Internal("GetQueueAttributes returned no QueueArn");
  }
  if (status.ok()) {
    nlohmann::json redrive = {{"deadLetterTargetArn", attrs->at("QueueArn")},
                              {"maxReceiveCount", std::to_string(max_receive_count)}};
    auto created = client.CreateQueue(name, {{"RedrivePolicy", JsonText(redrive)}});
    if (created.ok()) {
      urls.queue = *created;
      return urls;
    }
    status = created.status();
  }
  client.DeleteQueue(urls.dead_letter).IgnoreError();
  return status.Annotate("creating queue " + name + " with its dead-letter queue");
}

}  // namespace mvr::queue
