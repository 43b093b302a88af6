// BootSchedule: when to ask GetMicrovm whether a VM just launched is RUNNING, shaped by how long
// boots take instead of polled from half a second on (issue 56, item 2: those polls were ten of a
// job's fourteen MicroVMs calls). The first poll goes at the expected boot; then steps of an
// eighth of it (at least 0.5 s), growing by half each time up to 5 s, each jittered by +-20% (the
// first by up to +10%: never before the expected boot). The expected boot moves halfway to each
// boot seen: measured from RunMicrovm's answer to the poll that saw RUNNING (an overshoot of at
// most one step), or, when the first poll saw it, three quarters of that (the boot was shorter by
// an unknown amount), so an estimate that overshot a faster platform (the emulator's local VMs)
// comes down by an eighth a launch and one that undershot goes up. (Half would come down faster
// and poll a steady boot early: 2.4 GetMicrovm calls a job in the 100-job scale world, 1.5 here.)
// With no boot seen it is kDefaultBoot. AWS publishes no boot time: 5 s is seed 001's RunMicrovm ->
// RUNNING (docs/simulation.md, "The latencies and their sources"); seed 000 measured a p50 of 9.9
// s, which a process follows after its first few launches. Thread-safety: Observe and Expected are
// safe from many threads; the rest are pure.
#pragma once

#include <mutex>

#include "base/clock.h"
#include "base/random.h"

namespace mvr::fleet {

class BootSchedule {
 public:
  static constexpr Duration kDefaultBoot{5'000};
  static constexpr Duration kMinStep{500};
  static constexpr Duration kMaxStep{5'000};
  // A boot seen (for a first poll that saw RUNNING, 3/4 of the wait: see above).
  void Observe(Duration boot);
  // Where the first poll goes: kDefaultBoot until a boot is seen.
  Duration Expected() const;

  // The wait before poll number `poll` (0: the first, after RunMicrovm answered) given the
  // expected boot, with `unit` in [0, 1) drawn for the jitter (0.5: none).
  static Duration DelayBefore(int poll, Duration expected, double unit);

 private:
  mutable std::mutex mu_;
  bool seen_any_ = false;
  Duration expected_{0};
};

}  // namespace mvr::fleet
