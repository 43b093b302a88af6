// BootSchedule: when to ask GetMicrovm whether a VM just launched is RUNNING, shaped by how long
// boots take instead of polled from half a second on (issue 56, item 2: those polls were ten of a
// job's fourteen MicroVMs calls). The first poll goes at the expected boot, the lower quartile of
// the boots this process has seen lately (each one measured from RunMicrovm's answer to the first
// poll that saw RUNNING, so it overshoots by at most one step; when that was the first poll, 5%
// under it, so an estimate that overshot comes down); then steps of an eighth of it (at
// least 0.5 s), growing by half each time up to 5 s, each jittered by +-20% (the first by up to
// +10%: never before the expected boot). With no boot seen yet
// the expected boot is kDefaultBoot. AWS publishes no boot time: 5 s is seed 001's RunMicrovm ->
// RUNNING (docs/simulation.md, "The latencies and their sources"); seed 000 measured a p50 of
// 9.9 s, which a process learns after its first few launches.
// Thread-safety: Observe and Expected are safe from many threads; the rest are pure.
#pragma once

#include <deque>
#include <mutex>

#include "base/clock.h"
#include "base/random.h"

namespace mvr::fleet {

class BootSchedule {
 public:
  static constexpr Duration kDefaultBoot{5'000};
  static constexpr Duration kMinStep{500};
  static constexpr Duration kMaxStep{5'000};
  static constexpr size_t kKept = 32;  // the boots Expected looks at, newest

  // A boot seen: RunMicrovm's answer to the poll that saw RUNNING.
  void Observe(Duration boot);
  // The lower quartile of the boots kept, or kDefaultBoot with none.
  Duration Expected() const;

  // The wait before poll number `poll` (0: the first, after RunMicrovm answered) given the
  // expected boot, with `unit` in [0, 1) drawn for the jitter (0.5: none).
  static Duration DelayBefore(int poll, Duration expected, double unit);

 private:
  mutable std::mutex mu_;
  std::deque<Duration> boots_;
};

}  // namespace mvr::fleet
