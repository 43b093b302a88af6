// SqsQueue: the Queue on one Amazon SQS queue (`sqs:QUEUE_URL`). Dead-lettering is the queue's
// own redrive policy (CreateQueueWithDeadLetter sets one up); SQS counts time in whole seconds, so
// delays, visibility timeouts and long polls are rounded up to seconds. Partial batches delete the
// successes in one DeleteMessageBatch.
// Thread-safety: safe to share between threads when the client is.
#pragma once

#include <memory>
#include <string>

#include "aws/services/sqs.h"
#include "queue/queue.h"

namespace mvr::queue {

class SqsQueue final : public Queue {
 public:
  SqsQueue(aws::SqsClient& client, std::string queue_url);
  SqsQueue(std::unique_ptr<aws::SqsClient> client, std::string queue_url);

  Result<std::string> Send(const OutgoingMessage& message) override;
  Result<std::vector<std::string>> SendBatch(const std::vector<OutgoingMessage>& messages) override;
  Result<std::vector<QueueMessage>> Receive(const ReceiveOptions& options) override;
  Status Delete(const std::string& receipt) override;
  Status ChangeVisibility(const std::string& receipt, Duration visibility) override;
  Result<QueueDepth> Depth() override;

  const std::string& url() const { return url_; }

 private:
  std::unique_ptr<aws::SqsClient> owned_;
  aws::SqsClient& client_;
  const std::string url_;
};

struct QueueUrls {
  std::string queue;
  std::string dead_letter;
};

// Creates `name` and `name`-dlq, the first redriving to the second after `max_receive_count`
// receives. When the second step fails the dead-letter queue is deleted again.
Result<QueueUrls> CreateQueueWithDeadLetter(aws::SqsClient& client, const std::string& name,
                                            int max_receive_count);

}  // namespace mvr::queue
