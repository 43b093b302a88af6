#include "queue/memory_queue.h"

#include "queue/long_poll.h"

namespace mvr::queue {
namespace {
// A receipt is "<message id>/<delivery number>".
std::string MessageIdOfReceipt(const std::string& receipt) {
  return receipt.substr(0, receipt.find('/'));
}
}  // namespace

MemoryQueue::MemoryQueue(const Clock& clock, Sleeper& sleeper, QueueOptions options,
                         MemoryQueue* dead_letters)
    : clock_(clock), sleeper_(sleeper), options_(options), dead_letters_(dead_letters) {}

std::string MemoryQueue::SendLocked(const OutgoingMessage& message, TimePoint now) {
  const uint64_t seq = next_seq_++;
  Stored s;
  s.id = "m" + std::to_string(seq);
  s.body = message.body;
  s.visible_at = now + message.delay;
  seq_of_[s.id] = seq;
  std::string id = s.id;
  messages_.emplace(seq, std::move(s));
  return id;
}

Result<std::string> MemoryQueue::Send(const OutgoingMessage& message) {
  MVR_RETURN_IF_ERROR(ValidateOutgoing(message));
  std::lock_guard<std::mutex> lock(mu_);
  return SendLocked(message, clock_.Now());
}

Result<std::vector<std::string>> MemoryQueue::SendBatch(
    const std::vector<OutgoingMessage>& messages) {
  MVR_RETURN_IF_ERROR(ValidateBatch(messages));
  std::lock_guard<std::mutex> lock(mu_);
  const TimePoint now = clock_.Now();
  std::vector<std::string> ids;
  for (const auto& m : messages) ids.push_back(SendLocked(m, now));
  return ids;
}

void MemoryQueue::AcceptDeadLetter(Stored message) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t seq = next_seq_++;
  message.visible_at = clock_.Now();
  message.receive_count = 0;
  message.receipt.clear();
  seq_of_[message.id] = seq;
  messages_.emplace(seq, std::move(message));
}

Result<std::vector<QueueMessage>> MemoryQueue::TryReceive(const ReceiveOptions& options) {
  std::vector<Stored> dead;
  std::vector<QueueMessage> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const TimePoint now = clock_.Now();
    for (auto it = messages_.begin();
         it != messages_.end() && static_cast<int>(out.size()) < options.max_messages;) {
      Stored& m = it->second;
      if (m.visible_at > now) {
        ++it;
        continue;
      }
      if (dead_letters_ && options_.max_receive_count > 0 &&
          m.receive_count >= options_.max_receive_count) {
        seq_of_.erase(m.id);
        dead.push_back(std::move(m));
        it = messages_.erase(it);
        continue;
      }
      m.receive_count++;
      m.visible_at = now + options.visibility;
      m.receipt = m.id + "/" + std::to_string(next_receipt_++);
      out.push_back(QueueMessage{m.id, m.receipt, m.body, m.receive_count});
      ++it;
    }
  }
  for (auto& m : dead) dead_letters_->AcceptDeadLetter(std::move(m));
  return out;
}

Result<std::vector<QueueMessage>> MemoryQueue::Receive(const ReceiveOptions& options) {
  MVR_RETURN_IF_ERROR(ValidateReceive(options));
  return LongPoll(clock_, sleeper_, options.wait, options_.poll_interval,
                  [&] { return TryReceive(options); });
}

Status MemoryQueue::Delete(const std::string& receipt) {
  if (receipt.empty()) return InvalidArgument("delete: the receipt is empty");
  std::lock_guard<std::mutex> lock(mu_);
  auto seq = seq_of_.find(MessageIdOfReceipt(receipt));
  if (seq == seq_of_.end()) return Status::Ok();
  auto it = messages_.find(seq->second);
  if (it->second.receipt != receipt) return Status::Ok();  // a stale delivery deletes nothing
  messages_.erase(it);
  seq_of_.erase(seq);
  return Status::Ok();
}

Status MemoryQueue::ChangeVisibility(const std::string& receipt, Duration visibility) {
  MVR_RETURN_IF_ERROR(ValidateVisibility(visibility));
  std::lock_guard<std::mutex> lock(mu_);
  const TimePoint now = clock_.Now();
  auto seq = seq_of_.find(MessageIdOfReceipt(receipt));
  if (seq != seq_of_.end()) {
    Stored& m = messages_.at(seq->second);
    if (m.receipt == receipt && m.visible_at > now) {
      m.visible_at = now + visibility;
      return Status::Ok();
    }
  }
  return NotFound("change visibility: receipt " + receipt + " names no message in flight");
}

size_t MemoryQueue::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return messages_.size();
}

Result<QueueDepth> MemoryQueue::Depth() {
  QueueDepth depth;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const TimePoint now = clock_.Now();
    for (const auto& [seq, m] : messages_) {
      if (m.visible_at <= now) {
        ++depth.waiting;
      } else if (m.receive_count > 0) {
        ++depth.in_flight;
      } else {
        ++depth.delayed;
      }
    }
  }
  // Not under the lock: the dead-letter queue takes its own.
  if (dead_letters_ != nullptr) depth.dead_letters = static_cast<int64_t>(dead_letters_->size());
  return depth;
}

std::optional<TimePoint> MemoryQueue::NextVisible() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<TimePoint> next;
  for (const auto& [seq, m] : messages_) {
    if (!next || m.visible_at < *next) next = m.visible_at;
  }
  return next;
}

}  // namespace mvr::queue
