// Context: the production composition root. main builds one and hands its seam to every
// subcommand; nothing else constructs real clocks, sleepers, random sources or sinks.
#pragma once

#include <memory>

#include "base/clock.h"
#include "base/environment.h"
#include "base/logger.h"
#include "base/random.h"
#include "base/seam.h"

namespace mvr::cli {

struct Context {
  SystemClock clock;
  RealSleeper sleeper;
  SecureRandom secure_random;  // OpenSSL's generator, set up on its first draw
  OsRandom os_random;          // the kernel's pool: new seeds after a VM snapshot is restored
  // Seeded from the kernel's pool, not OpenSSL's: a process that never needs OpenSSL (an idle
  // supervisor) then never sets it up, which keeps about 2 MB of its pages out of memory.
  SeededRandom random{OsRandom().Next64()};
  StreamSink sink{stderr};
  Logger logger{sink, clock, LogLevel::kInfo};
  ProcessEnvironment env;
  int exit_code = 0;

  Seam seam() { return Seam{clock, sleeper, random, secure_random, logger}; }
};

}  // namespace mvr::cli
