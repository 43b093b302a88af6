#include "runnerset/cap_gate.h"

#include <gtest/gtest.h>

namespace mvr::runnerset {
namespace {

TEST(CapGate, ReservationsNotYetLaunchedCountAgainstTheCap) {
  ManualClock clock;
  CapGate gate(clock);
  auto a = gate.TryReserve({}, clock.Now(), 2);
  auto b = gate.TryReserve({}, clock.Now(), 2);
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(gate.TryReserve({}, clock.Now(), 2));
  gate.Finish(*a, /*vm_gone=*/true);
  EXPECT_TRUE(gate.TryReserve({}, clock.Now(), 2));
}

TEST(CapGate, AVmLaunchedAfterTheListingBeganCountsUntilAListingShowsIt) {
  ManualClock clock;
  CapGate gate(clock);
  const TimePoint stale = clock.Now();
  auto a = gate.TryReserve({}, stale, 2);
  clock.Advance(Duration(100));
  gate.Launched(*a, "mvm-1");
  gate.Finish(*a, /*vm_gone=*/false);
  // A listing begun before the launch may not show it: it still counts.
  EXPECT_EQ(gate.Unlisted({}, stale), 1);
  EXPECT_EQ(gate.Unlisted({"mvm-1"}, stale), 0);
  // A listing begun after it is the truth (the VM may be gone already).
  clock.Advance(Duration(100));
  EXPECT_EQ(gate.Unlisted({}, clock.Now()), 0);
}

TEST(CapGate, ListedVmsFillTheCap) {
  ManualClock clock;
  CapGate gate(clock);
  EXPECT_FALSE(gate.TryReserve({"mvm-1", "mvm-2"}, clock.Now(), 2));
  EXPECT_TRUE(gate.TryReserve({"mvm-1"}, clock.Now(), 2));
}

TEST(Pacer, SpacesCallsAtTheRate) {
  ManualClock clock;
  ManualSleeper sleeper(clock);
  Pacer pacer(clock, sleeper, 5);
  const TimePoint start = clock.Now();
  for (int i = 0; i < 6; ++i) pacer.Wait();
  EXPECT_EQ(clock.Now() - start, Duration(1'000));
}

}  // namespace
}  // namespace mvr::runnerset
