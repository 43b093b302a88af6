// ClassBreaker: each runner class's circuit breaker (issue 55, item 4; lifecycle/circuit_breaker.h
// decides). The janitor and the launcher record a failure of a class's VM (lost mid-job, or
// failing at the platform before it ran: RunMicrovm's InternalServerException, a VM that ended
// while booting), once per VM; the launcher defers the jobs of a paused class; /status and
// /metrics show it. The record is kept in the set's store (partition `classes#breaker`, one item
// a class, written on a condition on the version read), so every process of the set (the Lambda
// functions, `mvr status`) shares it and a restart keeps a pause; each process reads it again at
// most every kSyncEvery. Without a store (unit tests) it lives in memory.
// Thread-safety: every method is safe from many threads (one mutex, never held across the store).
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "runnerset/config/config.h"
#include "runnerset/lifecycle/circuit_breaker.h"
#include "store/store.h"

namespace mvr::runnerset {

// classes[].circuitBreaker as a policy (off when its `failures` is 0).
BreakerPolicy BreakerPolicyOf(const RunnerClass& cls);

class ClassBreaker {
 public:
  ClassBreaker(const Clock& clock, store::Store* store) : clock_(clock), store_(store) {}

  // A VM of `cls` failed (`why`: "lost_mid_job", "launch_failed"): counted once per VM (the
  // janitor and the launcher may both see a loss). Returns the breaker after it; nothing is
  // recorded while the class's breaker is off.
  Result<BreakerVerdict> RecordFailure(const RunnerClass& cls, const std::string& microvm_id,
                                       const std::string& why);
  BreakerVerdict Of(const RunnerClass& cls) const;
  // The class's record as this process last read or wrote it (the simulation's invariants).
  BreakerRecord RecordOf(const RunnerClass& cls) const;
  // Half-open: whether this launch is the class's one probe: when it was taken (epoch ms), 0 when
  // not (the launch waits for the probe, or the pause). The record says so for every process,
  // written on a condition, so only one of them wins.
  Result<int64_t> TakeProbe(const RunnerClass& cls);
  // The probe taken at `probe_ms` launched no VM after all (the job went meanwhile, the cap was
  // full ...): another launch may probe at once. Nothing once the breaker moved on.
  Status ReleaseProbe(const RunnerClass& cls, int64_t probe_ms);
  // A launch of `cls` committed (its VM booted, its runner delivered): closes a half-open breaker.
  // Reads the store only when this process's copy says half-open.
  Status RecordSuccess(const RunnerClass& cls);
  // mvr_runnerset_class_paused{class} (1 while paused) and
  // mvr_runnerset_class_paused_until_seconds{class} (epoch seconds, 0 when not paused), for the
  // classes whose breaker is on.
  std::string Prometheus(const ServeConfig& config) const;

  // The most VM ids remembered a class, to count each failure once.
  static constexpr size_t kSeenKept = 32;

 private:
  struct Stored {
    BreakerRecord record;
    std::vector<std::string> seen;  // VMs counted, newest last
    int64_t version = 0;            // 0: no item
  };
  static Stored FromItem(const store::Item& item);
  Result<Stored> Read(const std::string& label) const;
  // Reads the class's record, asks `change` for the next one (nullopt: nothing to write) and
  // writes it on a condition on the version read, again on a lost race; returns the record as it
  // stands afterwards and whether `change` wrote it.
  struct Updated {
    Stored stored;
    bool written = false;
  };
  Result<Updated> Update(const RunnerClass& cls, const std::string& why,
                         const std::function<std::optional<Stored>(const Stored&)>& change);
  // Reads every class's item when the copy is older than kSyncEvery (nothing without a store).
  void Sync() const;

  const Clock& clock_;
  store::Store* const store_;
  mutable std::mutex mu_;
  mutable std::map<std::string, Stored> copy_;  // label → as last read or written
  mutable std::optional<TimePoint> synced_;
};

}  // namespace mvr::runnerset
