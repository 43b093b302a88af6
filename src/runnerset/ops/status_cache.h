// StatusReportCache: what `mvr serve`'s status routes (GET / and GET /status) answer, gathered at
// most once per max_age however often they are asked (issue 53, item 1): each gathering lists
// runners on GitHub and VMs on AWS and scans the store, and a page open in a browser reloads every
// 5 s, so answering each request afresh would let anyone who can reach the routes spend GitHub's
// budget. Callers that ask while a gathering runs wait for it and share its result. Thread-safety:
// Get may be called from many threads; `gather` runs on one at a time, no lock held.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/clock.h"

namespace mvr::runnerset {

class StatusReportCache {
 public:
  StatusReportCache(const Clock& clock, Duration max_age) : clock_(clock), max_age_(max_age) {}

  // The status gathered less than max_age ago (counted from the gathering's start), else the one
  // `gather` makes now.
  nlohmann::json Get(const std::function<nlohmann::json()>& gather);
  // How many gatherings ran (tests).
  int64_t gatherings() const;

 private:
  const Clock& clock_;
  const Duration max_age_;
  mutable std::mutex mu_;
  std::condition_variable done_;
  std::optional<nlohmann::json> last_;  // guarded by mu_
  TimePoint started_{};                 // guarded by mu_: when last_ began to be gathered
  bool gathering_ = false;              // guarded by mu_
  int64_t generation_ = 0;              // guarded by mu_: gatherings finished (or failed)
};

}  // namespace mvr::runnerset
