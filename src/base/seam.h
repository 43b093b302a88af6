// Seam: the bundle of outside-world interfaces every component takes in its constructor. Only
// main (and tests, and the simulation) build one; nothing reads time, sleeps or draws randomness
// any other way.
// Thread-safety: the referenced objects must outlive every user and be thread-safe if shared.
#pragma once

#include "base/clock.h"
#include "base/logger.h"
#include "base/random.h"
#include "base/retry.h"

namespace mvr {

struct Seam {
  const Clock& clock;
  Sleeper& sleeper;
  Random& random;         // jitter, simulation choices
  Random& secure_random;  // request ids, tokens, anything an attacker must not guess
  const Logger& logger;

  RetryDeps retry() const { return RetryDeps{clock, sleeper, random}; }
};

}  // namespace mvr
