// LongPoll: the wait loop of the local queues' Receive. Tries, and while nothing arrived and the
// wait has not run out, sleeps one poll interval through the Sleeper and tries again. The number
// of sleeps is bounded by wait / interval, so a clock that never moves (a manual clock with a
// sleeper that does not advance it) cannot make it spin forever; with ManualSleeper the wait passes
// in virtual time, which is what a simulation scheduler drives.
// Thread-safety: a function; safe wherever `attempt` is.
#pragma once

#include <functional>
#include <vector>

#include "base/clock.h"
#include "queue/queue.h"

namespace mvr::queue {

inline Result<std::vector<QueueMessage>> LongPoll(
    const Clock& clock, Sleeper& sleeper, Duration wait, Duration interval,
    const std::function<Result<std::vector<QueueMessage>>()>& attempt) {
  if (interval <= Duration(0)) interval = Duration(1);
  const TimePoint deadline = clock.Now() + wait;
  const int64_t max_sleeps = wait.count() / interval.count() + 1;
  for (int64_t sleeps = 0;; ++sleeps) {
    auto got = attempt();
    if (!got.ok() || !got->empty()) return got;
    const TimePoint now = clock.Now();
    if (now >= deadline || sleeps >= max_sleeps) return got;
    sleeper.Sleep(std::min(interval, std::chrono::duration_cast<Duration>(deadline - now)));
  }
}

}  // namespace mvr::queue
