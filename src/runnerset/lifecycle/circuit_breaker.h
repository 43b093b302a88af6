// The circuit breaker of a runner class (issue 55, item 4): a class whose VMs keep failing (lost
// mid-job, or failing at the platform before they run) is paused for a while, so that a broken
// image version or a platform fault in the class's size does not burn a VM and a job attempt per
// queued job. Configured per class (classes[].circuitBreaker: `failures` within `windowSeconds`
// pause it for `pauseSeconds`). Closed: launches go. Open (paused): the launcher defers the
// class's jobs until the pause ends. Half-open (from the pause's end until a probe's VM boots):
// one launch goes (the probe) and the others wait; its VM booting closes the breaker, its failure
// pauses the class again at once, and a probe neither boots nor fails within a window lets
// another go. A pure record of failure times and a pure verdict; ClassBreaker
// (classes/class_breaker.h) keeps the record in the store.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/clock.h"

namespace mvr::runnerset {

struct BreakerPolicy {
  int failures = 0;          // this many failures ... (0: the breaker is off)
  Duration window{600'000};  // ... within this long ...
  Duration pause{900'000};   // ... pause the class this long
  bool on() const { return failures > 0; }
};

// What a class's breaker remembers (stored as is).
struct BreakerRecord {
  std::vector<int64_t> failures_ms;  // counted failures since the breaker last closed, oldest first
  int64_t opened_ms = 0;             // when it was last paused (0: never)
  int64_t until_ms = 0;              // when that pause ends
  int64_t probe_ms = 0;              // when the last half-open probe was let through (0: never)
  int64_t closed_ms = 0;  // when a probe's VM last booted (at or after until_ms: closed again)
  bool operator==(const BreakerRecord&) const = default;
};

enum class BreakerPhase { kClosed, kOpen, kHalfOpen };
const char* BreakerPhaseName(BreakerPhase phase);  // "closed", "open", "half_open"

struct BreakerVerdict {
  BreakerPhase phase = BreakerPhase::kClosed;
  std::optional<TimePoint> until;  // kOpen: when the pause ends
  int recent_failures = 0;         // counted failures within the window before now
  bool probe_due = false;          // kHalfOpen: no probe is under way, one may launch now
};

// The record after a failure at `at`. A failure while paused (a VM launched before the pause)
// is not counted: the pause is not lengthened by its own stragglers. A failure while half-open
// pauses again. Otherwise the failure is counted with those of the last window; the policy's
// count of them pauses the class from `at`.
BreakerRecord RecordBreakerFailure(const BreakerPolicy& policy, BreakerRecord record, TimePoint at);
// The record after a launch of the class's committed at `at` (its VM booted): a half-open breaker
// closes; otherwise nothing changes.
BreakerRecord RecordBreakerSuccess(const BreakerPolicy& policy, BreakerRecord record, TimePoint at);
// The record with a half-open probe let through at `at`; nullopt when none is due (the breaker is
// not half-open, or a probe let through less than a window ago is still under way).
std::optional<BreakerRecord> TakeBreakerProbe(const BreakerPolicy& policy, BreakerRecord record,
                                              TimePoint at);
// The breaker at `now`.
BreakerVerdict DecideBreaker(const BreakerPolicy& policy, const BreakerRecord& record,
                             TimePoint now);

}  // namespace mvr::runnerset
