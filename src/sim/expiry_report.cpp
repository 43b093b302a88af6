// The registration-expiry report (expiry_report.h): the hot-pool world of the latency report, run
// for hours with jobs arriving now and then, so that parked members wait long enough to meet
// GitHub's collection of idle registrations.
#include "sim/expiry_report.h"

#include <algorithm>
#include <cstdio>

#include "runnerset/config/config.h"
#include "sim/scenarios.h"

namespace mvr::sim {

ExpiryRow ExpiryCell(int expiry_seconds, int max_age_seconds, int seeds, int threads) {
  Scenario s{"expiry-report", "", [&](uint64_t seed) {
               WorldOptions o;
               o.seed = seed;
               o.knobs = ConfigKnobs{};  // the figures are for the defaults
               o.jobs = 10;
               o.hot_pool_size = 2;
               o.first_job_after = Duration(600'000);  // the pool is full by then
               o.arrivals = Duration(3 * 3'600'000LL);
               o.drain = Duration(1'200'000);
               o.registration_idle_expiry = Duration(expiry_seconds * 1000LL);
               o.offline_registration_expiry = Duration(expiry_seconds * 1000LL);
               o.hot_pool_max_age_seconds = max_age_seconds;
               return o;
             }};
  ExpiryRow row;
  row.expiry_seconds = expiry_seconds;
  row.max_age_seconds = max_age_seconds;
  std::vector<double> starts;
  double idle = 0, reserve = 0;
  RunSeeds(s, 1, static_cast<uint64_t>(seeds), threads, nullptr, [&](const SeedOutcome& o) {
    const WorldReport& r = o.report;
    ++row.seeds;
    row.jobs += r.jobs;
    if (!r.violations.empty()) {
      if (row.violations++ == 0) {
        row.first_violation = "seed " + std::to_string(o.seed) + ": " + r.violations.front();
      }
    }
    starts.insert(starts.end(), r.start_seconds.begin(), r.start_seconds.end());
    idle += r.vm_usage.without_job_seconds;
    reserve += r.reserve_usage.without_job_seconds;
  });
  const double jobs = std::max(1, row.jobs);
  row.p50 = Percentile(starts, 0.5);
  row.p95 = Percentile(starts, 0.95);
  row.idle_vm_seconds_per_job = (idle - reserve) / jobs;
  int hot = 0;
  for (double t : starts) hot += t <= 8.0 ? 1 : 0;
  row.hot_share =
      starts.empty() ? 0 : static_cast<double>(hot) / static_cast<double>(starts.size());
  return row;
}

namespace {

std::string Minutes(int seconds) {
  return seconds % 3600 == 0 ? std::to_string(seconds / 3600) + " h"
                             : std::to_string(seconds / 60) + " min";
}

}  // namespace

int PrintRegistrationExpiryReport(int seeds, int threads) {
  std::printf(
      "a hot pool of 2, 10 jobs at random times over 3 h, %d seeds a row; GitHub collects a "
      "registration listening or offline this long without a job; queued -> started (s), idle "
      "VM-s per job (running without a job, the members parked at the end left out), and the "
      "jobs a parked runner served (started within 8 s)\n",
      seeds);
  std::printf("%-8s %-13s %5s %6s %6s %9s %6s\n", "expiry", "maxAgeSeconds", "jobs", "p50", "p95",
              "idle VM-s", "hot");
  int failed = 0;
  const int default_age = runnerset::HotPoolSettings{}.max_age_seconds;
  for (int expiry : {5 * 60, 51 * 60, 24 * 3600}) {
    for (int age : {default_age, 12 * 3600}) {
      if (age == 12 * 3600 && age == default_age) continue;
      const ExpiryRow r = ExpiryCell(expiry, age, seeds, threads);
      failed += r.violations;
      std::printf("%-8s %-13s %5d %6.1f %6.1f %9.1f %5.0f%%%s\n", Minutes(expiry).c_str(),
                  (std::to_string(age) + (age == default_age ? " (default)" : "")).c_str(), r.jobs,
                  r.p50, r.p95, r.idle_vm_seconds_per_job, 100 * r.hot_share,
                  r.violations > 0 ? ("  (VIOLATED: " + r.first_violation + ")").c_str() : "");
      std::fflush(stdout);
    }
  }
  return failed > 0 ? 1 : 0;
}

std::vector<ExpiryRow> RegistrationExpiryReport(int seeds, int threads) {
  const int default_age = runnerset::HotPoolSettings{}.max_age_seconds;
  std::vector<ExpiryRow> rows;
  for (int expiry : {5 * 60, 51 * 60, 24 * 3600}) {
    rows.push_back(ExpiryCell(expiry, default_age, seeds, threads));
    if (default_age != 12 * 3600) rows.push_back(ExpiryCell(expiry, 12 * 3600, seeds, threads));
  }
  return rows;
}

}  // namespace mvr::sim
