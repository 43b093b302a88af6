// AssignedJobs: what GitHub said about jobs that a runner has taken, kept by a launcher. The
// chain walks of a launch (is the job still queued, or did the runner launched for another job
// take it?) and of a taken intent ask GitHub about the same jobs again and again: in a burst of
// 1,000 jobs, every runner takes another job than its own, and each walk cost several GETs of the
// 5,000 an hour the launches share (the rate-limits scenario spent it in five minutes). Which
// runner took a job seldom changes once it has, so those answers are kept; a queued answer is not.
// It does change when the runner never picks the job up: GitHub puts it back in the queue after
// 60 s with no webhook (issue 55, items 1 and 5; wedged-runner seed 101 lost a job to a kept
// answer). So a queued answer removes what was kept, and a launch for a job GitHub lists as
// queued again reads it anew (Launcher::StillNeeded).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "github/types.h"

namespace mvr::runnerset {

class AssignedJobs {
 public:
  explicit AssignedJobs(size_t capacity = 8192) : capacity_(capacity) {}

  // The job as last read, if a runner had taken it then.
  std::optional<github::Job> Find(const std::string& repository, int64_t job_id) const;
  // Kept when a runner has taken it (in progress, or completed with a runner); otherwise what was
  // kept of it goes. The oldest entries go once `capacity` are kept.
  void Remember(const std::string& repository, const github::Job& job);

 private:
  using Key = std::pair<std::string, int64_t>;
  const size_t capacity_;
  mutable std::mutex mu_;
  std::map<Key, github::Job> jobs_;
  std::deque<Key> order_;  // oldest first
};

}  // namespace mvr::runnerset
