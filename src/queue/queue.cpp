#include "queue/queue.h"

#include <algorithm>

namespace mvr::queue {

Status Queue::CompleteBatch(const std::vector<QueueMessage>& batch,
                            const std::vector<std::string>& failed, Duration retry_after) {
  Status first_error;
  for (const auto& m : batch) {
    const bool did_fail = std::find(failed.begin(), failed.end(), m.id) != failed.end();
    Status s = did_fail ? ChangeVisibility(m.receipt, retry_after) : Delete(m.receipt);
    if (!s.ok() && first_error.ok()) first_error = s.Annotate("message " + m.id);
  }
  return first_error;
}

Status ValidateOutgoing(const OutgoingMessage& message) {
  if (message.body.empty()) return InvalidArgument("a message body is empty");
  if (message.body.size() > kMaxBodyBytes) {
    return InvalidArgument("a message body is over 256 KiB (" +
                           std::to_string(message.body.size()) + " bytes)");
  }
  if (message.delay < Duration(0) || message.delay > kMaxDelay) {
    return InvalidArgument("a message delay must be 0-900 s");
  }
  return Status::Ok();
}

Status ValidateBatch(const std::vector<OutgoingMessage>& messages) {
  if (messages.empty() || static_cast<int>(messages.size()) > kMaxBatch) {
    return InvalidArgument("a batch holds 1-10 messages, got " + std::to_string(messages.size()));
  }
  for (const auto& m : messages) MVR_RETURN_IF_ERROR(ValidateOutgoing(m));
  return Status::Ok();
}

Status ValidateVisibility(Duration visibility) {
  if (visibility < Duration(0) || visibility > kMaxVisibility) {
    return InvalidArgument("a visibility timeout must be 0-12 h");
  }
  return Status::Ok();
}

Status ValidateReceive(const ReceiveOptions& options) {
  if (options.max_messages < 1 || options.max_messages > kMaxBatch) {
    return InvalidArgument("receive takes 1-10 messages, not " +
                           std::to_string(options.max_messages));
  }
  if (options.wait < Duration(0) || options.wait > kMaxWait) {
    return InvalidArgument("a long poll waits 0-20 s");
  }
  return ValidateVisibility(options.visibility);
}

}  // namespace mvr::queue
