#include "process/run_queue_wait.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace mvr::process {
namespace {

using std::chrono::milliseconds;

void PinToFirstCpu() {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);
}

void SpinFor(milliseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

// A thread that shares one processor with two busy ones waits on the run queue for at least two
// thirds of the time: the watchdog must not count that time as a stall.
TEST(RunQueueWaitTest, TimeWaitingForAProcessorIsNotTimeTheThreadCouldRun) {
  if (!RunQueueWait(CurrentThreadId())) GTEST_SKIP() << "the kernel keeps no schedstat";
  std::atomic<bool> stop{false};
  std::atomic<int> pinned{0};
  std::vector<std::thread> busy;
  for (int i = 0; i < 2; ++i) {
    busy.emplace_back([&] {
      PinToFirstCpu();
      ++pinned;
      while (!stop.load()) {
      }
    });
  }
  while (pinned.load() < 2) std::this_thread::yield();
  std::chrono::nanoseconds could_run{0};
  std::thread measured([&] {
    PinToFirstCpu();
    RunnableTime runnable(CurrentThreadId());
    SpinFor(milliseconds(600));
    could_run = runnable.Look(CurrentThreadId());
  });
  measured.join();
  stop = true;
  for (std::thread& t : busy) t.join();
  // At most a third of the 600 ms (less on a loaded machine); all of it if the wait were not seen.
  EXPECT_LT(could_run, milliseconds(400));
}

// A thread that sleeps (as one blocked on a real lock does) waits on no run queue: all the time
// elapsed counts.
TEST(RunQueueWaitTest, ASleepingThreadCouldHaveRunAllTheTime) {
  if (!RunQueueWait(CurrentThreadId())) GTEST_SKIP() << "the kernel keeps no schedstat";
  RunnableTime runnable(CurrentThreadId());
  std::this_thread::sleep_for(milliseconds(200));
  const std::chrono::nanoseconds could_run = runnable.Look(CurrentThreadId());
  EXPECT_GE(could_run, milliseconds(150));
}

TEST(RunQueueWaitTest, AThreadThatIsGoneHasNoFigure) { EXPECT_FALSE(RunQueueWait(-1).has_value()); }

}  // namespace
}  // namespace mvr::process
