// RunnerWatch: the "runner online" milestone of the job timeline. The launcher hands it each
// runner whose config it delivered; Poll looks for the awaited runners on GitHub and records the
// seconds from the job's webhook to the first look that shows the runner online or busy (or, for
// a runner no look saw, its job's start, which the in_progress webhook brings anyway).
//
// The watch spends little of the GitHub budget (issue 53, item 6: it used to list every runner of
// the scope once a second while any was awaited, which at organisation scope alone could drain the
// 5,000 calls an hour):
//   - each awaited runner is looked at 1 s after its delivery, then 2, 4 and 8 s later, then
//     every 8 s (a runner comes online a few seconds after its config arrives);
//   - a look is one call: `?name=` for one due runner, or the whole listing (its last page count)
//     when that costs fewer calls than the due runners' names;
//   - at most kCallsPerMinute calls in any minute; a due runner waits for the next free call;
//   - runners awaited longer than 10 minutes are dropped.
// The choice of a poll is the pure function PlanWatchLook. Thread-safety: safe to share; no lock
// is held across a GitHub call.
#pragma once

#include <deque>
#include <map>
#include <mutex>
#include <string>

#include "base/clock.h"
#include "base/logger.h"
#include "github/github.h"
#include "runnerset/metrics/metrics.h"

namespace mvr::runnerset {

// What one poll does: nothing, look up `names` runners by name (the first due ones), or list
// every runner of the scope.
struct WatchLook {
  enum class Kind { kNone, kByName, kFullListing } kind = Kind::kNone;
  size_t names = 0;
};

// `due`: awaited runners whose next look is due; `listing_pages`: the calls the last full listing
// took (1 before any); `calls_left`: calls the minute's allowance still has.
WatchLook PlanWatchLook(size_t due, size_t listing_pages, size_t calls_left);

class RunnerWatch {
 public:
  static constexpr size_t kCallsPerMinute = 20;

  RunnerWatch(const Clock& clock, const Logger& logger, github::GitHub& github,
              github::RunnerScope scope, Metrics& metrics)
      : clock_(clock),
        logger_(logger),
        github_(github),
        scope_(std::move(scope)),
        metrics_(metrics) {}

  // Awaits `runner_name`, whose job `job` (the timeline's key) had its webhook arrive at
  // `received_ms` (epoch ms); its config was delivered now.
  void Await(const std::string& runner_name, const std::string& job, int64_t received_ms);
  // The job of `runner_name` started at `started_at`: a runner no poll saw online (a fast job
  // comes and goes between polls) was online by then at the latest.
  void JobStarted(const std::string& runner_name, TimePoint started_at);
  // One look at GitHub's runners, when one is due and the allowance has a call.
  void Poll();
  size_t awaited() const;

 private:
  struct Awaited {
    std::string job;
    int64_t received_ms = 0;  // the job's webhook arrival (epoch ms)
    int64_t next_look_ms = 0;
    int64_t backoff_ms = 0;  // the wait after the next look that does not find it
  };
  // Records the runners found online or busy, backs off the others looked at.
  void Settle(const std::vector<github::Runner>& found, const std::vector<std::string>& looked_at,
              int64_t now);
  size_t CallsLeft(int64_t now);

  const Clock& clock_;
  const Logger& logger_;
  github::GitHub& github_;
  github::RunnerScope scope_;
  Metrics& metrics_;
  mutable std::mutex mu_;
  std::map<std::string, Awaited> awaited_;  // by runner name
  std::deque<int64_t> calls_ms_;            // the calls of the last minute
  size_t listing_pages_ = 1;
};

}  // namespace mvr::runnerset
