#include "emulate/github/rate_limiter.h"

#include <algorithm>

namespace mvr::emulate::github {
namespace {
constexpr Duration kHour{3'600'000};
constexpr Duration kMinute{60'000};
}  // namespace

RateLimiter::Window& RateLimiter::WindowLocked(const std::string& bucket) {
  const TimePoint now = clock_.Now();
  auto [it, inserted] = windows_.try_emplace(bucket);
  Window& w = it->second;
  if (inserted || now >= w.start + kHour) {
    w.start = now;
    w.used = 0;
  }
  while (!w.recent_mutations.empty() && now - w.recent_mutations.front() >= kMinute) {
    w.recent_mutations.pop_front();
  }
  return w;
}

RateState RateLimiter::StateLocked(const Window& w) const {
  RateState s;
  s.limit = options_.limit_per_hour;
  s.used = w.used;
  s.remaining = std::max<int64_t>(0, s.limit - s.used);
  s.reset_epoch_seconds = ToUnixSeconds(w.start + kHour);
  return s;
}

RateState RateLimiter::Charge(const std::string& bucket, bool mutating) {
  std::lock_guard<std::mutex> lock(mu_);
  Window& w = WindowLocked(bucket);
  if (w.used >= options_.limit_per_hour) {
    RateState s = StateLocked(w);
    s.primary_exceeded = true;
    s.retry_after_seconds =
        std::max<int64_t>(1, s.reset_epoch_seconds - ToUnixSeconds(clock_.Now()));
    return s;
  }
  if (mutating && options_.secondary_per_minute > 0 &&
      static_cast<int>(w.recent_mutations.size()) >= options_.secondary_per_minute) {
    RateState s = StateLocked(w);
    s.secondary_exceeded = true;
    auto wait = kMinute - (clock_.Now() - w.recent_mutations.front());
    s.retry_after_seconds = std::max<int64_t>(1, (wait.count() + 999) / 1000);
    return s;
  }
  ++w.used;
  if (mutating) w.recent_mutations.push_back(clock_.Now());
  return StateLocked(w);
}

RateState RateLimiter::Peek(const std::string& bucket) {
  std::lock_guard<std::mutex> lock(mu_);
  return StateLocked(WindowLocked(bucket));
}

}  // namespace mvr::emulate::github
