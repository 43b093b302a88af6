// Launcher: each class's circuit breaker (issue 55, item 4; lifecycle/circuit_breaker.h). A class
// whose VMs keep failing is paused: its jobs are deferred, not dropped (or launch on a
// fallbackClass that takes them), and once the pause ends one probe launches; its VM booting
// closes the breaker. The launcher counts the failures it sees (a VM that failed while it booted, a
// job's `completed` after its VM was lost); the janitor counts the losses it finds.
// docs/runner-set-lost-jobs.md, "A class whose VMs keep failing".
#include <algorithm>

#include "base/time_format.h"
#include "runnerset/launch/launcher.h"

namespace mvr::runnerset {
namespace {

// How long a paused class's job waits before it is looked at again, at most (the pause may be
// longer than the queue lets a message hide).
constexpr Duration kMaxPausedRecheck{300'000};

}  // namespace

BreakerEvidence Launcher::GatherBreaker(const RunnerClass& cls) {
  BreakerEvidence e;
  if (deps_.health == nullptr) return e;
  ClassBreaker& breakers = deps_.health->breaker();
  const BreakerVerdict b = breakers.Of(cls);
  e.phase = b.phase;
  e.until = b.until;
  if (b.phase == BreakerPhase::kClosed) return e;
  e.probe_due = b.phase == BreakerPhase::kHalfOpen && b.probe_due;
  if (!cls.fallback_class.empty()) {
    e.fallback = config_.FindClass(cls.fallback_class);
    if (e.fallback != nullptr) e.fallback_phase = breakers.Of(*e.fallback).phase;
  }
  return e;
}

int64_t Launcher::TakeProbe(const LaunchIntent& in, const RunnerClass& cls) {
  if (deps_.health == nullptr) return 0;
  // One process wins the probe (a conditional write); a failure to write is no probe.
  Result<int64_t> taken = deps_.health->breaker().TakeProbe(cls);
  if (!taken.ok() || *taken == 0) return 0;
  deps_.seam.logger.Info("class half-open: this launch is its circuit breaker's probe",
                         {{"job_id", in.job_id}, {"class", cls.label}});
  return *taken;
}

void Launcher::SettleProbe(const RunnerClass& cls, int64_t probe_ms, const LaunchOutcome& o) {
  // Launched: its boot closed the breaker (NoteVmBooted). Its VM failing paused the class again.
  // Anything else launched no VM: the next launch may probe.
  if (deps_.health == nullptr || probe_ms == 0 || o.decision == LaunchDecision::kLaunched) return;
  if (Status s = deps_.health->breaker().ReleaseProbe(cls, probe_ms); !s.ok()) {
    deps_.seam.logger.Warn("releasing the circuit breaker's probe",
                           {{"class", cls.label}, {"error", s.ToString()}});
  }
}

LaunchOutcome Launcher::DeferForPause(const LaunchIntent& in, const LaunchEvidence& evidence) {
  const BreakerEvidence& b = evidence.breaker;
  const RunnerClass& cls = *evidence.cls;
  LaunchOutcome out;
  out.decision = LaunchDecision::kDeferred;
  out.retry_after = config_.defer_delay();
  if (b.phase == BreakerPhase::kOpen && b.until) {
    const Duration left = *b.until - deps_.seam.clock.Now();
    out.retry_after =
        std::clamp(left, config_.defer_delay(), std::max(config_.defer_delay(), kMaxPausedRecheck));
    out.detail = "class " + cls.label + " is paused by its circuit breaker until " +
                 FormatRfc3339(*b.until) + " (its VMs kept failing): the job waits";
  } else {
    out.detail = "class " + cls.label +
                 " is half-open after its circuit breaker's pause: the job waits for the one probe "
                 "launch's VM to boot";
  }
  if (b.fallback != nullptr) {
    out.detail += b.fallback_phase != BreakerPhase::kClosed
                      ? "; its fallbackClass " + b.fallback->label + " is paused too"
                      : "; its fallbackClass " + b.fallback->label +
                            " does not offer every label the job asks for";
  }
  deps_.metrics.AddDeferral("class_paused");
  deps_.seam.logger.Debug("launch deferred: the class is paused",
                          {{"job_id", in.job_id}, {"class", cls.label}});
  return out;
}

void Launcher::NoteVmBooted(const RunnerClass& cls) {
  if (deps_.health == nullptr) return;
  if (Status s = deps_.health->breaker().RecordSuccess(cls); !s.ok()) {
    deps_.seam.logger.Warn("recording a boot for the class's circuit breaker",
                           {{"class", cls.label}, {"error", s.ToString()}});
  }
}

void Launcher::NoteVmFailure(const std::string& label, const std::string& microvm_id,
                             const char* why) {
  const RunnerClass* cls = config_.FindClass(label);
  if (deps_.health == nullptr || cls == nullptr) return;
  Result<BreakerVerdict> b = deps_.health->breaker().RecordFailure(*cls, microvm_id, why);
  if (!b.ok()) {
    deps_.seam.logger.Warn("recording a failure for the class's circuit breaker",
                           {{"class", label}, {"error", b.status().ToString()}});
    return;
  }
  if (b->phase == BreakerPhase::kOpen && b->until) {
    deps_.seam.logger.Warn("class paused by its circuit breaker: its VMs keep failing",
                           {{"class", label},
                            {"microvm_id", microvm_id},
                            {"why", why},
                            {"until", FormatRfc3339(*b->until)}});
  }
}

}  // namespace mvr::runnerset
