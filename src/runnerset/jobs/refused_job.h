// RefusedJob: a queued job the set will not run because of what it asks for (a platform a MicroVM
// is not: x64, windows, ...), as the webhook decided it. The status page lists the last ones, so
// an operator sees why such a job got no VM; the metric counts them.
// Thread-safety: a plain value; RefusedJobsJson is pure.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "base/clock.h"

namespace mvr::runnerset {

struct RefusedJob {
  std::string repository;
  int64_t job_id = 0;
  std::string job_name;  // GitHub's; attacker-controlled text, escaped wherever it is shown
  std::string label;     // the label it was refused for, as the job wrote it
  std::string reason;    // the decision's name, e.g. "not_arm64"
  TimePoint at{};
};

// [{"repository", "jobId", "jobName", "label", "reason", "atMs"}], newest first.
nlohmann::json RefusedJobsJson(const std::vector<RefusedJob>& jobs);

}  // namespace mvr::runnerset
