#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>

namespace mvr::process {

// How long thread `tid` of this process has been runnable but waiting for a processor, in total
// (the second field of /proc/self/task/TID/schedstat, Linux's run_delay). nullopt when the kernel
// does not say (no schedstats, or the thread is gone). The simulation's watchdog subtracts it from
// the real time it waited, so that a run starved of processors on a loaded machine is not taken
// for a run blocked on a real lock.
std::optional<std::chrono::nanoseconds> RunQueueWait(pid_t tid);

// The calling thread's id, for RunQueueWait.
pid_t CurrentThreadId();

// The real time thread `tid` could have run between two looks (or since construction): the time
// elapsed minus the time it waited for a processor (all of the time elapsed where the kernel does
// not say, or when the thread looked at is not the one looked at before).
class RunnableTime {
 public:
  explicit RunnableTime(pid_t tid);
  std::chrono::nanoseconds Look(pid_t tid);

 private:
  pid_t tid_;
  std::chrono::steady_clock::time_point looked_;
  std::optional<std::chrono::nanoseconds> waited_;
};

}  // namespace mvr::process
