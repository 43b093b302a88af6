// ForwardingQueue: every call of a wrapper that overrides nothing reaches the inner queue.
#include "queue/forwarding_queue.h"

#include <gtest/gtest.h>

#include "queue/memory_queue.h"

namespace mvr::queue {
namespace {

TEST(ForwardingQueueTest, EveryCallReachesTheInnerQueue) {
  ManualClock clock;
  ManualSleeper sleeper(clock);
  MemoryQueue inner(clock, sleeper);
  ForwardingQueue q(inner);
  ASSERT_TRUE(q.Send({"one"}).ok());
  ASSERT_TRUE(q.SendBatch({{"two"}}).ok());
  ReceiveOptions ro;
  ro.max_messages = 10;
  Result<std::vector<QueueMessage>> got = q.Receive(ro);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 2u);
  EXPECT_TRUE(q.ChangeVisibility((*got)[0].receipt, Duration(0)).ok());
  EXPECT_TRUE(q.Delete((*got)[1].receipt).ok());
  Result<std::vector<QueueMessage>> again = inner.Receive(ro);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ((*again)[0].body, "one");
}

}  // namespace
}  // namespace mvr::queue
