// Pacer: spaces calls (RunMicrovm) at a fixed rate through the seam's clock and sleeper.
// (The concurrency cap itself is counted in the store: cap_ledger.h.)
// Thread-safety: safe to share; no lock is held while sleeping.
#pragma once

#include <mutex>

#include "base/clock.h"
#include "base/retry.h"

namespace mvr::runnerset {

class Pacer {
 public:
  Pacer(const Clock& clock, Sleeper& sleeper, double per_second)
      : clock_(clock), sleeper_(sleeper), interval_(static_cast<int64_t>(1000.0 / per_second)) {}
  // Waits for this caller's slot: successive callers are at least 1/per_second apart.
  void Wait();

 private:
  const Clock& clock_;
  Sleeper& sleeper_;
  Duration interval_;
  std::mutex mu_;
  TimePoint next_{};
};

}  // namespace mvr::runnerset
