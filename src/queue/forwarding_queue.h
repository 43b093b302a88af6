// ForwardingQueue: a Queue that hands every call to another Queue. A wrapper (fault injection, a
// queue that owns its dead-letter queue) derives from it and overrides only the calls it changes.
// Thread-safety: as the inner queue; the inner queue must outlive the wrapper.
#pragma once

#include <string>
#include <vector>

#include "queue/queue.h"

namespace mvr::queue {

class ForwardingQueue : public Queue {
 public:
  explicit ForwardingQueue(Queue& inner) : inner_(inner) {}

  Result<std::string> Send(const OutgoingMessage& message) override { return inner_.Send(message); }
  Result<std::vector<std::string>> SendBatch(
      const std::vector<OutgoingMessage>& messages) override {
    return inner_.SendBatch(messages);
  }
  Result<std::vector<QueueMessage>> Receive(const ReceiveOptions& options) override {
    return inner_.Receive(options);
  }
  Status Delete(const std::string& receipt) override { return inner_.Delete(receipt); }
  Status ChangeVisibility(const std::string& receipt, Duration visibility) override {
    return inner_.ChangeVisibility(receipt, visibility);
  }
  Result<QueueDepth> Depth() override { return inner_.Depth(); }

 protected:
  Queue& inner() const { return inner_; }

 private:
  Queue& inner_;
};

}  // namespace mvr::queue
