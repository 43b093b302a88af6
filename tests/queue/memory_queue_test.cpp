// What only the in-memory queue has: a long poll on a clock that never moves still ends, so a
// virtual-time scheduler can drive it.
#include "queue/memory_queue.h"

#include <gtest/gtest.h>

namespace mvr::queue {
namespace {

// A sleeper that returns at once and leaves the clock where it is.
class StillSleeper final : public Sleeper {
 public:
  void Sleep(Duration) override { ++calls; }
  int calls = 0;
};

TEST(MemoryQueueTest, ALongPollOnAStoppedClockEndsAfterBoundedSleeps) {
  ManualClock clock;
  StillSleeper sleeper;
  QueueOptions options;
  options.poll_interval = Duration(100);
  MemoryQueue queue(clock, sleeper, options);
  ReceiveOptions o;
  o.wait = Duration(20'000);
  auto got = queue.Receive(o);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty());
  EXPECT_LE(sleeper.calls, 201);  // wait / interval, plus one
  EXPECT_GE(sleeper.calls, 1);
}

TEST(MemoryQueueTest, ALongPollSleepsInPollIntervalsOfVirtualTime) {
  ManualClock clock;
  ManualSleeper sleeper(clock);
  MemoryQueue queue(clock, sleeper);
  ReceiveOptions o;
  o.wait = Duration(1'000);
  ASSERT_TRUE(queue.Receive(o)->empty());
  EXPECT_EQ(sleeper.total(), Duration(1'000));
  EXPECT_EQ(sleeper.calls(), 20);  // 50 ms steps
}

}  // namespace
}  // namespace mvr::queue
