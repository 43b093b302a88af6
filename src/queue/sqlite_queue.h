// SqliteQueue: the Queue in an SQLite file (`sqlite:PATH`), shareable between processes like the
// SQLite store (and in the same file). Many named queues live in one table; each receive is one
// BEGIN IMMEDIATE transaction that picks visible messages, moves those past max_receive_count to
// the dead-letter queue, and stamps the rest with a new receipt and visibility deadline.
// Thread-safety: safe to share between threads (SqliteDb serializes them).
#pragma once

#include <memory>
#include <string>

#include "base/seam.h"
#include "queue/queue.h"
#include "store/sqlite_db.h"

namespace mvr::queue {

class SqliteQueue final : public Queue {
 public:
  // `dead_letter_name` ("" = none) is another queue in the same file. Receipts draw from the
  // seam's random source, so deliveries in different processes never share one.
  SqliteQueue(std::shared_ptr<store::SqliteDb> db, std::string name, std::string dead_letter_name,
              const Seam& seam, QueueOptions options = {});

  Result<std::string> Send(const OutgoingMessage& message) override;
  Result<std::vector<std::string>> SendBatch(const std::vector<OutgoingMessage>& messages) override;
  Result<std::vector<QueueMessage>> Receive(const ReceiveOptions& options) override;
  Status Delete(const std::string& receipt) override;
  Status ChangeVisibility(const std::string& receipt, Duration visibility) override;
  Result<QueueDepth> Depth() override;

 private:
  Result<std::vector<QueueMessage>> TryReceive(const ReceiveOptions& options);
  Result<std::string> InsertLocked(const OutgoingMessage& message, int64_t now_ms);

  std::shared_ptr<store::SqliteDb> db_;
  const std::string name_;
  const std::string dead_letter_name_;
  Seam seam_;
  const QueueOptions options_;
};

}  // namespace mvr::queue
