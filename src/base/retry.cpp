#include "base/retry.h"

#include <algorithm>
#include <string>

namespace mvr {

bool IsRetryable(const Status& status) {
  return status.code() == Code::kThrottled || status.code() == Code::kTransient;
}

RetryPolicy PolicyUntil(const Clock& clock, TimePoint deadline, RetryPolicy base) {
  base.deadline =
      std::max(Duration(0), std::chrono::duration_cast<Duration>(deadline - clock.Now()));
  if (base.deadline.count() == 0) base.max_attempts = 1;
  return base;
}

Duration FullJitterDelay(const RetryPolicy& policy, int retry, Random& random) {
  int64_t ceiling = policy.base_delay.count();
  for (int i = 0; i < retry && ceiling < policy.max_delay.count(); ++i) ceiling *= 2;
  ceiling = std::min<int64_t>(ceiling, policy.max_delay.count());
  if (ceiling <= 0) return Duration(0);
  return Duration(static_cast<int64_t>(random.Uniform(static_cast<uint64_t>(ceiling) + 1)));
}

bool SleepBeforeNextPoll(const PollPolicy& policy, const Seam& deps, int poll, TimePoint deadline,
                         const Status& last) {
  const TimePoint now = deps.clock.Now();
  if (now >= deadline) return false;
  RetryPolicy p;
  p.base_delay = policy.base;
  p.max_delay = policy.cap;
  Duration delay = std::max(policy.min_delay, FullJitterDelay(p, poll, deps.random));
  if (!last.ok() && last.retry_after()) delay = std::max(delay, *last.retry_after());
  deps.sleeper.Sleep(std::min(delay, std::chrono::duration_cast<Duration>(deadline - now)));
  return true;
}

Status RetryStatus(const RetryPolicy& policy, const Seam& deps,
                   const std::function<Status()>& attempt,
                   const std::function<bool(const Status&)>& retryable) {
  const TimePoint start = deps.clock.Now();
  const int max_attempts = std::max(1, policy.max_attempts);
  Status last;
  for (int n = 0; n < max_attempts; ++n) {
    last = attempt();
    if (last.ok() || !retryable(last)) break;
    if (n + 1 == max_attempts) break;
    Duration delay = FullJitterDelay(policy, n, deps.random);
    if (last.retry_after()) delay = std::max(delay, *last.retry_after());
    if (policy.deadline.count() > 0 && deps.clock.Now() + delay - start > policy.deadline) {
      return last.Annotate("gave up after " + std::to_string(n + 1) +
                           " attempts: the retry deadline would pass");
    }
    deps.sleeper.Sleep(delay);
  }
  return last;
}

}  // namespace mvr
