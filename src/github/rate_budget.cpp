#include "github/rate_budget.h"

#include <algorithm>

namespace mvr::github {
namespace {

constexpr Duration kMinute{60'000};
constexpr Duration kHour{3'600'000};
// How long the other content-creating calls wait for a probe's answer at a time, and when a probe
// whose answer never came is given up. (Probing lasts until a minute after the last refusal.)
constexpr Duration kProbeWait{1'000};
constexpr Duration kProbeGiveUp{30'000};

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

int Points(const std::string& method) { return method == "GET" || method == "HEAD" ? 1 : 5; }

void Expire(std::deque<TimePoint>& times, TimePoint now, Duration window) {
  while (!times.empty() && now - times.front() >= window) times.pop_front();
}

// The wait until fewer than `limit` of `times` (oldest first) are within `window` of now.
Duration WaitForRoom(const std::deque<TimePoint>& times, int limit, TimePoint now,
                     Duration window) {
  if (limit <= 0 || static_cast<int>(times.size()) < limit) return Duration(0);
  const TimePoint leaves = times[times.size() - static_cast<size_t>(limit)] + window;
  return std::max(Duration(0), std::chrono::duration_cast<Duration>(leaves - now));
}

Duration Until(TimePoint when, TimePoint now) {
  return std::max(Duration(0), std::chrono::duration_cast<Duration>(when - now));
}

}  // namespace

RateCall RateCall::Of(const std::string& method, const std::string& target) {
  RateCall c;
  c.method = method;
  // The path only: a pagination link is absolute, and its query is no part of the endpoint.
  std::string path = target;
  if (size_t scheme = path.find("://"); scheme != std::string::npos) {
    size_t slash = path.find('/', scheme + 3);
    path = slash == std::string::npos ? "/" : path.substr(slash);
  }
  path = path.substr(0, path.find('?'));
  std::string endpoint = method + " ";
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find('/', start + 1);
    if (end == std::string::npos) end = path.size();
    std::string segment = path.substr(start, end - start);
    const bool numeric =
        segment.size() > 1 && segment.find_first_not_of("0123456789", 1) == std::string::npos;
    endpoint += numeric ? "/{id}" : segment;
    start = end;
  }
  c.endpoint = std::move(endpoint);
  c.content_creating = method == "POST" && (EndsWith(path, "/generate-jitconfig") ||
                                            EndsWith(path, "/registration-token"));
  return c;
}

Duration RateBudget::WaitLocked(TimePoint now, const RateCall& call) {
  if (!options_.pace) return Duration(0);
  Duration wait = Until(blocked_until_, now);
  if (primary_ && primary_->remaining <= 0) wait = std::max(wait, Until(primary_->reset, now));
  if (call.content_creating) {
    wait = std::max(wait, Until(content_blocked_until_, now));
    Expire(content_minute_, now, kMinute);
    Expire(content_hour_, now, kHour);
    wait = std::max(wait, WaitForRoom(content_minute_, options_.content_per_minute, now, kMinute));
    wait = std::max(wait, WaitForRoom(content_hour_, options_.content_per_hour, now, kHour));
  }
  if (options_.endpoint_points_per_minute > 0) {
    auto& log = endpoint_[call.endpoint];
    while (!log.empty() && now - log.front().first >= kMinute) log.pop_front();
    int sum = Points(call.method);
    for (const auto& e : log) sum += e.second;
    for (auto e = log.begin(); sum > options_.endpoint_points_per_minute && e != log.end(); ++e) {
      sum -= e->second;
      if (sum <= options_.endpoint_points_per_minute) {
        wait = std::max(wait, Until(e->first + kMinute, now));
      }
    }
  }
  return wait;
}

Status RateBudget::Admit(TimePoint now, const RateCall& call) {
  std::lock_guard<std::mutex> lock(mu_);
  const Duration wait = WaitLocked(now, call);
  if (wait.count() > 0) {
    ++refused_locally_;
    return Throttled("GitHub " + call.endpoint + " held back for " +
                     std::to_string((wait.count() + 999) / 1000) +
                     " s to stay within GitHub's rate limits")
        .WithErrorType("RateBudget")
        .WithRetryAfter(wait);
  }
  if (options_.pace && call.content_creating && content_probing_) {
    // A probe whose answer is lost (it never comes back here) is given up after a while.
    if (content_probe_sent_ && now - *content_probe_sent_ < kProbeGiveUp) {
      ++refused_locally_;
      return Throttled("GitHub " + call.endpoint +
                       " held back while the call before it is answered (GitHub refused one "
                       "within the last minute)")
          .WithErrorType("RateBudget")
          .WithRetryAfter(kProbeWait);
    }
    content_probe_sent_ = now;
  }
  if (primary_ && now < primary_->reset) --primary_->remaining;  // until the answer says
  if (!options_.pace) return Status::Ok();
  if (call.content_creating) {
    content_minute_.push_back(now);
    content_hour_.push_back(now);
  }
  if (options_.endpoint_points_per_minute > 0) {
    endpoint_[call.endpoint].emplace_back(now, Points(call.method));
  }
  return Status::Ok();
}

void RateBudget::OnAnswer(TimePoint now, const RateCall& call, const Status& outcome,
                          const std::optional<RateLimit>& headers) {
  std::lock_guard<std::mutex> lock(mu_);
  if (headers && (!primary_ || headers->reset >= primary_->reset || now >= primary_->reset)) {
    primary_ = headers;
  }
  const std::string& type = outcome.error_type();
  const bool limited = outcome.code() == Code::kThrottled &&
                       (type == "PrimaryRateLimit" || type == "SecondaryRateLimit");
  if (call.content_creating) {
    // Refused: the next one after the Retry-After probes. The probe answered: the limit is over.
    // (An answer to a call sent before the refusal, with no probe out yet, says nothing.)
    if (limited) {
      content_probing_ = true;
      content_probe_sent_.reset();
      content_limited_at_ = now;
    } else if (content_probe_sent_) {
      content_probe_sent_.reset();  // the next one may go
      if (now - content_limited_at_ >= kMinute) content_probing_ = false;
    }
  }
  if (!limited) return;
  ++limited_by_github_;
  const TimePoint until = now + outcome.retry_after().value_or(kMinute);
  // A content limit's refusal holds back content alone; any other holds back every call.
  TimePoint& block = type == "SecondaryRateLimit" && call.content_creating ? content_blocked_until_
                                                                           : blocked_until_;
  block = std::max(block, until);
}

RateBudgetSnapshot RateBudget::Snapshot(TimePoint now) const {
  std::lock_guard<std::mutex> lock(mu_);
  RateBudgetSnapshot s;
  s.primary = primary_;
  auto within = [&](const std::deque<TimePoint>& times, Duration window) {
    return static_cast<int>(
        std::count_if(times.begin(), times.end(), [&](TimePoint t) { return now - t < window; }));
  };
  s.content_per_minute = options_.content_per_minute;
  s.content_per_hour = options_.content_per_hour;
  s.content_minute_remaining =
      std::max(0, options_.content_per_minute - within(content_minute_, kMinute));
  s.content_hour_remaining = std::max(0, options_.content_per_hour - within(content_hour_, kHour));
  if (blocked_until_ > now) s.blocked_until = blocked_until_;
  if (content_blocked_until_ > now) s.content_blocked_until = content_blocked_until_;
  // The wait Admit would give a content-creating call now (WaitForRoom needs no expiry: an
  // entry older than the window only makes the wait 0).
  if (options_.pace) {
    s.content_wait =
        std::max({Until(blocked_until_, now), Until(content_blocked_until_, now),
                  WaitForRoom(content_minute_, options_.content_per_minute, now, kMinute),
                  WaitForRoom(content_hour_, options_.content_per_hour, now, kHour)});
    if (primary_ && primary_->remaining <= 0) {
      s.content_wait = std::max(s.content_wait, Until(primary_->reset, now));
    }
  }
  s.refused_locally = refused_locally_;
  s.limited_by_github = limited_by_github_;
  return s;
}

}  // namespace mvr::github
