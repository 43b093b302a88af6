// Queue: the job queue of the runner set, with SQS semantics. At-least-once delivery: a received
// message is hidden for its visibility timeout and comes back unless deleted; each receive counts,
// and a message received more than `max_receive_count` times moves to the dead-letter queue.
// Sends may be delayed. A consumer of a batch reports which messages failed (CompleteBatch) and
// only those come back. Time (delays, visibility, long polls) comes from the injected Clock and
// Sleeper, so the in-memory queue runs in virtual time. Implementations: MemoryQueue, SqliteQueue,
// SqsQueue (open_queue.h picks one from a URI).
// Thread-safety: every implementation is safe to share between threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace mvr::queue {

struct QueueMessage {
  std::string id;
  std::string receipt;  // names this delivery; needed to delete it or change its visibility
  std::string body;
  int receive_count = 0;  // 1 on the first delivery
};

struct OutgoingMessage {
  std::string body;
  Duration delay{0};  // 0-900 s: hidden until then
};

struct ReceiveOptions {
  int max_messages = 1;         // 1-10
  Duration visibility{30'000};  // hidden this long after receipt (0-12 h)
  Duration wait{0};             // long poll: wait up to this long (0-20 s) for a first message
};

// How many messages a queue holds, by where they are (SQS's Approximate* attributes).
struct QueueDepth {
  int64_t waiting = 0;    // visible: the next receive may take them
  int64_t in_flight = 0;  // received, neither deleted nor visible again yet
  int64_t delayed = 0;    // sent with a delay that has not passed
  // In its dead-letter queue; nullopt when it has none (a message that always fails is then
  // received forever).
  std::optional<int64_t> dead_letters;
  std::string dead_letter_queue;  // its name, where the queue knows it
  // Why the dead-letter queue the queue names could not be read (dead_letters is then nullopt);
  // empty when it was read or there is none.
  std::string dead_letter_error;
};

// Limits shared by every implementation (those of SQS).
inline constexpr int kMaxBatch = 10;
inline constexpr Duration kMaxDelay{900'000};
inline constexpr Duration kMaxVisibility{43'200'000};
inline constexpr Duration kMaxWait{20'000};
inline constexpr size_t kMaxBodyBytes = 256 * 1024;

class Queue {
 public:
  virtual ~Queue() = default;

  // Returns the message id.
  virtual Result<std::string> Send(const OutgoingMessage& message) = 0;
  // 1-10 messages; all are sent or the call fails. Returns the ids in order.
  virtual Result<std::vector<std::string>> SendBatch(
      const std::vector<OutgoingMessage>& messages) = 0;
  // Up to max_messages visible messages (none when the wait ends first).
  virtual Result<std::vector<QueueMessage>> Receive(const ReceiveOptions& options) = 0;
  // Deleting a message that is already gone succeeds.
  virtual Status Delete(const std::string& receipt) = 0;
  // Hides the received message for `visibility` from now (0 = visible again at once). NotFound
  // when the receipt no longer names an in-flight delivery.
  virtual Status ChangeVisibility(const std::string& receipt, Duration visibility) = 0;
  // Its depth and its dead-letter queue's (the status page, `mvr doctor`). SQS's counts are
  // approximate and lag by up to a minute.
  virtual Result<QueueDepth> Depth() = 0;

  // The end of a batch: deletes every message of `batch` except those whose ids are in `failed`,
  // which become visible again after `retry_after`.
  Status CompleteBatch(const std::vector<QueueMessage>& batch,
                       const std::vector<std::string>& failed, Duration retry_after = Duration(0));
};

// Checks shared by every implementation.
Status ValidateOutgoing(const OutgoingMessage& message);
Status ValidateBatch(const std::vector<OutgoingMessage>& messages);
Status ValidateReceive(const ReceiveOptions& options);
Status ValidateVisibility(Duration visibility);

// What the local queues keep per queue.
struct QueueOptions {
  // Receives after which a message moves to the dead-letter queue; 0 = never.
  int max_receive_count = 0;
  // Long polls check for messages this often (through the Sleeper).
  Duration poll_interval{50};
};

}  // namespace mvr::queue
