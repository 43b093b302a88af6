// Store: the conditional key-value store behind warm pools and the runner set. Items live under a
// partition key and a sort key; every write may carry a typed Condition; a failed condition is
// Code::kConflict (see IsConditionFailed), distinct from Throttled and Transient. Reads are
// strongly consistent. Items whose time-to-live attribute (epoch seconds, StoreOptions) is at or
// before the injected clock's now are gone for every read and condition, even before a backend
// deletes them. Implementations: MemoryStore, SqliteStore, DynamoDbStore (open_store.h picks one
// from a URI).
// Thread-safety: every implementation is safe to share between threads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "store/condition.h"
#include "store/value.h"

namespace mvr::store {

struct StoreOptions {
  // The number attribute that holds an item's expiry in epoch seconds; "" turns TTL off.
  std::string ttl_attribute = "ttl";
};

// A page of items and the cursor to pass for the next one ("" when this is the last page). A
// page can be short, or even empty, while a cursor remains.
struct Page {
  std::vector<Item> items;
  std::string next_cursor;
};

struct QueryRequest {
  std::string partition;
  std::string sort_prefix;  // "" matches every item of the partition
  int limit = 100;          // items per page, 1-1000
  std::string cursor;       // from the previous page
};

struct ScanRequest {
  std::string partition_prefix;  // "" scans the whole store
  int limit = 100;
  std::string cursor;
};

// One write of a transaction.
struct WriteOp {
  enum class Kind { kPut, kUpdate, kDelete, kConditionCheck };
  Kind kind = Kind::kPut;
  Key key;                             // also the key of a kPut item
  Attributes attributes;               // kPut
  std::vector<Update> updates;         // kUpdate
  std::optional<Condition> condition;  // required for kConditionCheck

  static WriteOp Put(Item item, std::optional<Condition> condition = std::nullopt);
  static WriteOp UpdateItem(Key key, std::vector<Update> updates,
                            std::optional<Condition> condition = std::nullopt);
  static WriteOp Delete(Key key, std::optional<Condition> condition = std::nullopt);
  static WriteOp Check(Key key, Condition condition);
};

inline constexpr size_t kMaxTransactionWrites = 100;

// The outcome of a transaction. When a condition failed, status is Conflict and failed_index names
// the write (in request order) whose condition did not hold.
struct TransactionOutcome {
  Status status;
  std::optional<size_t> failed_index;
  bool ok() const { return status.ok(); }
};

class Store {
 public:
  virtual ~Store() = default;

  // The item, or nullopt when there is none (or it has expired). Strongly consistent.
  virtual Result<std::optional<Item>> Get(const Key& key) = 0;
  // Creates or replaces the whole item.
  virtual Status Put(const Item& item,
                     const std::optional<Condition>& condition = std::nullopt) = 0;
  // Applies `updates` to the item, creating it when absent; returns the item as written.
  virtual Result<Item> Update(const Key& key, const std::vector<Update>& updates,
                              const std::optional<Condition>& condition = std::nullopt) = 0;
  // Deleting an absent item (without a condition) succeeds.
  virtual Status Delete(const Key& key,
                        const std::optional<Condition>& condition = std::nullopt) = 0;
  // Items of one partition in sort-key order.
  virtual Result<Page> Query(const QueryRequest& request) = 0;
  // Items whose partition key starts with the prefix; consistent where the backend allows.
  // Order is backend-defined (DynamoDB's is hash order).
  virtual Result<Page> Scan(const ScanRequest& request) = 0;
  // Up to kMaxTransactionWrites writes, all applied or none; at most one write per key.
  virtual TransactionOutcome Transact(const std::vector<WriteOp>& writes) = 0;

  // Follows cursors until the last page or `max_items` (0 = no limit).
  Result<std::vector<Item>> QueryAll(QueryRequest request, size_t max_items = 0);
};

// A failed write condition (or transaction condition): Code::kConflict.
inline bool IsConditionFailed(const Status& status) { return status.code() == Code::kConflict; }

// The Conflict status every backend returns for a failed condition.
Status ConditionFailed(const std::string& what, const std::optional<Condition>& condition);

// Checks shared by every backend: request limits, key and attribute names, one write per key.
Status ValidateKey(const Key& key);
Status ValidateQuery(const QueryRequest& request);
Status ValidateScan(const ScanRequest& request);
Status ValidateTransaction(const std::vector<WriteOp>& writes);

// True when `attributes` carry a TTL at or before `now`.
bool IsExpired(const StoreOptions& options, const Attributes& attributes, TimePoint now);

// The cursor of the in-process backends: the last key returned, opaque to callers.
std::string EncodeKeyCursor(const Key& key);
Result<Key> DecodeKeyCursor(const std::string& cursor);

}  // namespace mvr::store
