#include "runnerset/lifecycle/circuit_breaker.h"

#include <algorithm>

namespace mvr::runnerset {
namespace {

// The most failure times kept: a policy never needs more than its count.
constexpr size_t kMaxKept = 64;

// Paused once, and no probe's VM has booted since (at a time past the pause).
bool HalfOpen(const BreakerRecord& r) { return r.until_ms > 0 && r.closed_ms < r.until_ms; }

}  // namespace

const char* BreakerPhaseName(BreakerPhase phase) {
  switch (phase) {
    case BreakerPhase::kClosed:
      return "closed";
    case BreakerPhase::kOpen:
      return "open";
    case BreakerPhase::kHalfOpen:
      return "half_open";
  }
  return "closed";
}

BreakerRecord RecordBreakerFailure(const BreakerPolicy& policy, BreakerRecord record,
                                   TimePoint at) {
  if (!policy.on()) return record;
  const int64_t at_ms = ToUnixMillis(at);
  if (record.until_ms > 0 && at_ms < record.until_ms) return record;  // paused already
  if (HalfOpen(record)) {
    record.failures_ms.clear();
    record.opened_ms = at_ms;
    record.until_ms = at_ms + policy.pause.count();
    return record;
  }
  std::vector<int64_t>& f = record.failures_ms;
  f.push_back(at_ms);
  std::sort(f.begin(), f.end());
  // Only those within the window before `at`, and none from before the last pause ended.
  const int64_t from = std::max(at_ms - policy.window.count(), record.until_ms);
  f.erase(std::remove_if(f.begin(), f.end(), [&](int64_t t) { return t <= from && t != at_ms; }),
          f.end());
  if (f.size() > kMaxKept) f.erase(f.begin(), f.end() - kMaxKept);
  if (static_cast<int>(f.size()) >= policy.failures) {
    f.clear();
    record.opened_ms = at_ms;
    record.until_ms = at_ms + policy.pause.count();
  }
  return record;
}

BreakerVerdict DecideBreaker(const BreakerPolicy& policy, const BreakerRecord& record,
                             TimePoint now) {
  BreakerVerdict v;
  if (!policy.on()) return v;
  const int64_t now_ms = ToUnixMillis(now);
  for (int64_t t : record.failures_ms) {
    v.recent_failures += t > now_ms - policy.window.count() && t <= now_ms;
  }
  if (record.until_ms > now_ms) {
    v.phase = BreakerPhase::kOpen;
    v.until = TimePoint(Duration(record.until_ms));
  } else if (HalfOpen(record)) {
    v.phase = BreakerPhase::kHalfOpen;
    v.probe_due =
        record.probe_ms < record.until_ms || now_ms >= record.probe_ms + policy.window.count();
  }
  return v;
}

BreakerRecord RecordBreakerSuccess(const BreakerPolicy& policy, BreakerRecord record,
                                   TimePoint at) {
  const int64_t at_ms = ToUnixMillis(at);
  if (!policy.on() || !HalfOpen(record) || at_ms < record.until_ms) return record;
  record.closed_ms = at_ms;
  record.failures_ms.clear();
  return record;
}

std::optional<BreakerRecord> TakeBreakerProbe(const BreakerPolicy& policy, BreakerRecord record,
                                              TimePoint at) {
  if (!DecideBreaker(policy, record, at).probe_due) return std::nullopt;
  record.probe_ms = ToUnixMillis(at);
  return record;
}

}  // namespace mvr::runnerset
