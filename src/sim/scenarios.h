// The simulation's scenarios: named worlds (runner_set_world.h) with the faults each turns on,
// and the runner of a seed range that `mvr simulate` and the tests share.
// Thread-safety: RunSeeds runs seeds on worker threads and calls `report` from the caller's
// thread only, in seed order.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/runner_set_world.h"

namespace mvr::sim {

struct Scenario {
  std::string name;
  std::string summary;  // one line: what it runs and which faults it turns on
  std::function<WorldOptions(uint64_t seed)> options;
};

const std::vector<Scenario>& Scenarios();
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
