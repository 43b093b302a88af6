// The scenarios of the pools: a burst at the cap, the runner set's warm and hot pools, the
// Action's pool, and everything at once (scenarios.cpp lists them among the others).
#include "sim/scenarios.h"

namespace mvr::sim {
namespace {

// The runner set's warm and hot pools: claimed once, refilled, and busy runners adopted.
std::vector<Scenario> RunnerSetPoolScenarios() {
  return {
      {"warm-pool",
       "6 jobs on a class with a warm pool of 2; API faults and duplicated webhooks, and a fifth "
       "of the launches die between delivering the runner's config and committing: members are "
       "claimed once, resumed, and refilled, and a busy runner a dead launch left is adopted",
       [](uint64_t seed) {
         WorldOptions o = Base(seed);
         o.warm_pool_size = 2;
         o.launch_dies_before_commit = 0.2;
         o.store = o.microvms = Flaky(0.5);
         o.webhooks.duplicated = 0.3;
         return o;
       }},
      {"dead-launches",
       "8 long jobs (8-12 min, past any takeover age drawn) on a class with a warm pool of 8, "
       "after it has filled; half the launches die between delivering the runner's config and "
       "committing: the takeover, the sweeper and the janitor adopt each busy runner they left, "
       "and no VM is ended while its runner runs a job (issue 53, item 3)",
       [](uint64_t seed) {
         WorldOptions o = Base(seed);
         o.jobs = 8;
         o.warm_pool_size = 8;
         o.first_job_after = Duration(300'000);
         o.launch_dies_before_commit = 0.5;
         o.guest.job_min = Duration(480'000);
         o.guest.job_max = Duration(720'000);
         return o;
       }},
      {"hot-pool",
       "6 jobs on a class with a hot pool of 2 (suspended VMs whose runners are registered and "
       "parked), after the pool has filled; store and MicroVMs faults, duplicated webhooks, and a "
       "fifth of the launches die between resuming a member and committing",
       [](uint64_t seed) {
         WorldOptions o = Base(seed);
         o.hot_pool_size = 2;
         o.launch_dies_before_commit = 0.2;
         o.first_job_after = Duration(600'000);
         o.store = o.microvms = Flaky(0.5);
         o.webhooks.duplicated = 0.3;
         return o;
       }},
      {"hot-burst",
       "40 jobs within 2 s on a class with a hot pool of 20, 20 launchers: half resume parked "
       "runners, half launch cold, and the pool refills under load",
       [](uint64_t seed) {
         WorldOptions o = Base(seed);
         o.jobs = 40;
         o.arrivals = Duration(2'000);
         o.launchers = 20;
         o.max_concurrent_vms = 100;
         o.hot_pool_size = 20;
         o.first_job_after = Duration(600'000);
         return o;
       }},
  };
}

}  // namespace

// In the order `--scenario all` runs them: burst, the runner set's pools, the Action's, chaos.
std::vector<Scenario> PoolScenarios() {
  std::vector<Scenario> all = {
      {"burst",
       "30 jobs within 30 s, 5 launchers, a cap of 10 VMs: launches defer at the cap and all run",
       [](uint64_t seed) {
         WorldOptions o = Base(seed);
         o.jobs = 30;
         o.arrivals = Duration(30'000);
         o.launchers = 5;
         o.max_concurrent_vms = 10;
         return o;
       }},
  };
  for (Scenario& s : RunnerSetPoolScenarios()) all.push_back(std::move(s));
  std::vector<Scenario> last = {
      {"action-pool",
       "12 runs of the Action on one warm pool with server-capacity 3 over 10 minutes, a fifth "
       "abandoning their lease and stopping late with the old handle, a tenth dying mid-start or "
       "mid-stop, API faults, seed 000's boot (9.9 s); then a final wave of 3 runs that must "
       "reconcile whatever was left",
       [](uint64_t seed) {
         WorldOptions o = Base(seed);
         o.jobs = 0;
         o.runner_set = false;         // the Action alone: its pool's VMs are no runner set's
         o.vm_boot = Duration(9'900);  // seed 000: RunMicrovm → RUNNING p50
         o.action_runs = 12;
         o.action_capacity = 3;
         o.action_abandon = 0.2;
         o.action_crashes = 0.1;
         o.arrivals = Duration(600'000);
         o.store = o.microvms = o.github = Flaky(0.3);
         return o;
       }},
      {"chaos",
       "10 jobs; everything at once: webhook faults, API faults, duplicated queue messages, VM "
       "boot and /run hook failures, crashes, clock skew of up to 2 s, and actors delayed at "
       "random between their steps",
       [](uint64_t seed) {
         WorldOptions o = Base(seed);
         o.jobs = 10;
         o.webhooks = WebhookFaults{0.1, 0.2, 0.1, Duration(120'000), 0.1};
         o.store = o.queue = o.microvms = o.github = Flaky(0.5);
         o.crashes_per_hour = 20;
         o.queue_duplicates = 0.1;
         o.boot_failure = 0.05;
         o.guest.run_hook_failure = 0.05;
         o.max_clock_skew = Duration(2'000);
         o.yield_delay_probability = 0.02;
         return o;
       }},
  };
  for (Scenario& s : last) all.push_back(std::move(s));
  return all;
}

}  // namespace mvr::sim
