// Pools sized to a start-time target (docs/runner-set-pools.md, "Pools sized to a target").
//
// A class may give a target instead of a size:
//   "hotPoolSize": {"target": {"p95QueuedToStartedSeconds": 10}, "max": 20}
// The launcher counts each job it claims for such a class in the store (ArrivalHistory), per
// hour of the week (UTC) and per minute; the sweeper then sizes the pool from what it has seen:
//  - the jobs an hour: the mean of this hour and the next over the weeks kept, or the hour just
//    gone this week, whichever is more (so a quiet history still follows a busy day);
//  - the pool is a base stock refilled within a lead time (a sweep and a member's boot): it is the
//    fewest members for which the jobs arriving within one lead time find one with probability
//    95% (Poisson arrivals), and never fewer than the most jobs seen queued within one minute of
//    those hours (a burst);
//  - never more than `max`; and none at all when the cold path alone already meets the target.
// Thread-safety: ArrivalHistory is safe to share (the store is); the rest are plain functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/seam.h"
#include "store/store.h"

namespace mvr::runnerset {

struct PoolTarget {
  int p95_queued_to_started_seconds = 0;  // 0: no target (a fixed or scheduled size)
  int max = 20;                           // the most members the target may ask for
  bool set() const { return p95_queued_to_started_seconds > 0; }
};

// Weeks start on Monday 00:00 UTC. The week's index since the epoch, and the hour within it
// (0 = Monday 00:00-01:00 UTC, 167 = Sunday 23:00-24:00).
int64_t WeekOf(TimePoint t);
int HourOfWeek(TimePoint t);

// One class's jobs in one hour of one week.
struct HourArrivals {
  int64_t week = 0;
  int hour_of_week = 0;
  int64_t jobs = 0;
  int64_t peak_minute = 0;  // the most jobs queued within one minute of the hour
};

// The size a sweep last found for a pool sized to a target (the status shows it).
struct SizingRow {
  int size = 0;
  std::string why;
  int64_t at_ms = 0;
};

// The store's rows (runner_table.h's store):
//   arrivals#<class> / h<hour>#w<week>   jobs (counted), peakMinute; kept kWeeksKept weeks
//   arrivals#<class> / m<epoch minute>   jobs (counted); kept two hours
//   arrivals#<class> / sized#<pool>      the size the sweeper last found ("hot" or "warm")
class ArrivalHistory {
 public:
  static constexpr int kWeeksKept = 4;

  ArrivalHistory(store::Store& store, Seam seam) : store_(store), seam_(seam) {}

  // Counts one job of `label` queued at `at`. Three writes: the minute's count, the hour's, and
  // the hour's peak when the minute's count beat it.
  Status Record(const std::string& label, TimePoint at);
  // Every row kept of `label` for the hour `hour_of_week`, this week's included.
  Result<std::vector<HourArrivals>> Hour(const std::string& label, int hour_of_week);
  // The size the sweeper found for the class's `pool` ("hot" or "warm"), and why.
  Status SaveSizing(const std::string& label, const std::string& pool, const SizingRow& row);
  Result<std::optional<SizingRow>> LoadSizing(const std::string& label, const std::string& pool);

 private:
  store::Store& store_;
  Seam seam_;
};

// What a target-sized pool is sized from.
struct SizingInputs {
  PoolTarget target;
  int64_t this_week = 0;
  // The rows of the hour now, the next hour and the hour just gone (ArrivalHistory::Hour).
  std::vector<HourArrivals> now, next, previous;
  // How long a taken member takes to be replaced: a sweep's interval and a member's boot.
  Duration lead_time{90'000};
  // The cold path's p95 queued → started over the recent jobs of the class (nullopt: not known).
  std::optional<double> cold_p95_seconds;
};

struct PoolSizing {
  int size = 0;
  double jobs_per_hour = 0;  // the rate it sized for
  int64_t peak_minute = 0;   // the burst it sized for
  std::string why;           // one line for the log and the status page
};

PoolSizing SizeForTarget(const SizingInputs& in);

// The fewest members n for which Poisson(mean) arrivals within a lead time leave one for a job
// with probability `p`: P(X <= n - 1) >= p; 0 when mean is 0.
int PoissonStock(double mean, double p);

}  // namespace mvr::runnerset
