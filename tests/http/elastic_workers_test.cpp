// ElasticWorkers starts threads only as tasks need them, never more than its cap, ends idle ones
// when told to, and runs every queued task before Join returns. Waits are bounded polls (a loaded
// machine only makes them slower), never fixed sleeps that a result depends on.
#include "http/elastic_workers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace mvr::http {
namespace {

// Polls `done` until it holds or 10 s pass.
template <typename F>
bool Eventually(F done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

// Holds the tasks that wait on it until Open.
class Gate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    ++waiting_;
    cv_.wait(lock, [this] { return open_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  int waiting() {
    std::lock_guard<std::mutex> lock(mu_);
    return waiting_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
  int waiting_ = 0;
};

TEST(ElasticWorkers, NoThreadUntilATaskArrives) {
  ElasticWorkers workers(4, Duration(0));
  EXPECT_EQ(workers.live(), 0u);
  std::atomic<int> ran{0};
  workers.Post([&] { ++ran; });
  workers.Join();
  EXPECT_EQ(ran.load(), 1);
}

TEST(ElasticWorkers, RunsUpToItsCapAtOnceAndQueuesTheRest) {
  ElasticWorkers workers(3, Duration(0));
  Gate gate;
  std::atomic<int> ran{0};
  for (int i = 0; i < 5; ++i) {
    workers.Post([&] {
      gate.Wait();
      ++ran;
    });
  }
  ASSERT_TRUE(Eventually([&] { return gate.waiting() == 3; }));
  EXPECT_EQ(workers.live(), 3u);
  gate.Open();
  ASSERT_TRUE(Eventually([&] { return ran.load() == 5; }));
  EXPECT_EQ(workers.live(), 3u) << "without idle_exit the threads stay";
  workers.Join();
  EXPECT_EQ(workers.live(), 0u);
}

TEST(ElasticWorkers, IdleThreadsEndAfterIdleExitAndNewOnesStartForTheNextTask) {
  ElasticWorkers workers(4, Duration(20));
  Gate gate;
  for (int i = 0; i < 4; ++i) workers.Post([&] { gate.Wait(); });
  ASSERT_TRUE(Eventually([&] { return gate.waiting() == 4; }));
  EXPECT_EQ(workers.live(), 4u);
  gate.Open();
  ASSERT_TRUE(Eventually([&] { return workers.live() == 0; }));
  std::atomic<bool> ran{false};
  workers.Post([&] { ran = true; });
  ASSERT_TRUE(Eventually([&] { return ran.load(); }));
  workers.Join();
}

TEST(ElasticWorkers, AnIdleThreadTakesTheNextTaskInsteadOfANewThreadStarting) {
  ElasticWorkers workers(8, Duration(0));
  std::atomic<int> ran{0};
  for (int i = 0; i < 50; ++i) {
    workers.Post([&] { ++ran; });
    ASSERT_TRUE(Eventually([&] { return ran.load() == i + 1; }));
  }
  EXPECT_EQ(workers.live(), 1u) << "tasks one at a time need one thread";
  workers.Join();
}

TEST(ElasticWorkers, JoinRunsQueuedTasksAndTasksTheyPost) {
  std::atomic<int> ran{0};
  {
    ElasticWorkers workers(1, Duration(0));
    Gate gate;
    workers.Post([&] { gate.Wait(); });
    for (int i = 0; i < 10; ++i) {
      workers.Post([&] {
        ++ran;
        workers.Post([&] { ++ran; });
      });
    }
    ASSERT_TRUE(Eventually([&] { return gate.waiting() == 1; }));
    gate.Open();
    workers.Join();
    EXPECT_EQ(ran.load(), 20);
  }
}

}  // namespace
}  // namespace mvr::http
