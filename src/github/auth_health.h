// AuthHealth: whether GitHub accepts the set's credentials, and when to ask it again while it
// does not. A revoked App key or an expired PAT answers 401 to every call; retrying each call at
// its own pace would send GitHub a storm of doomed requests. After a 401, calls are refused here
// (Unauthorized, error type "AuthFailing", with the wait as retry_after) until the next probe is
// due; one call is then let through as the probe. The wait doubles after each 401 up to a cap,
// with jitter (equal jitter: half fixed, half drawn), so the probe rate has a firm upper bound.
// Any answer that shows the credentials were accepted ends the outage.
// Thread-safety: every method is safe from many threads.
#pragma once

#include <mutex>
#include <optional>

#include "base/clock.h"
#include "base/random.h"
#include "base/status.h"

namespace mvr::github {

struct AuthBackoff {
  Duration base{2'000};   // the wait after the first 401
  Duration cap{300'000};  // the longest wait between probes
};

class AuthHealth {
 public:
  enum class Change { kNone, kFailing, kRecovered };

  // `random` (the seam's) draws the jitter; null means none (every wait is the full delay). It
  // must outlive this.
  AuthHealth(AuthBackoff backoff, Random* random) : backoff_(backoff), random_(random) {}

  // Whether a call may go to GitHub now: healthy (false), or failing with the next probe due and
  // no other probe in flight (true: the caller is the probe). Otherwise Unauthorized
  // "AuthFailing" with retry_after the time until the next probe. The caller must report the
  // outcome of an admitted call with one of the On* below.
  Result<bool> Admit(TimePoint now);
  // The outcome of an admitted call: a 401 (the credentials were refused), an answer that shows
  // they were accepted, or neither (a network failure, a 5xx: nothing learnt). `probe` is what
  // Admit said: only a probe ends an outage (a call sent before it began may still come back
  // 200 after it began).
  Change OnRefused(TimePoint now);
  Change OnAccepted(TimePoint now, bool probe);
  void OnInconclusive(TimePoint now, bool probe);

  // When the current outage began (nullopt while GitHub accepts the credentials).
  std::optional<TimePoint> failing_since() const;
  // 401s in a row in the current outage.
  int refusals() const;
  // The wait after `refusals` 401s in a row, before jitter: base * 2^(refusals-1), at most cap.
  Duration DelayAfter(int refusals) const;

 private:
  AuthBackoff backoff_;
  Random* random_;
  mutable std::mutex mu_;
  std::optional<TimePoint> failing_since_;  // guarded by mu_
  TimePoint next_probe_{};                  // guarded by mu_
  int refusals_ = 0;                        // guarded by mu_
  bool probe_in_flight_ = false;            // guarded by mu_
};

}  // namespace mvr::github
