// BootSchedule: when to ask GetMicrovm whether a VM just launched is RUNNING, shaped by how long
// boots take instead of polled from half a second on (issue 56, item 2: those polls were ten of a
// job's fourteen MicroVMs calls). The first poll goes at the expected boot; then steps of an
// eighth of it (at least 0.5 s), growing by half each time up to 5 s, each jittered by +-20% (the
// first by up to +10%: never before the expected boot). The expected boot moves halfway to each
// boot seen: measured from RunMicrovm's answer to the poll that saw RUNNING (an overshoot of at
// most one step), or, when the first poll saw it, three quarters of that (the boot was shorter by
// an unknown amount), so an estimate that overshot a faster platform (the emulator's local VMs)
// comes down by an eighth a launch and one that undershot goes up. (Half would come down faster
// and poll a steady boot early: 2.4 GetMicrovm calls a job in the 100-job scale world, 1.8 here.)
// With no boot seen it is kDefaultBoot, 1 s. AWS publishes no boot time (seed 001's RunMicrovm ->
// RUNNING is 5 s, seed 000's p50 9.9 s), and the emulator's local VMs boot in under a second: a
// first poll at 5 s made each `mvr serve` process's first launches wait it out (the end-to-end
// tests took twice as long). On AWS a process's first launch polls its way up to the boot (about
// five calls) and the next ones follow it.
// Thread-safety: Observe and Expected are safe from many threads; the rest are pure.
#pragma once

#include <mutex>

#include "base/clock.h"
#include "base/random.h"

namespace mvr::fleet {

class BootSchedule {
 public:
  static constexpr Duration kDefaultBoot{1'000};
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
