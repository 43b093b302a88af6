// The scenario of issue 55, item 4's circuit breaker (world_breaker.cpp has its invariants): a
// class whose image fails its first VMs' boots is paused, probes once per half-open period, and
// closes once a probe boots; no job is dropped meanwhile.
#include <algorithm>

#include "sim/scenarios.h"

namespace mvr::sim {

std::vector<Scenario> BreakerScenarios() {
  return {
      {"breaker",
       "8 jobs over 2 min on a class with a circuit breaker (2 failures within 5 min pause it 5 "
       "min) whose image fails its first 4 VMs' boots and a tenth of the rest; duplicated "
       "webhooks: no VM of the class is launched while it is paused (beyond launches admitted "
       "before the pause), at most one per half-open probe, and every job runs",
       [](uint64_t seed) {
         WorldOptions o = Base(seed);
         o.jobs = 8;
         o.arrivals = Duration(120'000);
         o.breaker_failures = 2;
         o.breaker_window_seconds = 300;
         o.breaker_pause_seconds = 300;
         o.image_boot_failures = 4;
         o.boot_failure = 0.1;
         o.webhooks.duplicated = 0.1;
         o.knobs = DrawConfigKnobs(seed);
         // A launch timeout shorter than a boot fails launches until one outlasts it (not what
         // pauses a class), and a long one widens the grace of launches admitted before a pause.
         o.knobs->launch_timeout_seconds = std::clamp(o.knobs->launch_timeout_seconds, 30, 60);
         o.knobs->claim_takeover_seconds =
             std::max(o.knobs->claim_takeover_seconds, o.knobs->launch_timeout_seconds);
         o.check_breaker = true;
         return o;
       }},
  };
}

}  // namespace mvr::sim
