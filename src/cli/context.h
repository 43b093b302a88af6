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
  SecureRandom secure_random;
  SeededRandom random{SecureRandom().Next64()};
  OsRandom os_random;  // the kernel's pool: new seeds after a VM snapshot is restored
  StreamSink sink{stderr};
  Logger logger{sink, clock, LogLevel::kInfo};
  ProcessEnvironment env;
  int exit_code = 0;

  Seam seam() { return Seam{clock, sleeper, random, secure_random, logger}; }
};

}  // namespace mvr::cli
