// RateLimiter: GitHub's REST rate limits, per caller. A primary budget of N requests per hour
// window (the X-RateLimit-* headers; when spent, 403 with remaining 0) and, with `github` set
// (`--rate-limits github`), GitHub's documented secondary limits ("Rate limits for the REST API"):
// at most 100 concurrent requests, 900 points a minute per endpoint (GET 1, others 5), 80
// content-creating requests a minute and 500 an hour, and 2,000 installation-token requests an
// hour per App. A secondary limit answers 429 with Retry-After (seconds until the window lets the
// request in). The windows of the secondary limits slide; the primary's is fixed and starts with
// the caller's first request, as GitHub's does. Without `github` only the primary and the older
// `secondary_per_minute` (mutating requests a minute) apply. `time_scale` shrinks every window
// (0.01: a minute lasts 0.6 s) so end-to-end tests see the limits in seconds. Driven by the
// Clock.
// Thread-safety: every method is safe from many threads.
#pragma once

#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "base/clock.h"

namespace mvr::emulate::github {

// GitHub's documented secondary limits (each 0: not enforced).
struct SecondaryLimits {
  int concurrent = 100;
  int endpoint_points_per_minute = 900;
  int content_per_minute = 80;
  int content_per_hour = 500;
  int token_requests_per_hour = 2000;
};

struct RateOptions {
  int64_t limit_per_hour = 5000;
  int secondary_per_minute = 0;  // mutating requests a minute before 429 (0: none)
  bool github = false;           // enforce `secondary` (--rate-limits github)
  SecondaryLimits secondary;
  double time_scale = 1.0;  // every window lasts this fraction of its length; (0, 1]
};

// One request, as the limits see it.
struct RateRequest {
  std::string method;    // GET counts 1 point, anything else 5
  std::string endpoint;  // "POST /repos/{}/{}/actions/runners/generate-jitconfig"-like key
  bool mutating = false;
  bool content_creating = false;  // counts toward the content-creation limits
  bool token_request = false;     // POST /app/installations/{id}/access_tokens
};

// Which limit refused a request (the 429's reason, and the emulator's counters).
enum class RateRefusal {
  kNone,
  kPrimary,
  kConcurrent,
  kEndpointPoints,
  kContentPerMinute,
  kContentPerHour,
  kTokenRequests,
  kMutationsPerMinute,
};
const char* RateRefusalName(RateRefusal refusal);

struct RateState {
  int64_t limit = 0;
  int64_t remaining = 0;
  int64_t used = 0;
  int64_t reset_epoch_seconds = 0;
  bool primary_exceeded = false;
  bool secondary_exceeded = false;
  RateRefusal refusal = RateRefusal::kNone;
  int64_t retry_after_seconds = 0;
};

class RateLimiter {
 public:
  RateLimiter(RateOptions options, const Clock& clock);

  // Counts one request by `bucket` and returns the state to report. A refused request is not
  // counted. An admitted request is in flight until Done(bucket).
  RateState Charge(const std::string& bucket, const RateRequest& request);
  void Done(const std::string& bucket);
  // The state without counting (GET /rate_limit).
  RateState Peek(const std::string& bucket);
  // Requests refused so far, by RateRefusalName (tests, the simulation's report).
  std::map<std::string, int64_t> Refusals() const;
  // The most content-creating requests any caller had admitted within one minute and within one
  // hour (the sliding windows at their fullest): which content limit a burst reached.
  std::pair<int, int> ContentPeaks() const;
  // When the last content-creating request was admitted, by any caller (nullopt: none yet): how
  // long a burst's JIT configs took.
  std::optional<TimePoint> LastContentAt() const;

 private:
  struct Window {
    TimePoint start;
    int64_t used = 0;
    int in_flight = 0;
    std::deque<TimePoint> recent_mutations;
    std::deque<TimePoint> content_minute, content_hour, token_hour;
    std::map<std::string, std::deque<std::pair<TimePoint, int>>> endpoint_points;
  };
  Window& WindowLocked(const std::string& bucket);
  RateState StateLocked(const Window& w) const;
  // The secondary limit `request` would break now, and the wait until it would not.
  std::pair<RateRefusal, Duration> SecondaryLocked(Window& w, const RateRequest& request);
  void RecordLocked(Window& w, const RateRequest& request);

  RateOptions options_;
  const Clock& clock_;
  Duration minute_, hour_;
  mutable std::mutex mu_;
  std::map<std::string, Window> windows_;
  std::map<std::string, int64_t> refusals_;
  int content_minute_peak_ = 0, content_hour_peak_ = 0;
  std::optional<TimePoint> last_content_;
};

}  // namespace mvr::emulate::github
