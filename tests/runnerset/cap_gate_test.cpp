#include "runnerset/launch/cap_gate.h"

#include <gtest/gtest.h>

namespace mvr::runnerset {
namespace {

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
