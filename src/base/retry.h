// Retry with full jitter ("Exponential Backoff And Jitter", AWS Architecture Blog): the delay
// before attempt n+1 is uniform in [0, min(cap, base * 2^n)], raised to the service's Retry-After
// when it gave one. Only Throttled and Transient errors are retried; the loop also stops when the
// next sleep would pass the overall deadline.
// Thread-safety: stateless; the seam objects passed in must be thread-safe if shared.
#pragma once

#include <functional>
#include <optional>

#include "base/clock.h"
#include "base/random.h"
#include "base/seam.h"
#include "base/status.h"

namespace mvr {

struct RetryPolicy {
  int max_attempts = 6;  // including the first
  Duration base_delay{200};
  Duration max_delay{10'000};  // cap on one delay
  Duration deadline{0};        // overall budget from the first attempt; 0 = none
};

// `base` with its overall budget cut to what is left until `deadline` (one attempt when none is).
RetryPolicy PolicyUntil(const Clock& clock, TimePoint deadline, RetryPolicy base);

// Throttled and Transient are worth another try; everything else is final.
bool IsRetryable(const Status& status);

// Delay before retry number `retry` (0 for the first retry).
Duration FullJitterDelay(const RetryPolicy& policy, int retry, Random& random);

// Runs `attempt` until it succeeds, fails with a final error, or the policy runs out. The error
// returned is the last attempt's, annotated with the number of attempts when more than one ran.
Status RetryStatus(const RetryPolicy& policy, const Seam& deps,
                   const std::function<Status()>& attempt,
                   const std::function<bool(const Status&)>& retryable = IsRetryable);

// Polling for a state until a deadline: full-jitter delays from `base` doubling up to `cap`, at
// least `min_delay`, raised to a Retry-After, never past the deadline.
struct PollPolicy {
  Duration base;
  Duration cap;
  Duration min_delay;
};

// Sleeps before the poll after poll number `poll` (0 for the first). Returns false, without
// sleeping, once `deadline` has passed. `last` is the last poll's outcome (an error's Retry-After
// is honoured).
bool SleepBeforeNextPoll(const PollPolicy& policy, const Seam& deps, int poll, TimePoint deadline,
                         const Status& last);

template <typename T>
Result<T> Retry(const RetryPolicy& policy, const Seam& deps,
                const std::function<Result<T>()>& attempt,
                const std::function<bool(const Status&)>& retryable = IsRetryable) {
  std::optional<T> value;
  Status status = RetryStatus(
      policy, deps,
      [&]() -> Status {
        Result<T> r = attempt();
        if (!r.ok()) return r.status();
        value.emplace(std::move(r).value());
        return Status::Ok();
      },
      retryable);
  if (!status.ok()) return status;
  return std::move(*value);
}

}  // namespace mvr
