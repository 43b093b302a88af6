// MemoryQueue: the Queue in memory, for tests and the simulation. Deterministic: ids and receipts
// come from counters, messages are delivered in send order among those visible, and every wait
// goes through the injected Sleeper (long_poll.h). A message received more than
// max_receive_count times moves to the dead-letter MemoryQueue given at construction.
// Thread-safety: safe to share between threads; the lock is never held while sleeping.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

#include "queue/queue.h"

namespace mvr::queue {

class MemoryQueue final : public Queue {
 public:
  // `dead_letters` (optional) must outlive this queue and must not lead back to it.
  MemoryQueue(const Clock& clock, Sleeper& sleeper, QueueOptions options = {},
              MemoryQueue* dead_letters = nullptr);

  Result<std::string> Send(const OutgoingMessage& message) override;
  Result<std::vector<std::string>> SendBatch(const std::vector<OutgoingMessage>& messages) override;
  Result<std::vector<QueueMessage>> Receive(const ReceiveOptions& options) override;
  Status Delete(const std::string& receipt) override;
  Status ChangeVisibility(const std::string& receipt, Duration visibility) override;
  Result<QueueDepth> Depth() override;

  // Messages held, visible or not (tests, the simulation's invariants).
  size_t size() const;
  // When the next message becomes visible (now or earlier when one is; nullopt when none is held):
  // the simulation's long polls wake then.
  std::optional<TimePoint> NextVisible() const;

 private:
  struct Stored {
    std::string id;
    std::string body;
    TimePoint visible_at;
    int receive_count = 0;
    std::string receipt;  // of the latest delivery
  };
  Result<std::vector<QueueMessage>> TryReceive(const ReceiveOptions& options);
  void AcceptDeadLetter(Stored message);
  std::string SendLocked(const OutgoingMessage& message, TimePoint now);

  const Clock& clock_;
  Sleeper& sleeper_;
  const QueueOptions options_;
  MemoryQueue* const dead_letters_;
  mutable std::mutex mu_;
  uint64_t next_seq_ = 1;                   // GUARDED_BY(mu_)
  uint64_t next_receipt_ = 1;               // GUARDED_BY(mu_)
  std::map<uint64_t, Stored> messages_;     // by send order; GUARDED_BY(mu_)
  std::map<std::string, uint64_t> seq_of_;  // id → key in messages_; GUARDED_BY(mu_)
};

}  // namespace mvr::queue
