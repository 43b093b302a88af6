#include "queue/sqlite_queue.h"

#include "base/numbers.h"
#include "queue/long_poll.h"

namespace mvr::queue {
namespace {

int64_t Ms(TimePoint t) { return t.time_since_epoch().count(); }

// A receipt is "<message id>.<random token>"; the row keeps the latest one.
Result<int64_t> RowIdOfReceipt(const std::string& receipt) {
  size_t dot = receipt.find('.');
  if (dot == std::string::npos || dot == 0) {
    return InvalidArgument("'" + receipt + "' is not a receipt this queue gave out");
  }
  std::optional<int64_t> id =
      ParseInt64InRange(std::string_view(receipt).substr(0, dot), 1, INT64_MAX);
  if (!id) return InvalidArgument("'" + receipt + "' is not a receipt this queue gave out");
  return *id;
}

}  // namespace

SqliteQueue::SqliteQueue(std::shared_ptr<store::SqliteDb> db, std::string name,
                         std::string dead_letter_name, const Seam& seam, QueueOptions options)
    : db_(std::move(db)),
      name_(std::move(name)),
      dead_letter_name_(std::move(dead_letter_name)),
      seam_(seam),
      options_(options) {}

Result<std::string> SqliteQueue::InsertLocked(const OutgoingMessage& message, int64_t now_ms) {
  MVR_ASSIGN_OR_RETURN(
      store::SqliteStatement * insert,
      db_->Prepare(
          "INSERT INTO messages (queue, body, sent_at, visible_at) VALUES (?1, ?2, ?3, ?4) "
          "RETURNING id"));
  insert->Bind(1, name_)
      .Bind(2, message.body)
      .Bind(3, now_ms)
      .Bind(4, now_ms + message.delay.count());
  MVR_ASSIGN_OR_RETURN(bool row, insert->Step());
  if (!row) return Internal("sqlite queue: insert returned no id");
  std::string id = std::to_string(insert->Int(0));
  MVR_RETURN_IF_ERROR(insert->Run());
  return id;
}

Result<std::string> SqliteQueue::Send(const OutgoingMessage& message) {
  MVR_ASSIGN_OR_RETURN(auto ids, SendBatch({message}));
  return ids.front();
}

Result<std::vector<std::string>> SqliteQueue::SendBatch(
    const std::vector<OutgoingMessage>& messages) {
  MVR_RETURN_IF_ERROR(ValidateBatch(messages));
  const int64_t now = Ms(seam_.clock.Now());
  std::vector<std::string> ids;
  MVR_RETURN_IF_ERROR(db_->Write([&]() -> Status {
    for (const auto& m : messages) {
      MVR_ASSIGN_OR_RETURN(std::string id, InsertLocked(m, now));
      ids.push_back(std::move(id));
    }
    return Status::Ok();
  }));
  return ids;
}

Result<std::vector<QueueMessage>> SqliteQueue::TryReceive(const ReceiveOptions& options) {
  const int64_t now = Ms(seam_.clock.Now());
  const bool dead_lettering = !dead_letter_name_.empty() && options_.max_receive_count > 0;
  std::vector<QueueMessage> out;
  // Tokens are drawn before the transaction: the write lock is held for SQL only.
  std::vector<std::string> tokens;
  for (int i = 0; i < options.max_messages; ++i) tokens.push_back(seam_.random.Hex(8));
  MVR_RETURN_IF_ERROR(db_->Write([&]() -> Status {
    out.clear();
    MVR_ASSIGN_OR_RETURN(
        store::SqliteStatement * pick,
        db_->Prepare("SELECT id, body, receive_count FROM messages WHERE queue = ?1 AND "
                     "visible_at <= ?2 ORDER BY visible_at, id LIMIT ?3"));
    MVR_ASSIGN_OR_RETURN(
        store::SqliteStatement * deliver,
        db_->Prepare("UPDATE messages SET receive_count = receive_count + 1, visible_at = ?2, "
                     "receipt = ?3 WHERE id = ?1"));
    MVR_ASSIGN_OR_RETURN(
        store::SqliteStatement * bury,
        db_->Prepare("UPDATE messages SET queue = ?2, receive_count = 0, visible_at = ?3, "
                     "receipt = NULL WHERE id = ?1"));
    // Dead-lettered rows free their places, so pick again until the batch is full or none is left.
    for (int rounds = 0; rounds < 100 && static_cast<int>(out.size()) < options.max_messages;
         ++rounds) {
      pick->Reset().Bind(1, name_).Bind(2, now).Bind(
          3, int64_t{options.max_messages} - static_cast<int64_t>(out.size()));
      struct Row {
        int64_t id;
        std::string body;
        int receive_count;
      };
      std::vector<Row> rows;
      while (true) {
        MVR_ASSIGN_OR_RETURN(bool row, pick->Step());
        if (!row) break;
        rows.push_back(Row{pick->Int(0), pick->Text(1), static_cast<int>(pick->Int(2))});
      }
      pick->Reset();
      if (rows.empty()) break;
      for (auto& r : rows) {
        if (dead_lettering && r.receive_count >= options_.max_receive_count) {
          MVR_RETURN_IF_ERROR(
              bury->Reset().Bind(1, r.id).Bind(2, dead_letter_name_).Bind(3, now).Run());
          continue;
        }
        std::string receipt = std::to_string(r.id) + "." + tokens[out.size()];
        MVR_RETURN_IF_ERROR(deliver->Reset()
                                .Bind(1, r.id)
                                .Bind(2, now + options.visibility.count())
                                .Bind(3, receipt)
                                .Run());
        out.push_back(
            QueueMessage{std::to_string(r.id), receipt, std::move(r.body), r.receive_count + 1});
      }
    }
    return Status::Ok();
  }));
  return out;
}

Result<std::vector<QueueMessage>> SqliteQueue::Receive(const ReceiveOptions& options) {
  MVR_RETURN_IF_ERROR(ValidateReceive(options));
  return LongPoll(seam_.clock, seam_.sleeper, options.wait, options_.poll_interval,
                  [&] { return TryReceive(options); });
}

Status SqliteQueue::Delete(const std::string& receipt) {
  MVR_ASSIGN_OR_RETURN(int64_t id, RowIdOfReceipt(receipt));
  return db_->Write([&]() -> Status {
    MVR_ASSIGN_OR_RETURN(store::SqliteStatement * del,
                         db_->Prepare("DELETE FROM messages WHERE id = ?1 AND receipt = ?2"));
    return del->Bind(1, id).Bind(2, receipt).Run();
  });
}

Status SqliteQueue::ChangeVisibility(const std::string& receipt, Duration visibility) {
  MVR_RETURN_IF_ERROR(ValidateVisibility(visibility));
  MVR_ASSIGN_OR_RETURN(int64_t id, RowIdOfReceipt(receipt));
  const int64_t now = Ms(seam_.clock.Now());
  bool changed = false;
  MVR_RETURN_IF_ERROR(db_->Write([&]() -> Status {
    MVR_ASSIGN_OR_RETURN(
        store::SqliteStatement * change,
        db_->Prepare("UPDATE messages SET visible_at = ?3 WHERE id = ?1 AND receipt = ?2 AND "
                     "visible_at > ?4"));
    MVR_RETURN_IF_ERROR(
        change->Bind(1, id).Bind(2, receipt).Bind(3, now + visibility.count()).Bind(4, now).Run());
    changed = db_->Changes() > 0;
    return Status::Ok();
  }));
  if (!changed) {
    return NotFound("change visibility: receipt " + receipt + " names no message in flight");
  }
  return Status::Ok();
}

Result<QueueDepth> SqliteQueue::Depth() {
  const int64_t now = Ms(seam_.clock.Now());
  QueueDepth depth;
  MVR_RETURN_IF_ERROR(db_->Read([&]() -> Status {
    MVR_ASSIGN_OR_RETURN(store::SqliteStatement * count,
                         db_->Prepare("SELECT COALESCE(SUM(visible_at <= ?2), 0), "
                                      "COALESCE(SUM(visible_at > ?2 AND receive_count > 0), 0), "
                                      "COALESCE(SUM(visible_at > ?2 AND receive_count = 0), 0) "
                                      "FROM messages WHERE queue = ?1"));
    count->Reset().Bind(1, name_).Bind(2, now);
    MVR_ASSIGN_OR_RETURN(bool row, count->Step());
    if (row) {
      depth.waiting = count->Int(0);
      depth.in_flight = count->Int(1);
      depth.delayed = count->Int(2);
    }
    count->Reset();
    if (dead_letter_name_.empty()) return Status::Ok();
    MVR_ASSIGN_OR_RETURN(store::SqliteStatement * dead,
                         db_->Prepare("SELECT COUNT(*) FROM messages WHERE queue = ?1"));
    dead->Reset().Bind(1, dead_letter_name_);
    MVR_ASSIGN_OR_RETURN(bool dead_row, dead->Step());
    depth.dead_letters = dead_row ? dead->Int(0) : 0;
    dead->Reset();
    return Status::Ok();
  }));
  depth.dead_letter_queue = dead_letter_name_;
  return depth;
}

}  // namespace mvr::queue
