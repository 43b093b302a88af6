// Consumer: takes intents off the job queue and hands them to the Launcher on a pool of worker
// threads, so a burst of launches runs concurrently (bounded by RunMicrovm's rate, not by one
// poller). One receiver thread asks the queue for as many messages as there are idle workers
// (at most 10 a call). Each message is deleted once handled; a deferred one is hidden until it
// is due (or, near the dead-letter limit, sent again as a fresh copy so a deferral never
// dead-letters it); a failed one comes back after a backoff and is dead-lettered after the
// queue's maxReceiveCount. Stop ends receiving and lets in-flight intents finish within a
// grace period; messages received but not started are made visible again at once.
// Thread-safety: Start and Stop from one thread; the rest is internal.
#pragma once

#include <atomic>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "base/seam.h"
#include "queue/queue.h"
#include "runnerset/launch/launcher.h"

namespace mvr::runnerset {

// What becomes of a queue message once the Launcher has handled its intent. `mvr serve`'s
// Consumer and the `launcher` Lambda function (which reports kHide as a batch item failure) both
// settle messages this way.
struct Settlement {
  enum class Kind {
    kDelete,  // done with (launched, duplicate, dropped, ignored, terminated)
    kHide,    // comes back after `delay` (deferred, or failed with a backoff)
    kResend,  // deferred near the dead-letter limit: send a fresh copy delayed by `delay`
  };
  Kind kind = Kind::kDelete;
  Duration delay{0};
};
// `receive_count` is the message's (1 on its first delivery); `max_receive_count` the queue's
// dead-letter limit (0 = none).
Settlement SettlementOf(const LaunchOutcome& outcome, int receive_count, int max_receive_count);

// One received message, start to end: decode its intent (a message that never decodes is
// deleted), let the Launcher handle it, log the decision and settle the message on `queue`. What
// each of the Consumer's workers does, and the simulation's launcher actors.
void HandleMessage(queue::Queue& queue, Launcher& launcher, const Seam& seam,
                   const queue::QueueMessage& message, int max_receive_count);

class Consumer {
 public:
  struct Options {
    int concurrency = 10;
    Duration visibility{360'000};
    int max_receive_count = 5;  // 0 = the queue never dead-letters
    Duration poll_wait{2'000};
    Duration idle_pause{100};  // between polls while every worker is busy
  };
  Consumer(queue::Queue& queue, Launcher& launcher, const Seam& seam, Options options)
      : queue_(queue), launcher_(launcher), seam_(seam), options_(options) {}
  ~Consumer();

  void Start();
  // Stops receiving and waits up to `grace` for running intents. True when all finished (the
  // threads are joined); false when some are still running (they are detached: exit the
  // process soon).
  bool Stop(Duration grace);

  int busy() const { return busy_.load(); }

 private:
  void Receive();
  void Work();

  queue::Queue& queue_;
  Launcher& launcher_;
  Seam seam_;
  Options options_;

  std::atomic<bool> stopping_{false};
  std::atomic<int> busy_{0};
  std::mutex mu_;
  std::deque<queue::QueueMessage> pending_;  // guarded by mu_
  std::thread receiver_;
  std::vector<std::thread> workers_;
};

}  // namespace mvr::runnerset
