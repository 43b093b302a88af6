// One page of GET /repos/{o}/{r}/actions/runs, read for what the queued-jobs listing needs of each
// run (its id and when it started). A page holds up to 100 runs, each with two full repository
// objects and its head commit (~6 KB a run): building a JSON tree of all of it to keep three
// fields was most of a janitor sweep's CPU (the fair-share simulation: 42% of a seed). This reader
// skips what it does not keep (simdjson On-Demand) and checks what it keeps as strictly as the
// tree did: the same errors for a missing or mistyped member.
// Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace mvr::github {

struct RunSeen {
  int64_t id = 0;
  std::optional<TimePoint> started;  // the latest attempt's start (else the run's creation)
};

// {"total_count": N, "workflow_runs": [{"id": …, "run_started_at": …, "created_at": …}, …]}:
// every run's id (required, a positive-or-zero integer) and start (`run_started_at`, else
// `created_at`; null or absent: none). InvalidArgument naming the member when the body is not
// such an object.
Result<std::vector<RunSeen>> ReadRunsPage(std::string_view body);

}  // namespace mvr::github
