// ForwardingStore: a Store that hands every call to another Store. A wrapper (fault injection,
// a test's hook before a scan or a write) derives from it and overrides only the calls it
// changes, as leveldb's EnvWrapper does for its Env.
// Thread-safety: as the inner store; the inner store must outlive the wrapper.
#pragma once

#include <optional>
#include <vector>

#include "store/store.h"

namespace mvr::store {

class ForwardingStore : public Store {
 public:
  explicit ForwardingStore(Store& inner) : inner_(inner) {}

  Result<std::optional<Item>> Get(const Key& key) override { return inner_.Get(key); }
  Status Put(const Item& item, const std::optional<Condition>& condition) override {
    return inner_.Put(item, condition);
  }
  Result<Item> Update(const Key& key, const std::vector<store::Update>& updates,
                      const std::optional<Condition>& condition) override {
    return inner_.Update(key, updates, condition);
  }
  Status Delete(const Key& key, const std::optional<Condition>& condition) override {
    return inner_.Delete(key, condition);
  }
  Result<Page> Query(const QueryRequest& request) override { return inner_.Query(request); }
  Result<Page> Scan(const ScanRequest& request) override { return inner_.Scan(request); }
  TransactionOutcome Transact(const std::vector<WriteOp>& writes) override {
    return inner_.Transact(writes);
  }

 protected:
  Store& inner() const { return inner_; }

 private:
  Store& inner_;
};

}  // namespace mvr::store
