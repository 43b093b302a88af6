// What `mvr demo` (runner_set_demo.h) sees of its burst of jobs, and how it tabulates them: the
// emulator's jobs and runners as its polling saw them, mvr serve's GET /timeline, /status and
// /metrics read, and each job's milestones merged into the latency table.
// Thread-safety: plain functions and values; Watch polls from the calling thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/seam.h"
#include "base/status.h"
#include "testbed/latency_table.h"
#include "testbed/workflow.h"

namespace mvr::testbed {

// One queued job and what the demo saw of it.
struct JobTrack {
  int64_t id = 0;
  std::string label;
  TimePoint queued{};
  std::optional<TimePoint> started, completed;  // first poll that showed it
  std::string conclusion;
  std::string runner_name;  // the runner GitHub gave it
};

// What the demo's polling saw: each job, and when each runner was first online (by name).
struct Observed {
  std::map<int64_t, JobTrack> jobs;
  std::map<std::string, TimePoint> runner_online;
};

// Polls the emulator's jobs until every tracked one has completed (or the deadline), printing
// progress as the counts change.
void Watch(const Seam& seam, Workflow& workflow, Observed& seen, TimePoint began,
           TimePoint deadline);

// "demo/app#7": how mvr serve's timeline names job 7.
std::string JobKey(int64_t id);
// mvr serve's milestones of each job (JobKey → milestone → time).
std::map<std::string, Milestones> ParseTimeline(const std::string& body);

// The pool members of every class as GET /status counts them (-1 when it cannot tell), those of
// the first class that are ready (suspended, warm or hot), and the hot members whose runner is
// registered (they keep it on purpose).
struct PoolCount {
  int all = -1;
  int ready = -1;
  int hot_runners = 0;
};
PoolCount CountPoolMembers(const Result<std::string>& status);

// The counter `name` of mvr serve's /metrics text; -1 if absent.
int64_t CounterOf(const std::string& metrics, const std::string& name);

// The segments from queued to completed, one column pair per group (runner class).
LatencyTable BurstLatencyTable(std::vector<std::string> groups);

struct BurstTally {
  int completed = 0;  // concluded "success"
  int failed = 0;     // concluded otherwise, or never completed
};
// Adds each job's milestones to `table` (mvr serve's timeline, with the runner and job times
// from the demo's own polling) and counts the outcomes, printing each failed job.
BurstTally TabulateJobs(const Observed& seen, const std::map<std::string, Milestones>& timeline,
                        LatencyTable& table);

}  // namespace mvr::testbed
