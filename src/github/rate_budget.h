// RateBudget: the client's own record of GitHub's rate limits ("Rate limits for the REST API"),
// so that it paces itself instead of learning each limit from a 403 or 429. Before a call goes
// out, Admit checks each limit the client knows against the calls it sent itself: 80
// content-creating calls (a JIT config or a registration token; whether GitHub counts a JIT
// config as content is undocumented, so it is taken to) in any minute and 500 in any hour, and
// 900 points (GET 1, others 5) in any minute per endpoint. The windows slide: a sliding window
// that holds at most N also holds a fixed window to N, whichever GitHub uses. A token bucket
// refilling at 500/h would pace a burst at 8 a minute from the start; GitHub allows 80 a minute
// until 500 are spent. The primary budget (5,000 an hour) is read from each answer's
// X-RateLimit-* headers, and at remaining 0 nothing goes until X-RateLimit-Reset. A 403/429 that
// GitHub did send blocks the calls it concerns until its Retry-After (content-creating calls for a
// content limit's refusal, every call otherwise). A refused call is Throttled with error type
// "RateBudget" and the wait as retry_after; nothing is sent.
// Thread-safety: every method is safe from many threads.
#pragma once

#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "base/clock.h"
#include "base/status.h"
#include "github/types.h"

namespace mvr::github {

struct RateBudgetOptions {
  bool pace = true;  // false: hold nothing back (the simulation's planted bug)
  int content_per_minute = 80;
  int content_per_hour = 500;
  int endpoint_points_per_minute = 900;
};

// One call, as the budget sees it.
struct RateCall {
  std::string method;
  std::string endpoint;  // method and path with numeric segments made generic
  bool content_creating = false;
  static RateCall Of(const std::string& method, const std::string& target);
};

// What is left, for /metrics, EMF and `mvr status`.
struct RateBudgetSnapshot {
  std::optional<RateLimit> primary;                  // from the last answer's headers
  int content_per_minute = 0, content_per_hour = 0;  // the limits it paces to
  int content_minute_remaining = 0;  // content-creating calls the client may still send now
  int content_hour_remaining = 0;
  Duration content_wait{0};  // until a content-creating call (a JIT config) would be admitted
  std::optional<TimePoint> blocked_until;          // every call waits until then
  std::optional<TimePoint> content_blocked_until;  // content-creating calls wait until then
  int64_t refused_locally = 0;                     // calls Admit held back
  int64_t limited_by_github = 0;                   // 403/429 rate-limit answers seen
};

class RateBudget {
 public:
  explicit RateBudget(RateBudgetOptions options) : options_(options) {}

  // Ok and the call counted, or Throttled "RateBudget" with retry_after: do not send it yet.
  Status Admit(TimePoint now, const RateCall& call);
  // What GitHub answered to an admitted call: its rate-limit headers (if any) and its outcome.
  void OnAnswer(TimePoint now, const RateCall& call, const Status& outcome,
                const std::optional<RateLimit>& headers);
  RateBudgetSnapshot Snapshot(TimePoint now) const;

 private:
  // The wait before `call` fits every limit, 0 when it fits now.
  Duration WaitLocked(TimePoint now, const RateCall& call);

  RateBudgetOptions options_;
  mutable std::mutex mu_;
  std::deque<TimePoint> content_minute_, content_hour_;                    // guarded by mu_
  std::map<std::string, std::deque<std::pair<TimePoint, int>>> endpoint_;  // guarded by mu_
  std::optional<RateLimit> primary_;                                       // guarded by mu_
  TimePoint blocked_until_{}, content_blocked_until_{};                    // guarded by mu_
  // After GitHub refused a content-creating call, the first one once its Retry-After is over is
  // a probe: the others wait for its answer instead of meeting the limit all at once. GitHub's
  // limit was then not the one the budget counts (another client shares it, or it is lower), so
  // until a minute has passed since the last refusal content-creating calls go one at a time,
  // each after the answer to the one before: a limit met again is met by one call, not by every
  // launcher at once. One JIT config at a time is still faster than 80 a minute.
  bool content_probing_ = false;                         // guarded by mu_
  std::optional<TimePoint> content_probe_sent_;          // guarded by mu_
  TimePoint content_limited_at_{};                       // guarded by mu_
  int64_t refused_locally_ = 0, limited_by_github_ = 0;  // guarded by mu_
};

}  // namespace mvr::github
