// Seam: the bundle of outside-world interfaces every component takes in its constructor. Only
// main (and tests, and the simulation) build one; nothing reads time, sleeps or draws randomness
// any other way. A Seam is a small value (five references): take it and keep it by value (a
// `Seam seam_` member, or the `seam` member of a Deps struct), never as a `const Seam&` member,
// which would dangle when built from a temporary. Deps structs list only what is not in it.
// Thread-safety: the referenced objects must outlive every user and be thread-safe if shared.
#pragma once

#include "base/clock.h"
#include "base/logger.h"
#include "base/random.h"

namespace mvr {

struct Seam {
  const Clock& clock;
  Sleeper& sleeper;
  Random& random;         // jitter, simulation choices
  Random& secure_random;  // request ids, tokens, anything an attacker must not guess
  const Logger& logger;

  // The same outside world with another logger (one that adds a component's fields).
  Seam WithLogger(const Logger& other) const {
    return Seam{clock, sleeper, random, secure_random, other};
  }
};

}  // namespace mvr
