// ManualSeam: the Seam of a unit test: virtual time that moves only when the test (or a sleep)
// advances it, seeded randomness for both random sources, and a logger whose lines stay in
// `sink` (for the searches that no secret was logged). Nothing sleeps or draws for real.
// Thread-safety: as the parts; the Seam refers to members, so don't copy or move this.
#pragma once

#include <cstdint>

#include "base/clock.h"
#include "base/logger.h"
#include "base/random.h"
#include "base/seam.h"

namespace mvr::testing {

struct ManualSeam {
  explicit ManualSeam(uint64_t seed = 42, LogLevel level = LogLevel::kInfo)
      : random(seed), logger(sink, clock, level) {}
  ManualSeam(const ManualSeam&) = delete;
  ManualSeam& operator=(const ManualSeam&) = delete;

  ManualClock clock;
  ManualSleeper sleeper{clock};
  SeededRandom random;
  MemorySink sink;
  Logger logger;
  Seam seam{clock, sleeper, random, random, logger};
};

}  // namespace mvr::testing
