#include "github/auth_health.h"

#include <algorithm>

#include "base/time_format.h"

namespace mvr::github {

Duration AuthHealth::DelayAfter(int refusals) const {
  Duration d = backoff_.base;
  for (int i = 1; i < refusals && d < backoff_.cap; ++i) d *= 2;
  return std::min(d, backoff_.cap);
}

Result<bool> AuthHealth::Admit(TimePoint now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!failing_since_) return false;
  if (now >= next_probe_ && !probe_in_flight_) {
    probe_in_flight_ = true;
    return true;
  }
  // While a probe is out, the others wait at least until it could have been answered.
  const Duration wait =
      std::max(Duration(1'000), std::chrono::duration_cast<Duration>(next_probe_ - now));
  return Unauthorized("GitHub auth failing since " + FormatRfc3339(*failing_since_) +
                      " (GitHub answered 401 Bad credentials); the next try is in " +
                      std::to_string(wait.count() / 1000) + " s")
      .WithErrorType("AuthFailing")
      .WithRetryAfter(wait);
}

AuthHealth::Change AuthHealth::OnRefused(TimePoint now) {
  std::lock_guard<std::mutex> lock(mu_);
  probe_in_flight_ = false;  // a non-probe 401 during a probe: either answer says the same
  const bool began = !failing_since_;
  if (began) failing_since_ = now;
  ++refusals_;
  const Duration delay = DelayAfter(refusals_);
  Duration jitter{0};
  if (random_ != nullptr) {
    jitter = Duration(
        static_cast<int64_t>(random_->Uniform(static_cast<uint64_t>(delay.count() / 2) + 1)));
    next_probe_ = now + delay / 2 + jitter;
  } else {
    next_probe_ = now + delay;
  }
  return began ? Change::kFailing : Change::kNone;
}

AuthHealth::Change AuthHealth::OnAccepted(TimePoint, bool probe) {
  std::lock_guard<std::mutex> lock(mu_);
  if (probe) probe_in_flight_ = false;
  if (!failing_since_ || !probe) return Change::kNone;
  failing_since_.reset();
  refusals_ = 0;
  return Change::kRecovered;
}

void AuthHealth::OnInconclusive(TimePoint now, bool probe) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!probe) return;
  // A probe that learnt nothing waits half a step before the next, so a 5xx does not open the
  // gate to every caller.
  if (failing_since_) next_probe_ = now + DelayAfter(refusals_) / 2;
  probe_in_flight_ = false;
}

std::optional<TimePoint> AuthHealth::failing_since() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failing_since_;
}

int AuthHealth::refusals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refusals_;
}

}  // namespace mvr::github
