// SqliteStore: the Store in one SQLite file (`sqlite:PATH`), the default for one machine. Several
// processes may share the file: every write is one BEGIN IMMEDIATE transaction that reads the
// current items, checks conditions (write_plan.h) and writes, so a condition is checked and acted
// on under the database's write lock. Expired items are hidden by the injected clock at once and
// deleted later: every 256th write of a SqliteStore also deletes up to 100 of them.
// Thread-safety: safe to share between threads (SqliteDb serializes them).
#pragma once

#include <atomic>
#include <memory>

#include "store/sqlite_db.h"
#include "store/store.h"
#include "store/write_plan.h"

namespace mvr::store {

class SqliteStore final : public Store {
 public:
  // `db` may be shared with a SqliteQueue on the same file.
  SqliteStore(std::shared_ptr<SqliteDb> db, const Clock& clock, StoreOptions options = {});

  Result<std::optional<Item>> Get(const Key& key) override;
  Status Put(const Item& item, const std::optional<Condition>& condition) override;
  Result<Item> Update(const Key& key, const std::vector<store::Update>& updates,
                      const std::optional<Condition>& condition) override;
  Status Delete(const Key& key, const std::optional<Condition>& condition) override;
  Result<Page> Query(const QueryRequest& request) override;
  Result<Page> Scan(const ScanRequest& request) override;
  TransactionOutcome Transact(const std::vector<WriteOp>& writes) override;

  // Deletes up to `max_items` expired items; returns how many went.
  Result<int> PurgeExpired(int max_items);

 private:
  // REQUIRES: inside a SqliteDb transaction. The stored attributes (expired or not).
  Result<std::optional<Attributes>> ReadRow(const Key& key);
  Status WriteRow(const Key& key, const WritePlan& plan);
  // REQUIRES: inside a write transaction.
  Result<int> PurgeLocked(int max_items, int64_t now_seconds);
  // Purges now and then, so a file does not keep expired items forever.
  Status MaybePurgeLocked(int64_t now_seconds);
  Result<Page> ReadPage(const std::string& sql, const std::string& prefix_column_value,
                        const std::string& partition, const std::string& cursor, int limit,
                        bool partition_fixed);

  std::shared_ptr<SqliteDb> db_;
  const Clock& clock_;
  const StoreOptions options_;
  std::atomic<uint64_t> writes_{0};
};

}  // namespace mvr::store
