// `mvr simulate --report pool-target` (issue 34, item 2; docs/simulation.md): a recorded week of
// arrivals with a daily pattern and bursts, run against a hot pool of fixed sizes and against
// one sized to a start-time target (runnerset/pools/pool_target.h), each reporting p95 queued →
// started and the VM-seconds without a job per job.
// Thread-safety: plain functions; PoolTargetReport runs seeds on `threads` threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/clock.h"
#include "sim/world_options.h"

namespace mvr::sim {

// The week's arrivals, as offsets from `start` (which the simulation's clock begins at). Hours
// of the week are UTC (runnerset::HourOfWeek):
//  - Monday to Friday: 40 jobs an hour 08:00-18:00, 8 an hour 18:00-22:00, 1 an hour at night;
//  - Saturday and Sunday: 2 jobs an hour;
//  - bursts within a minute: 25 jobs at 09:00 and 15 at 14:00 on weekdays (a matrix pushed),
//    10 at 02:00 every day (the nightly workflows).
// Poisson within each hour; `seed` draws the times.
std::vector<Duration> WeekArrivals(TimePoint start, uint64_t seed);

struct PoolTargetRow {
  std::string pool;  // "fixed 0", "fixed 5", "fixed 20", "target 10 s, max 30"
  int seeds = 0;
  int jobs = 0;
  int violations = 0;
  std::string first_violation;
  double p50 = 0, p95 = 0;  // queued → job started, s
  // Per job: every VM's seconds running without a job (boots, parks, members retired unused,
  // the members left at the end included), and suspended.
  double idle_per_job = 0, suspended_per_job = 0;
  bool meets = false;  // p95 <= the target
};

struct PoolTargetOptions {
  int target_seconds = 10;
  int max = 30;
  size_t seeds = 2;  // weeks, each drawn anew
  int days = 7;      // the first days of each week only (a shorter run)
  int threads = 1;
};

// One run: the seed's week (its first `days`) on a hot pool of `fixed` members, or (fixed < 0)
// on one sized to the target whose store holds the week before.
WorldOptions PoolTargetWorld(const PoolTargetOptions& options, int fixed, uint64_t seed);

// Hot pools of 0, 5 and 20 members and one sized to the target, each over the seeds' weeks; the
// target pool's store holds the week before (another draw).
std::vector<PoolTargetRow> PoolTargetReport(const PoolTargetOptions& options);

}  // namespace mvr::sim
