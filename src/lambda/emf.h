// Metrics of the runner set's Lambda functions as CloudWatch embedded metric format (EMF) log
// lines: one JSON line per invocation on stdout, which CloudWatch Logs turns into metrics with
// no API call. The counters are those of `mvr serve`'s /metrics (received, ignored, launched,
// deferred, duplicate, dropped_not_queued, failed, terminated, and the janitor's as
// janitor_<counter>: janitor_sweeps, janitor_vms_terminated ...), as what this invocation added,
// in namespace "mvr/runnerset" with the dimensions RunnerSetId and Function.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "base/clock.h"
#include "runnerset/metrics/metrics.h"

namespace mvr::lambda {

// Metric name → value.
using CounterValues = std::map<std::string, int64_t>;

CounterValues ReadCounters(const runnerset::Metrics& metrics);

// The EMF line (no trailing newline) for the counters that grew from `before` to `after` and
// the `gauges` as they are (the GitHub rate budget: github_rate_remaining ...); "" when no
// counter grew and there is no gauge.
std::string EmfLine(const std::string& runner_set_id, const std::string& function,
                    const CounterValues& before, const CounterValues& after, TimePoint now,
                    const CounterValues& gauges = {});

}  // namespace mvr::lambda
