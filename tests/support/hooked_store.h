// HookedStore: a MemoryStore that runs a hook before each scan, so a test can make a row appear
// at a chosen moment or count how often a component reads a whole table.
// Thread-safety: as MemoryStore; set the hook before sharing the store.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "store/memory_store.h"

namespace mvr::testing {

class HookedStore : public store::Store {
 public:
  explicit HookedStore(const Clock& clock) : inner_(clock) {}
  std::function<void(const store::ScanRequest&)> before_scan;

  Result<std::optional<store::Item>> Get(const store::Key& k) override { return inner_.Get(k); }
  Status Put(const store::Item& i, const std::optional<store::Condition>& c) override {
    return inner_.Put(i, c);
  }
  Result<store::Item> Update(const store::Key& k, const std::vector<store::Update>& u,
                             const std::optional<store::Condition>& c) override {
    return inner_.Update(k, u, c);
  }
  Status Delete(const store::Key& k, const std::optional<store::Condition>& c) override {
    return inner_.Delete(k, c);
  }
  Result<store::Page> Query(const store::QueryRequest& r) override { return inner_.Query(r); }
  Result<store::Page> Scan(const store::ScanRequest& r) override {
    if (before_scan) before_scan(r);
    return inner_.Scan(r);
  }
  store::TransactionOutcome Transact(const std::vector<store::WriteOp>& w) override {
    return inner_.Transact(w);
  }

 private:
  store::MemoryStore inner_;
};

}  // namespace mvr::testing
