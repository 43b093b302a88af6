// The pool lease tests' world: one ManualClock, a SeededRandom, and the Store under test
// (tests/store/store_backends.h: memory, SQLite on a temporary file, DynamoDB on moto) wrapped in
// an InterleavingStore that can run another caller's code just before any write, so races are
// replayed deterministically. Thread-safety: one owner (the test).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "action/pool_keys.h"
#include "action/pool_leases.h"
#include "base/clock.h"
#include "base/random.h"
#include "store/forwarding_store.h"
#include "store/store_backends.h"

namespace mvr::action::testing {

// Forwards to `inner`; before each write runs `before_write` (if set), with the hook cleared
// while it runs unless `nested` is true.
class InterleavingStore final : public store::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  std::function<void()> before_write;
  bool nested = false;

  Status Put(const store::Item& item, const std::optional<store::Condition>& c) override {
    Hook();
    return ForwardingStore::Put(item, c);
  }
  Result<store::Item> Update(const store::Key& key, const std::vector<store::Update>& u,
                             const std::optional<store::Condition>& c) override {
    Hook();
    return ForwardingStore::Update(key, u, c);
  }
  Status Delete(const store::Key& key, const std::optional<store::Condition>& c) override {
    Hook();
    return ForwardingStore::Delete(key, c);
  }
  store::TransactionOutcome Transact(const std::vector<store::WriteOp>& w) override {
    Hook();
    return ForwardingStore::Transact(w);
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
};

class PoolWorld {
 public:
  // "memory", "sqlite" or "dynamodb" (moto; see skip_reason()).
  explicit PoolWorld(const std::string& backend) : backend_(backend) {
    if (backend_.store()) store_ = std::make_unique<InterleavingStore>(*backend_.store());
  }

  bool ok() const { return store_ != nullptr; }
  std::string problem() const {
    return backend_.skip_reason().empty() ? backend_.error() : backend_.skip_reason();
  }
  bool skipped() const { return !backend_.skip_reason().empty(); }
  InterleavingStore& store() { return *store_; }
  ManualClock& clock() { return backend_.clock(); }
  SeededRandom& random() { return random_; }
  PoolLeases Leases(PoolPolicy policy = Policy()) {
    return PoolLeases(*store_, backend_.clock(), random_, policy);
  }
  static PoolPolicy Policy() {
    PoolPolicy p;
    p.lease_timeout = std::chrono::hours(2);
    p.transition_timeout = std::chrono::minutes(15);
    p.max_lifetime_seconds = 7'200;
    return p;
  }
  // Moves every later Key()/Request() to a fresh, empty pool of another repository.
  void NewPool() { repository_id_ = std::to_string(std::stoll(repository_id_) + 1); }

  EffectiveServerKey Key(const std::string& image_version = "7") const {
    return EffectiveServerKey{repository_id_,
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
  store::testing::StoreBackend backend_;
  SeededRandom random_{13};
  std::string repository_id_ = "123456";
  std::unique_ptr<InterleavingStore> store_;
};

// The parameterized fixture of the pool lease tests (parameter: the backend).
using Kind = Acquisition::Kind;
inline constexpr int64_t kMargin = 1'800;

class PoolLeasesTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (world_.skipped()) GTEST_SKIP() << world_.problem();
    ASSERT_TRUE(world_.ok()) << GetParam() << " store did not open: " << world_.problem();
  }

  Acquisition Acquire(const std::string& owner, std::optional<int64_t> capacity = std::nullopt,
                      const std::string& image_version = "7") {
    auto a = leases_.Acquire(world_.Request(owner, capacity, image_version));
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    return a.ok() ? *a : Acquisition{};
  }
  // Reserve and launch a member, so it is LEASED by `owner`.
  Lease Start(const std::string& owner, std::optional<int64_t> capacity = std::nullopt) {
    Acquisition a = Acquire(owner, capacity);
    EXPECT_TRUE(a.kind == Kind::kReserved || a.kind == Kind::kLeasedReady);
    if (a.kind == Kind::kReserved) {
      auto m =
          leases_.RecordLaunch(a.lease, "mvm-" + a.member.member_id, world_.clock().Now(), kMargin);
      EXPECT_TRUE(m.ok()) << m.status().ToString();
    }
    return a.lease;
  }
  // A clean stop: LEASED -> SUSPENDING -> READY.
  void Stop(const Lease& lease) {
    auto plan = leases_.BeginRelease(lease);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    ASSERT_EQ(plan->action, ReleasePlan::Action::kSuspend);
    ASSERT_TRUE(leases_.FinishSuspend(lease).ok());
  }
  MemberRecord Member(const Lease& lease) {
    auto item = world_.store().Get({lease.partition, MemberSortKey(lease.member_id)});
    EXPECT_TRUE(item.ok() && item->has_value());
    return MemberFromItem(**item).value();
  }
  int64_t ActiveCount(const std::string& partition) {
    auto item = world_.store().Get({partition, kControlSortKey});
    return item.ok() && item->has_value() ? ControlFromItem(**item).value().active_count : 0;
  }
  store::Attributes Raw(const Lease& lease) {
    return world_.store()
        .Get({lease.partition, MemberSortKey(lease.member_id)})
        ->value()
        .attributes;
  }
  std::string Partition() { return world_.Request("x").partition; }
  PoolWorld& world() { return world_; }

  PoolWorld world_{GetParam()};
  PoolLeases leases_ = world_.Leases();
};

}  // namespace mvr::action::testing
