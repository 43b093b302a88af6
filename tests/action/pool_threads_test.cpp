// Pool leases under real threads on the MemoryStore: the invariants (one owner per generation,
// never more active members than the largest capacity asked) hold whatever the interleaving.
// No timing is measured or assumed.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "action/pool_keys.h"
#include "action/pool_leases.h"
#include "store/memory_store.h"

namespace mvr::action {
namespace {

PoolRequest Request(const std::string& owner, int64_t capacity) {
  EffectiveServerKey key{"1", "threads", "us-east-1", "x86_64", "img", "1", "role", "net"};
  PoolRequest r;
  r.partition = PoolPartition(key);
  r.server_name = "threads";
  r.image_id = "img";
  r.image_version = "1";
  r.region = "us-east-1";
  r.owner = owner;
  r.capacity = capacity;
  return r;
}

TEST(PoolThreadsTest, TwentyConcurrentStartsWithCapacityFiveReserveAtMostFive) {
  ManualClock clock;
  store::MemoryStore store(clock);
  SecureRandom random;
  PoolLeases leases(store, clock, random, PoolPolicy{});
  std::mutex mu;
  std::vector<Acquisition> results;
  std::vector<std::thread> threads;
  for (int i = 0; i < 20; ++i) {
    threads.emplace_back([&, i] {
      auto a = leases.Acquire(Request("run-" + std::to_string(i), 5));
      std::lock_guard<std::mutex> lock(mu);
      ASSERT_TRUE(a.ok()) << a.status().ToString();
      results.push_back(*a);
    });
  }
  for (auto& t : threads) t.join();
  std::set<std::string> members;
  for (const Acquisition& a : results) {
    if (a.kind == Acquisition::Kind::kReserved) {
      EXPECT_TRUE(members.insert(a.lease.member_id).second);
    } else {
      EXPECT_EQ(a.refusal.code(), Code::kQuotaExceeded) << a.refusal.ToString();
    }
  }
  EXPECT_EQ(results.size(), 20u);
  EXPECT_EQ(members.size(), 5u);
}

TEST(PoolThreadsTest, ChurningStartsAndStopsNeverShareAGeneration) {
  ManualClock clock;
  store::MemoryStore store(clock);
  SecureRandom random;
  PoolLeases leases(store, clock, random, PoolPolicy{});
  std::mutex mu;
  std::map<std::pair<std::string, int64_t>, std::set<std::string>> owners;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 40; ++round) {
        const std::string owner = "run-" + std::to_string(t) + "-" + std::to_string(round);
        auto a = leases.Acquire(Request(owner, t % 2 == 0 ? 2 : 3));
        ASSERT_TRUE(a.ok()) << a.status().ToString();
        if (a->kind == Acquisition::Kind::kRefused) continue;
        {
          std::lock_guard<std::mutex> lock(mu);
          owners[{a->lease.member_id, a->lease.generation}].insert(owner);
        }
        if (a->kind == Acquisition::Kind::kReserved) {
          ASSERT_TRUE(
              leases.RecordLaunch(a->lease, "mvm-" + a->lease.member_id, clock.Now(), 1800).ok());
        }
        ASSERT_TRUE(leases.BeginRelease(a->lease).ok());
        ASSERT_TRUE(leases.FinishSuspend(a->lease).ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& [generation, who] : owners) {
    EXPECT_EQ(who.size(), 1u) << generation.first << " generation " << generation.second;
  }
  store::QueryRequest q;
  q.partition = Request("x", 1).partition;
  auto items = store.QueryAll(q).value();
  int active = 0;
  for (const store::Item& item : items) {
    if (item.key.sort == kControlSortKey) continue;
    active += IsActive(MemberFromItem(item).value().state) ? 1 : 0;
  }
  EXPECT_LE(active, 3);
  EXPECT_GE(owners.size(), 8u);
}

}  // namespace
}  // namespace mvr::action
