#include "process/run_queue_wait.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace mvr::process {

std::optional<std::chrono::nanoseconds> RunQueueWait(pid_t tid) {
  const std::string path = "/proc/self/task/" + std::to_string(tid) + "/schedstat";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[128];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  buf[n] = '\0';
  // "<ns on a processor> <ns waiting on a run queue> <timeslices>"
  unsigned long long on_cpu = 0, waiting = 0;
  if (std::sscanf(buf, "%llu %llu", &on_cpu, &waiting) != 2) return std::nullopt;
  return std::chrono::nanoseconds(static_cast<long long>(waiting));
}

pid_t CurrentThreadId() { return static_cast<pid_t>(::gettid()); }

// Real time, by nature: the watchdog looks from outside the simulated world.
RunnableTime::RunnableTime(pid_t tid)
    : tid_(tid), looked_(std::chrono::steady_clock::now()), waited_(RunQueueWait(tid)) {}

std::chrono::nanoseconds RunnableTime::Look(pid_t tid) {
  const std::chrono::steady_clock::time_point at = std::chrono::steady_clock::now();
  const std::optional<std::chrono::nanoseconds> waited = RunQueueWait(tid);
  const std::chrono::nanoseconds starved =
      waited && waited_ && tid == tid_ ? *waited - *waited_ : std::chrono::nanoseconds{0};
  tid_ = tid;
  const std::chrono::nanoseconds elapsed = at - looked_;
  looked_ = at;
  waited_ = waited;
  return std::max(std::chrono::nanoseconds{0}, elapsed - starved);
}

}  // namespace mvr::process
