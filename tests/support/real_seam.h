// RealSeam: the real outside world as a Seam (the system clock, real sleeps, secure randomness, a
// logger to stderr), for end-to-end fixtures that drive real processes. Unit tests use ManualSeam.
// Thread-safety: every part is thread-safe; the Seam refers to members, so don't copy or move this.
#pragma once

#include <cstdio>

#include "base/clock.h"
#include "base/logger.h"
#include "base/random.h"
#include "base/seam.h"

namespace mvr::testing {

struct RealSeam {
  RealSeam() = default;
  RealSeam(const RealSeam&) = delete;
  RealSeam& operator=(const RealSeam&) = delete;

  SystemClock clock;
  RealSleeper sleeper;
  SecureRandom random;
  StreamSink sink{stderr};
  Logger logger{sink, clock};
  Seam seam{clock, sleeper, random, random, logger};
};

}  // namespace mvr::testing
