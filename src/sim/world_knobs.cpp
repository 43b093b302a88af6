// The runner set's configuration knobs a seed draws (world_options.h): each within the range the
// configuration's validation accepts (runnerset/config/config.cpp), from its lowest accepted value
// (but the 0 that turns a part off), up to what one run can judge. A seed draws the same knobs
// every time.
#include <algorithm>
#include <stdexcept>

#include "base/random.h"
#include "sim/world_options.h"

namespace mvr::sim {

const std::vector<KnobRange>& KnobRanges() {
  // key, field, drawn low..high, accepted low..high, why narrowed
  static const std::vector<KnobRange> ranges = {
      {"janitor.intervalSeconds", &ConfigKnobs::janitor_interval_seconds, 1, 180, 0, 86400,
       "0 turns the janitor off, and the invariants rely on it; past 3 min the bound outlasts the "
       "run"},
      {"janitor.strikes", &ConfigKnobs::janitor_strikes, 1, 4, 1, 100,
       "more strikes only lengthen the bound past the run"},
      {"janitor.graceSeconds", &ConfigKnobs::janitor_grace_seconds, 0, 300, 0, 86400,
       "longer outlasts the run"},
      {"janitor.stuckLaunchSeconds", &ConfigKnobs::stuck_launch_seconds, 0, 300, 0, 86400,
       "a longer wait only delays recovering lost webhooks past the run"},
      {"queue.visibilityTimeoutSeconds", &ConfigKnobs::visibility_timeout_seconds, 1, 600, 1, 43200,
       "past 10 min a crashed launch's intent comes back after the run"},
      {"launcher.launchTimeoutSeconds", &ConfigKnobs::launch_timeout_seconds, 5, 300, 5, 3600,
       "past 5 min a hung launch is given up after the run"},
      {"launcher.claimTakeoverSeconds", &ConfigKnobs::claim_takeover_seconds, 1, 600, 1, 86400,
       "past 10 min a crashed launch's claim is taken over after the run; a draw below the "
       "launch timeout is raised to it, the least the validation accepts with that timeout"},
      {"launcher.deferSeconds", &ConfigKnobs::defer_seconds, 1, 60, 1, 900,
       "a longer defer only delays launches at the cap past the run"},
      {"warmPool.intervalSeconds", &ConfigKnobs::warm_pool_interval_seconds, 10, 120, 0, 86400,
       "0 turns the sweeper off; below 10 s a pool's seed takes too long"},
  };
  return ranges;
}

ConfigKnobs DrawConfigKnobs(uint64_t seed) {
  SeededRandom random(seed * 7919 + 8);  // a stream of its own: the other draws stay as they were
  ConfigKnobs knobs;
  for (const KnobRange& r : KnobRanges()) {
    if (r.low < r.valid_low || r.high > r.valid_high || r.low > r.high) {
      throw std::logic_error(std::string("the simulation draws ") + r.key +
                             " outside the range its validation accepts");
    }
    knobs.*r.field =
        r.low + static_cast<int>(random.Uniform(static_cast<uint64_t>(r.high - r.low + 1)));
  }
  knobs.claim_takeover_seconds =
      std::max(knobs.claim_takeover_seconds, knobs.launch_timeout_seconds);
  return knobs;
}

void ClampLaunchTimeout(ConfigKnobs& knobs, int low, int high) {
  knobs.launch_timeout_seconds = std::clamp(knobs.launch_timeout_seconds, low, high);
  knobs.claim_takeover_seconds =
      std::max(knobs.claim_takeover_seconds, knobs.launch_timeout_seconds);
}

std::string DescribeKnobs(const ConfigKnobs& knobs) {
  std::string out;
  for (const KnobRange& r : KnobRanges()) {
    if (!out.empty()) out += ' ';
    out += std::string(r.key) + '=' + std::to_string(knobs.*r.field);
  }
  return out;
}

}  // namespace mvr::sim
