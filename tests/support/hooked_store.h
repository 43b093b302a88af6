// HookedStore: a MemoryStore that runs a hook before each scan, so a test can make a row appear
// at a chosen moment or count how often a component reads a whole table, and that can fail the
// next updates as the service does when it errs.
// Thread-safety: as MemoryStore; set the hook before sharing the store.
#pragma once

#include <functional>

#include "store/forwarding_store.h"
#include "store/memory_store.h"

namespace mvr::testing {

class HookedStore : public store::ForwardingStore {
 public:
  explicit HookedStore(const Clock& clock) : ForwardingStore(memory_), memory_(clock) {}
  std::function<void(const store::ScanRequest&)> before_scan;
  // Runs before each Update (a claim's takeover is one), as before_scan does.
  std::function<void(const store::Key&)> before_update;
  // The next this many Update calls fail (Transient, a simulated 500) and change nothing.
  int fail_updates = 0;
  // A Get of a key for which this answers true fails (Transient, a simulated 500).
  std::function<bool(const store::Key&)> fail_get;

  Result<std::optional<store::Item>> Get(const store::Key& key) override {
    if (fail_get && fail_get(key)) return Transient("store.Get: service error (simulated 500)");
    return ForwardingStore::Get(key);
  }

  Result<store::Item> Update(const store::Key& key, const std::vector<store::Update>& updates,
                             const std::optional<store::Condition>& condition) override {
    if (auto hook = before_update) hook(key);
    if (fail_updates > 0) {
      --fail_updates;
      return Transient("store.Update: service error (simulated 500)");
    }
    return ForwardingStore::Update(key, updates, condition);
  }

  Result<store::Page> Scan(const store::ScanRequest& r) override {
    // A copy runs, so a hook may clear or replace itself (one-shot hooks do) while it runs.
    if (auto hook = before_scan) hook(r);
    return ForwardingStore::Scan(r);
  }

 private:
  store::MemoryStore memory_;  // bound to the base before it is built; used only after
};

}  // namespace mvr::testing
