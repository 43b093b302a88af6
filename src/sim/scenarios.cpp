#include "sim/scenarios.h"

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

namespace mvr::sim {
namespace {

FaultRates Flaky(double scale) { return FaultRates{0.03 * scale, 0.02 * scale, 0.02 * scale}; }

WorldOptions Base(uint64_t seed) {
  WorldOptions o;
  o.seed = seed;
  return o;
}

}  // namespace

const std::vector<Scenario>& Scenarios() {
  static const std::vector<Scenario> scenarios = {
      {"quiet", "6 jobs, 3 launchers, no faults: the baseline every other scenario adds to",
       [](uint64_t seed) { return Base(seed); }},
      {"webhooks",
       "8 jobs; webhooks lost (20%), duplicated (30%) and late by up to 5 min (20%): the janitor "
       "recovers lost launches, the claim absorbs duplicates",
       [](uint64_t seed) {
         WorldOptions o = Base(seed);
         o.jobs = 8;
         o.webhooks = WebhookFaults{0.2, 0.3, 0.2, Duration(300'000)};
         return o;
       }},
      {"api-faults",
       "8 jobs; every call to DynamoDB, SQS, the MicroVMs API and GitHub may be throttled, fail, "
       "or take effect and lose its response",
       [](uint64_t seed) {
         WorldOptions o = Base(seed);
         o.jobs = 8;
         o.store = o.queue = o.microvms = o.github = Flaky(1);
         return o;
       }},
      {"crashes",
       "8 jobs; launchers, the janitor and the sweeper crash between any two calls (about 30 an "
       "hour) and are replaced; duplicated webhooks",
       [](uint64_t seed) {
         WorldOptions o = Base(seed);
         o.jobs = 8;
         o.crashes_per_hour = 30;
         o.webhooks.duplicated = 0.3;
         return o;
       }},
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
      {"warm-pool",
       "6 jobs on a class with a warm pool of 2; API faults and duplicated webhooks: members are "
       "claimed once, resumed, and refilled",
       [](uint64_t seed) {
         WorldOptions o = Base(seed);
         o.warm_pool_size = 2;
         o.store = o.microvms = Flaky(0.5);
         o.webhooks.duplicated = 0.3;
         return o;
       }},
      {"chaos",
       "10 jobs; everything at once: webhook faults, API faults, crashes, clock skew of up to "
       "2 s, and actors delayed at random between their steps",
       [](uint64_t seed) {
         WorldOptions o = Base(seed);
         o.jobs = 10;
         o.webhooks = WebhookFaults{0.1, 0.2, 0.1, Duration(120'000)};
         o.store = o.queue = o.microvms = o.github = Flaky(0.5);
         o.crashes_per_hour = 20;
         o.max_clock_skew = Duration(2'000);
         o.yield_delay_probability = 0.02;
         return o;
       }},
  };
  return scenarios;
}

const Scenario* FindScenario(const std::string& name) {
  for (const Scenario& s : Scenarios()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const std::vector<PlantedBug>& PlantedBugs() {
  static const std::vector<PlantedBug> bugs = {
      {"unconditional-claim",
       "the job claim's write ignores its condition, so two launchers can both win one job",
       [](WorldOptions& o) { o.plant_unconditional_claims = true; }},
  };
  return bugs;
}

const PlantedBug* FindPlantedBug(const std::string& name) {
  for (const PlantedBug& b : PlantedBugs()) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

void RunSeeds(const Scenario& scenario, uint64_t first, uint64_t last, int threads,
              const std::function<void(WorldOptions&)>& adjust,
              const std::function<void(const SeedOutcome&)>& report) {
  if (last < first) return;
  std::mutex mu;
  std::condition_variable cv;
  std::map<uint64_t, SeedOutcome> done;  // finished, not yet reported
  std::atomic<uint64_t> next{first};
  auto work = [&] {
    while (true) {
      const uint64_t seed = next.fetch_add(1);
      if (seed > last || seed < first) return;
      WorldOptions options = scenario.options(seed);
      if (adjust) adjust(options);
      SeedOutcome outcome{scenario.name, seed, RunRunnerSet(options)};
      std::lock_guard<std::mutex> lock(mu);
      done.emplace(seed, std::move(outcome));
      cv.notify_all();
    }
  };
  std::vector<std::thread> workers;
  for (int i = 0; i < std::max(1, threads); ++i) workers.emplace_back(work);
  for (uint64_t seed = first; seed <= last; ++seed) {
    SeedOutcome outcome;
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return done.count(seed) > 0; });
      outcome = std::move(done.at(seed));
      done.erase(seed);
    }
    report(outcome);
    if (seed == UINT64_MAX) break;
  }
  for (std::thread& t : workers) t.join();
}

}  // namespace mvr::sim
