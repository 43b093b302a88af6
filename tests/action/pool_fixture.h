// The pool lease tests' world: one ManualClock, a SeededRandom, and the Store under test
// (MemoryStore, or SqliteStore on a fresh temporary file) wrapped in an InterleavingStore that can
// run another caller's code just before any write, so races are replayed deterministically.
// Thread-safety: one owner (the test).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "action/pool_keys.h"
#include "action/pool_leases.h"
#include "base/clock.h"
#include "base/random.h"
#include "store/memory_store.h"
#include "store/sqlite_store.h"

namespace mvr::action::testing {

// Forwards to `inner`; before each write runs `before_write` (if set), with the hook cleared
// while it runs unless `nested` is true.
class InterleavingStore final : public store::Store {
 public:
  explicit InterleavingStore(store::Store& inner) : inner_(inner) {}
  std::function<void()> before_write;
  bool nested = false;

  Result<std::optional<store::Item>> Get(const store::Key& key) override { return inner_.Get(key); }
  Status Put(const store::Item& item, const std::optional<store::Condition>& c) override {
    Hook();
    return inner_.Put(item, c);
  }
  Result<store::Item> Update(const store::Key& key, const std::vector<store::Update>& u,
                             const std::optional<store::Condition>& c) override {
    Hook();
    return inner_.Update(key, u, c);
  }
  Status Delete(const store::Key& key, const std::optional<store::Condition>& c) override {
    Hook();
    return inner_.Delete(key, c);
  }
  Result<store::Page> Query(const store::QueryRequest& r) override { return inner_.Query(r); }
  Result<store::Page> Scan(const store::ScanRequest& r) override { return inner_.Scan(r); }
  store::TransactionOutcome Transact(const std::vector<store::WriteOp>& w) override {
    Hook();
    return inner_.Transact(w);
  }

 private:
  void Hook() {
    if (!before_write) return;
    if (nested) {
      auto hook = before_write;  // the hook may replace itself
      hook();
      return;
    }
    auto hook = std::move(before_write);
    before_write = nullptr;
    hook();
  }
  store::Store& inner_;
};

class PoolWorld {
 public:
  explicit PoolWorld(const std::string& backend) {
    if (backend == "sqlite") {
      std::string tmpl = (std::filesystem::temp_directory_path() / "mvr-pool-XXXXXX").string();
      dir_ = ::mkdtemp(tmpl.data()) ? tmpl : std::string();
      auto db = store::SqliteDb::Open(dir_ + "/state.db", sleeper_);
      if (db.ok()) {
        inner_ = std::make_unique<store::SqliteStore>(
            std::shared_ptr<store::SqliteDb>(std::move(*db)), clock_);
      }
    } else {
      inner_ = std::make_unique<store::MemoryStore>(clock_);
    }
    if (inner_) store_ = std::make_unique<InterleavingStore>(*inner_);
  }
  ~PoolWorld() {
    store_.reset();
    inner_.reset();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  bool ok() const { return store_ != nullptr; }
  InterleavingStore& store() { return *store_; }
  ManualClock& clock() { return clock_; }
  SeededRandom& random() { return random_; }
  PoolLeases Leases(PoolPolicy policy = Policy()) {
    return PoolLeases(*store_, clock_, random_, policy);
  }
  static PoolPolicy Policy() {
    PoolPolicy p;
    p.lease_timeout = std::chrono::hours(2);
    p.transition_timeout = std::chrono::minutes(15);
    p.max_lifetime_seconds = 7'200;
    return p;
  }

  EffectiveServerKey Key(const std::string& image_version = "7") const {
    return EffectiveServerKey{"123456",
                              "build-cache",
                              "us-east-1",
                              "x86_64",
                              "img-1",
                              image_version,
                              "arn:aws:iam::1:role/mvr",
                              "subnet-1"};
  }
  PoolRequest Request(const std::string& owner, std::optional<int64_t> capacity = std::nullopt,
                      const std::string& image_version = "7") const {
    PoolRequest r;
    r.partition = PoolPartition(Key(image_version));
    r.server_name = "build-cache";
    r.image_id = "img-1";
    r.image_version = image_version;
    r.region = "us-east-1";
    r.owner = owner;
    r.capacity = capacity;
    return r;
  }

 private:
  ManualClock clock_;
  ManualSleeper sleeper_{clock_};
  SeededRandom random_{13};
  std::string dir_;
  std::unique_ptr<store::Store> inner_;
  std::unique_ptr<InterleavingStore> store_;
};

}  // namespace mvr::action::testing
