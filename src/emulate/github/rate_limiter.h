// RateLimiter: GitHub's REST rate limits, per caller. A primary budget of N requests per hour
// window (the X-RateLimit-* headers; when spent, 403) and an optional secondary limit on
// content-creating requests per minute (429 with Retry-After). Driven by the Clock.
// Thread-safety: every method is safe from many threads.
#pragma once

#include <deque>
#include <map>
#include <mutex>
#include <string>

#include "base/clock.h"

namespace mvr::emulate::github {

struct RateOptions {
  int64_t limit_per_hour = 5000;
  int secondary_per_minute = 0;  // 0: no secondary limit
};

struct RateState {
  int64_t limit = 0;
  int64_t remaining = 0;
  int64_t used = 0;
  int64_t reset_epoch_seconds = 0;
  bool primary_exceeded = false;
  bool secondary_exceeded = false;
  int64_t retry_after_seconds = 0;
};

class RateLimiter {
 public:
  RateLimiter(RateOptions options, const Clock& clock) : options_(options), clock_(clock) {}

  // Counts one request by `bucket` (a mutating one counts toward the secondary limit too) and
  // returns the state to report. A refused request is not counted.
  RateState Charge(const std::string& bucket, bool mutating);
  // The state without counting (GET /rate_limit).
  RateState Peek(const std::string& bucket);

 private:
  struct Window {
    TimePoint start;
    int64_t used = 0;
    std::deque<TimePoint> recent_mutations;
  };
  Window& WindowLocked(const std::string& bucket);
  RateState StateLocked(const Window& w) const;

  RateOptions options_;
  const Clock& clock_;
  std::mutex mu_;
  std::map<std::string, Window> windows_;
};

}  // namespace mvr::emulate::github
