// MemoryStore: the Store held in a std::map, for tests and the simulation. Deterministic (sorted
// keys, no randomness) and driven by the injected Clock for time-to-live, so it runs in virtual
// time. Expired items are dropped lazily when a write touches them.
// Thread-safety: safe to share between threads (one mutex; no external calls).
#pragma once

#include <functional>
#include <map>
#include <mutex>

#include "store/store.h"
#include "store/write_plan.h"

namespace mvr::store {

class MemoryStore final : public Store {
 public:
  explicit MemoryStore(const Clock& clock, StoreOptions options = {});

  Result<std::optional<Item>> Get(const Key& key) override;
  Status Put(const Item& item, const std::optional<Condition>& condition) override;
  Result<Item> Update(const Key& key, const std::vector<store::Update>& updates,
                      const std::optional<Condition>& condition) override;
  Status Delete(const Key& key, const std::optional<Condition>& condition) override;
  Result<Page> Query(const QueryRequest& request) override;
  Result<Page> Scan(const ScanRequest& request) override;
  TransactionOutcome Transact(const std::vector<WriteOp>& writes) override;

 private:
  // REQUIRES: mu_ held. The live item under `key`, or nullptr.
  const Attributes* LiveLocked(const Key& key, TimePoint now) const;
  void ApplyLocked(const Key& key, const WritePlan& plan);
  // One page of live items from `start` (after the cursor's key when there is one) while
  // `in_range` holds: the walk shared by Query and Scan.
  Result<Page> PageFrom(Key start, const std::string& cursor, int limit,
                        const std::function<bool(const Key&)>& in_range);

  const Clock& clock_;
  const StoreOptions options_;
  mutable std::mutex mu_;
  std::map<Key, Attributes> items_;  // GUARDED_BY(mu_)
};

}  // namespace mvr::store
