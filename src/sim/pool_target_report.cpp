#include "sim/pool_target_report.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

#include "base/random.h"
#include "runnerset/pools/pool_target.h"
#include "sim/scenarios.h"
#include "sim/scheduler.h"
#include "sim/world.h"

namespace mvr::sim {

namespace {

constexpr int64_t kHourMs = 3'600'000;
constexpr int64_t kWeekMs = 7 * 24 * kHourMs;

// Jobs an hour, steady, at an hour of the week (0 = Monday 00:00 UTC).
double SteadyRate(int hour_of_week) {
  const int day = hour_of_week / 24, hour = hour_of_week % 24;
  if (day >= 5) return 2;
  if (hour >= 8 && hour < 18) return 40;
  if (hour >= 18 && hour < 22) return 8;
  return 1;
}

// The jobs of a burst that begins at this hour (0: none).
int BurstAt(int hour_of_week) {
  const int day = hour_of_week / 24, hour = hour_of_week % 24;
  if (hour == 2) return 10;
  if (day < 5 && hour == 9) return 25;
  if (day < 5 && hour == 14) return 15;
  return 0;
}

}  // namespace

std::vector<Duration> WeekArrivals(TimePoint start, uint64_t seed) {
  SeededRandom random(seed * 0x9E3779B97F4A7C15ULL + 7);
  std::vector<Duration> out;
  // Hour by hour from the start, whatever weekday it is.
  for (int64_t h = 0; h < kWeekMs / kHourMs; ++h) {
    const TimePoint hour_start = start + Duration(h * kHourMs);
    const int how = runnerset::HourOfWeek(hour_start);
    const double rate = SteadyRate(how);
    // Exponential gaps at `rate` an hour.
    double t = 0;
    while (true) {
      t += -std::log(1.0 - random.UniformDouble()) / rate * static_cast<double>(kHourMs);
      if (t >= static_cast<double>(kHourMs)) break;
      out.push_back(Duration(h * kHourMs + static_cast<int64_t>(t)));
    }
    for (int i = 0; i < BurstAt(how); ++i) {
      out.push_back(Duration(h * kHourMs + static_cast<int64_t>(random.Uniform(60'000))));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

WorldOptions PoolTargetWorld(const PoolTargetOptions& opt, int fixed, uint64_t seed) {
  const int64_t span_ms = opt.days * 24 * kHourMs;
  WorldOptions o;
  o.seed = seed;
  o.knobs = ConfigKnobs{};
  const TimePoint start = Scheduler::Options{}.start;
  for (Duration d : WeekArrivals(start, seed)) {
    if (d.count() < span_ms) o.arrival_at.push_back(d);
  }
  o.jobs = static_cast<int>(o.arrival_at.size());
  o.arrivals = Duration(span_ms);
  o.drain = Duration(1'800'000);
  o.launchers = 50;
  o.max_concurrent_vms = 400;
  o.github_mutations_per_minute = 166;
  if (fixed >= 0) {
    o.hot_pool_size = fixed;
    return o;
  }
  o.hot_pool_target_seconds = opt.target_seconds;
  o.hot_pool_target_max = opt.max;
  // The week before, as the set's store recorded it: another draw.
  for (Duration d : WeekArrivals(start - Duration(kWeekMs), seed + 1000)) {
    o.history_at.push_back(d - Duration(kWeekMs));
  }
  return o;
}

std::vector<PoolTargetRow> PoolTargetReport(const PoolTargetOptions& opt) {
  struct Cell {
    std::string name;
    int fixed;
    bool target;
  };
  const std::vector<Cell> cells = {
      {"fixed 0", 0, false},
      {"fixed 5", 5, false},
      {"fixed 20", 20, false},
      {"target " + std::to_string(opt.target_seconds) + " s, max " + std::to_string(opt.max), 0,
       true}};
  auto options = [&](const Cell& cell, uint64_t seed) {
    return PoolTargetWorld(opt, cell.target ? -1 : cell.fixed, seed);
  };
  // Every (cell, seed) run is independent: all of them share the threads.
  const size_t runs = cells.size() * opt.seeds;
  std::vector<WorldReport> reports(runs);
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < std::max(1, opt.threads); ++t) {
    workers.emplace_back([&] {
      for (size_t i = next.fetch_add(1); i < runs; i = next.fetch_add(1)) {
        reports[i] = RunWorld(options(cells[i / opt.seeds], 1 + i % opt.seeds));
      }
    });
  }
  for (std::thread& w : workers) w.join();
  std::vector<PoolTargetRow> rows;
  for (size_t c = 0; c < cells.size(); ++c) {
    PoolTargetRow row;
    row.pool = cells[c].name;
    std::vector<double> starts;
    double idle = 0, suspended = 0;
    for (size_t k = 0; k < opt.seeds; ++k) {
      const WorldReport& r = reports[c * opt.seeds + k];
      ++row.seeds;
      row.jobs += r.jobs;
      if (!r.violations.empty() && row.violations++ == 0) {
        row.first_violation = "seed " + std::to_string(k + 1) + ": " + r.violations.front();
      }
      starts.insert(starts.end(), r.start_seconds.begin(), r.start_seconds.end());
      idle += r.vm_usage.without_job_seconds;
      suspended += r.vm_usage.suspended_seconds;
    }
    const double jobs = std::max(1, row.jobs);
    row.p50 = Percentile(starts, 0.5);
    row.p95 = Percentile(starts, 0.95);
    row.idle_per_job = idle / jobs;
    row.suspended_per_job = suspended / jobs;
    row.meets = row.p95 <= opt.target_seconds;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace mvr::sim
