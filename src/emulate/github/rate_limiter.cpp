#include "emulate/github/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace mvr::emulate::github {
namespace {

constexpr Duration kHour{3'600'000};
constexpr Duration kMinute{60'000};

Duration Scaled(Duration d, double scale) {
  return std::max(
      Duration(1),
      Duration(static_cast<int64_t>(std::llround(static_cast<double>(d.count()) * scale))));
}

void Expire(std::deque<TimePoint>& times, TimePoint now, Duration window) {
  while (!times.empty() && now - times.front() >= window) times.pop_front();
}

// The wait until fewer than `limit` of `times` (oldest first) are within `window` of now.
Duration WaitForRoom(const std::deque<TimePoint>& times, size_t limit, TimePoint now,
                     Duration window) {
  if (times.size() < limit) return Duration(0);
  const TimePoint leaves = times[times.size() - limit] + window;
  return std::chrono::duration_cast<Duration>(leaves - now);
}

int Points(const RateRequest& r) { return r.method == "GET" || r.method == "HEAD" ? 1 : 5; }

}  // namespace

const char* RateRefusalName(RateRefusal refusal) {
  switch (refusal) {
    case RateRefusal::kNone:
      return "none";
    case RateRefusal::kPrimary:
      return "primary";
    case RateRefusal::kConcurrent:
      return "concurrent";
    case RateRefusal::kEndpointPoints:
      return "endpoint_points_per_minute";
    case RateRefusal::kContentPerMinute:
      return "content_per_minute";
    case RateRefusal::kContentPerHour:
      return "content_per_hour";
    case RateRefusal::kTokenRequests:
      return "token_requests_per_hour";
    case RateRefusal::kMutationsPerMinute:
      return "mutations_per_minute";
  }
  return "unknown";
}

RateLimiter::RateLimiter(RateOptions options, const Clock& clock)
    : options_(options),
      clock_(clock),
      minute_(Scaled(kMinute, options.time_scale)),
      hour_(Scaled(kHour, options.time_scale)) {}

RateLimiter::Window& RateLimiter::WindowLocked(const std::string& bucket) {
  const TimePoint now = clock_.Now();
  auto [it, inserted] = windows_.try_emplace(bucket);
  Window& w = it->second;
  if (inserted || now >= w.start + hour_) {
    w.start = now;
    w.used = 0;
  }
  Expire(w.recent_mutations, now, minute_);
  Expire(w.content_minute, now, minute_);
  Expire(w.content_hour, now, hour_);
  Expire(w.token_hour, now, hour_);
  for (auto e = w.endpoint_points.begin(); e != w.endpoint_points.end();) {
    while (!e->second.empty() && now - e->second.front().first >= minute_) e->second.pop_front();
    e = e->second.empty() ? w.endpoint_points.erase(e) : std::next(e);
  }
  return w;
}

RateState RateLimiter::StateLocked(const Window& w) const {
  RateState s;
  s.limit = options_.limit_per_hour;
  s.used = w.used;
  s.remaining = std::max<int64_t>(0, s.limit - s.used);
  s.reset_epoch_seconds = ToUnixSeconds(w.start + hour_);
  return s;
}

std::pair<RateRefusal, Duration> RateLimiter::SecondaryLocked(Window& w,
                                                              const RateRequest& request) {
  const TimePoint now = clock_.Now();
  if (request.mutating && options_.secondary_per_minute > 0) {
    Duration wait = WaitForRoom(w.recent_mutations,
                                static_cast<size_t>(options_.secondary_per_minute), now, minute_);
    if (wait.count() > 0) return {RateRefusal::kMutationsPerMinute, wait};
  }
  if (!options_.github) return {RateRefusal::kNone, Duration(0)};
  const SecondaryLimits& l = options_.secondary;
  // GitHub does not say how long to wait after too many concurrent requests; a minute is what it
  // asks when it says nothing.
  if (l.concurrent > 0 && w.in_flight >= l.concurrent) return {RateRefusal::kConcurrent, minute_};
  if (l.endpoint_points_per_minute > 0) {
    auto& log = w.endpoint_points[request.endpoint];
    int sum = Points(request);
    for (const auto& e : log) sum += e.second;
    // Until enough of the oldest points leave the window.
    for (auto e = log.begin(); sum > l.endpoint_points_per_minute && e != log.end(); ++e) {
      sum -= e->second;
      if (sum <= l.endpoint_points_per_minute) {
        return {RateRefusal::kEndpointPoints,
                std::chrono::duration_cast<Duration>(e->first + minute_ - now)};
      }
    }
  }
  if (request.content_creating) {
    Duration m = WaitForRoom(w.content_minute, l.content_per_minute, now, minute_);
    if (l.content_per_minute > 0 && m.count() > 0) return {RateRefusal::kContentPerMinute, m};
    Duration h = WaitForRoom(w.content_hour, l.content_per_hour, now, hour_);
    if (l.content_per_hour > 0 && h.count() > 0) return {RateRefusal::kContentPerHour, h};
  }
  if (request.token_request && l.token_requests_per_hour > 0) {
    Duration h = WaitForRoom(w.token_hour, l.token_requests_per_hour, now, hour_);
    if (h.count() > 0) return {RateRefusal::kTokenRequests, h};
  }
  return {RateRefusal::kNone, Duration(0)};
}

void RateLimiter::RecordLocked(Window& w, const RateRequest& request) {
  const TimePoint now = clock_.Now();
  ++w.used;
  ++w.in_flight;
  if (request.mutating) w.recent_mutations.push_back(now);
  if (!options_.github) return;
  w.endpoint_points[request.endpoint].emplace_back(now, Points(request));
  if (request.content_creating) {
    last_content_ = now;
    w.content_minute.push_back(now);
    w.content_hour.push_back(now);
    content_minute_peak_ =
        std::max(content_minute_peak_, static_cast<int>(w.content_minute.size()));
    content_hour_peak_ = std::max(content_hour_peak_, static_cast<int>(w.content_hour.size()));
  }
  if (request.token_request) w.token_hour.push_back(now);
}

RateState RateLimiter::Charge(const std::string& bucket, const RateRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  Window& w = WindowLocked(bucket);
  if (w.used >= options_.limit_per_hour) {
    RateState s = StateLocked(w);
    s.primary_exceeded = true;
    s.refusal = RateRefusal::kPrimary;
    s.retry_after_seconds =
        std::max<int64_t>(1, s.reset_epoch_seconds - ToUnixSeconds(clock_.Now()));
    ++refusals_[RateRefusalName(s.refusal)];
    return s;
  }
  auto [refusal, wait] = SecondaryLocked(w, request);
  if (refusal != RateRefusal::kNone) {
    RateState s = StateLocked(w);
    s.secondary_exceeded = true;
    s.refusal = refusal;
    s.retry_after_seconds = std::max<int64_t>(1, (wait.count() + 999) / 1000);
    ++refusals_[RateRefusalName(refusal)];
    return s;
  }
  RecordLocked(w, request);
  return StateLocked(w);
}

void RateLimiter::Done(const std::string& bucket) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = windows_.find(bucket);
  if (it != windows_.end() && it->second.in_flight > 0) --it->second.in_flight;
}

RateState RateLimiter::Peek(const std::string& bucket) {
  std::lock_guard<std::mutex> lock(mu_);
  return StateLocked(WindowLocked(bucket));
}

std::map<std::string, int64_t> RateLimiter::Refusals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refusals_;
}

}  // namespace mvr::emulate::github

namespace mvr::emulate::github {

std::pair<int, int> RateLimiter::ContentPeaks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {content_minute_peak_, content_hour_peak_};
}

std::optional<TimePoint> RateLimiter::LastContentAt() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_content_;
}

}  // namespace mvr::emulate::github
