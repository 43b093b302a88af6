// The simulation's scenarios: named worlds (world.h) with the faults each turns on,
// and the runner of a seed range that `mvr simulate` and the tests share.
// Thread-safety: RunSeeds runs seeds on worker threads and calls `report` from the caller's
// thread only, in seed order.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/world_options.h"

namespace mvr::sim {

struct Scenario {
  std::string name;
  std::string summary;  // one line: what it runs and which faults it turns on
  std::function<WorldOptions(uint64_t seed)> options;
  // Run by `--scenario all` (false for one too slow for every CI run: it is run by name).
  bool in_all = true;
};

const std::vector<Scenario>& Scenarios();
FaultRates Flaky(double scale);    // scenarios.cpp: the scenarios' fault mix at `scale`
WorldOptions Base(uint64_t seed);  // scenarios.cpp: a scenario's options before its own
// Issue 55, item 1 (expiry_scenarios.cpp): `registration-expiry`.
std::vector<Scenario> ExpiryScenarios();
// Issue 55, items 4 and 5 (lost_scenarios.cpp): `vm-lost`, `wedged-runner`, and their bugs.
std::vector<Scenario> LostScenarios();
struct PlantedBug;
std::vector<PlantedBug> WithLostBugs(std::vector<PlantedBug> bugs);
// Issue 56, item 4 (fair_share_scenarios.cpp): `fair-share`, and its world.
std::vector<Scenario> FairShareScenarios();
WorldOptions FairShareWorld(uint64_t seed);
std::vector<PlantedBug> WithFairShareBugs(std::vector<PlantedBug> bugs);
// Issue 54, item 5 (scaleset_scenarios.cpp): `scaleset` and `scaleset-chaos`.
std::vector<Scenario> ScaleSetScenarios();
// nullptr when there is no scenario called `name`.
const Scenario* FindScenario(const std::string& name);

// Bugs the simulation must find (the test that proves it does, `mvr simulate --plant`).
struct PlantedBug {
  std::string name;
  std::string summary;
  std::function<void(WorldOptions&)> plant;
};
const std::vector<PlantedBug>& PlantedBugs();
const PlantedBug* FindPlantedBug(const std::string& name);

// `mvr simulate --report latency`: cold and warm-pool classes at bursts of 1, 15 and 100 jobs,
// with the platform's limits in force (RunMicrovm 5/s in the MicroVMs model, GitHub's secondary
// limit at 166 mutating calls a minute).
struct LatencyRow {
  std::string kind;  // "cold", "warm-pool", "cold-seq" (batches launched one at a time)
  int burst = 0;
  int seeds = 0;
  int jobs = 0;
  int violations = 0;                // seeds that broke an invariant (the figures still count)
  std::string first_violation;       // "seed N: ..." of the first seed that did
  double p50 = 0, p95 = 0, p99 = 0;  // queued → job started, s
  // The VMs' billed time (with a job, without one, suspended) per job: every VM's but the
  // reserve's (pool members parked at the end, whose pre-boot buys the next jobs' starts), which
  // is per seed. The latency report prints the time without a job ("idle VM-s"); the cost report
  // prices all of it, beside the jobs' own run time and what GitHub's hosted runners would bill.
  runnerset::VmUsage usage_per_job;
  runnerset::VmUsage reserve_per_seed;
  double job_seconds_per_job = 0;
  double hosted_minutes_per_job = 0;
  double github_calls_per_job = 0;
  double microvms_calls_per_job = 0;
  // Seed 001's segments, p50 (cold rows; warm rows: "VM running" is "resumed").
  double to_vm_running = 0, to_first_log = 0, to_connected = 0, to_job = 0;
};
std::vector<LatencyRow> LatencyReport(int threads);
// One row: `kind` at a burst of `burst` jobs over seeds 1..seeds.
LatencyRow LatencyCell(const std::string& kind, int burst, uint64_t seeds, int threads);
double Percentile(std::vector<double> values, double p);  // p in [0, 1]; 0 for none

struct SeedOutcome {
  std::string scenario;
  uint64_t seed = 0;
  WorldReport report;
};

// Runs `scenario` for seeds first..last (inclusive) on `threads` threads, with `adjust` applied
// to each seed's options (a planted bug, say); `report` sees each outcome in seed order.
void RunSeeds(const Scenario& scenario, uint64_t first, uint64_t last, int threads,
              const std::function<void(WorldOptions&)>& adjust,
              const std::function<void(const SeedOutcome&)>& report);

}  // namespace mvr::sim
