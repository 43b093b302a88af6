// The store and queue as simulated actors see them: each call is a scheduling point, so a race
// through the store is found by a few seeds, and each may fail as DynamoDB and SQS fail, before
// or after taking effect, reproducibly from the seed.
#include "sim/sim_services.h"

#include <gtest/gtest.h>

#include "queue/memory_queue.h"
#include "sim/seams.h"
#include "store/memory_store.h"

namespace mvr::sim {
namespace {

struct ServicesWorld {
  explicit ServicesWorld(uint64_t seed, FaultRates rates = {})
      : scheduler(Options(seed)), faults(seed * 7919 + 1, rates) {}
  static Scheduler::Options Options(uint64_t seed) {
    Scheduler::Options o;
    o.seed = seed;
    return o;
  }
  Scheduler scheduler;
  VirtualClock services_clock{scheduler};
  SimSleeper sleeper{scheduler};
  Faults faults;
  store::MemoryStore memory_store{services_clock};
  queue::MemoryQueue memory_queue{services_clock, sleeper};
  SimStore store{scheduler, memory_store, faults};
  SimQueue queue{scheduler, memory_queue, faults};
};

const store::Key kClaim{"warmvm#vm-1", "claim"};

store::Item ClaimBy(const std::string& who) {
  return store::Item{kClaim, {{"owner", store::Value(who)}}};
}

// Two launchers claim one pool member. `conditional`: first writer wins by the write's
// condition, as the launcher does; otherwise each reads, sees no claim, then writes (the bug).
// Returns how many believed they won.
int Claimers(uint64_t seed, bool conditional) {
  ServicesWorld w(seed);
  int winners = 0;
  for (const char* who : {"launcher-1", "launcher-2"}) {
    w.scheduler.Spawn(who, [&w, &winners, who, conditional] {
      if (conditional) {
        if (w.store.Put(ClaimBy(who), store::Condition::ItemNotExists()).ok()) ++winners;
        return;
      }
      Result<std::optional<store::Item>> seen = w.store.Get(kClaim);
      if (seen.ok() && !seen->has_value() && w.store.Put(ClaimBy(who), std::nullopt).ok()) {
        ++winners;
      }
    });
  }
  EXPECT_TRUE(w.scheduler.Run(TimePoint::max()).idle);
  return winners;
}

TEST(SimServicesTest, AConditionalClaimHasOneWinnerUnderEverySeed) {
  for (uint64_t seed = 1; seed <= 50; ++seed) EXPECT_EQ(Claimers(seed, true), 1) << seed;
}

TEST(SimServicesTest, ACheckThenWriteClaimIsCaughtWithinTenSeeds) {
  uint64_t found = 0;
  for (uint64_t seed = 1; seed <= 10 && found == 0; ++seed) {
    if (Claimers(seed, false) == 2) found = seed;
  }
  EXPECT_NE(found, 0u) << "two launchers both won a claim with no condition";
}

TEST(SimServicesTest, AWriteWhoseResponseIsLostTookEffectAndTheCallerSawA5xx) {
  ServicesWorld w(4, FaultRates{.fail_after = 1.0});
  Status put;
  w.scheduler.Spawn("writer", [&] { put = w.store.Put(ClaimBy("a"), std::nullopt); });
  w.scheduler.Run(TimePoint::max());
  EXPECT_EQ(put.code(), Code::kTransient) << put.ToString();
  Result<std::optional<store::Item>> stored = w.memory_store.Get(kClaim);
  ASSERT_TRUE(stored.ok());
  EXPECT_TRUE(stored->has_value()) << "the write was applied before its response was lost";
  EXPECT_EQ(w.faults.counts().at("store.Put failed after"), 1);
}

TEST(SimServicesTest, AThrottledCallDoesNothing) {
  ServicesWorld w(5, FaultRates{.throttle = 1.0});
  Status put;
  w.scheduler.Spawn("writer", [&] { put = w.store.Put(ClaimBy("a"), std::nullopt); });
  w.scheduler.Run(TimePoint::max());
  EXPECT_EQ(put.code(), Code::kThrottled);
  EXPECT_FALSE(w.memory_store.Get(kClaim)->has_value());
}

TEST(SimServicesTest, AReceiveWhoseResponseIsLostBringsTheMessageBackAfterItsVisibility) {
  ServicesWorld lossy(6, FaultRates{.fail_after = 1.0});
  ASSERT_TRUE(lossy.memory_queue.Send({"intent"}).ok());
  Status first;
  int second_count = 0;
  lossy.scheduler.Spawn("consumer", [&] {
    queue::ReceiveOptions o;
    o.visibility = Duration(30'000);
    first = lossy.queue.Receive(o).status();
    lossy.sleeper.Sleep(Duration(30'001));
    auto again = lossy.memory_queue.Receive(o);  // past the fault wrapper: the truth
    if (again.ok() && again->size() == 1) second_count = (*again)[0].receive_count;
  });
  lossy.scheduler.Run(TimePoint::max());
  EXPECT_EQ(first.code(), Code::kTransient);
  EXPECT_EQ(second_count, 2) << "the lost receive counted and hid the message";
}

TEST(SimServicesTest, TheSameSeedDrawsTheSameFaultsAndTrace) {
  auto run = [](uint64_t seed) {
    ServicesWorld w(seed, FaultRates{.throttle = 0.2, .fail_before = 0.2, .fail_after = 0.2});
    for (int i = 0; i < 3; ++i) {
      w.scheduler.Spawn("writer-" + std::to_string(i), [&w, i] {
        for (int n = 0; n < 10; ++n) {
          w.store.Put(store::Item{{"k" + std::to_string(i), std::to_string(n)}, {}}, std::nullopt)
              .IgnoreError();
        }
      });
    }
    w.scheduler.Run(TimePoint::max());
    return std::make_pair(w.faults.counts(), w.scheduler.TraceHash());
  };
  EXPECT_EQ(run(21), run(21));
  EXPECT_NE(run(21).second, run(22).second);
}

}  // namespace
}  // namespace mvr::sim
