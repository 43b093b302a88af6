// Launcher: each class's circuit breaker (issue 55, item 4; lifecycle/circuit_breaker.h). A class
// whose VMs keep failing is paused: its jobs are deferred, not dropped, and launch once the pause
// ends. The launcher counts the failures it sees (a VM that failed while it booted, a job's
// `completed` after its VM was lost); the janitor counts the losses it finds.
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

std::optional<LaunchOutcome> Launcher::DeferIfPaused(const LaunchIntent& in,
                                                     const RunnerClass& cls) {
  if (deps_.health == nullptr) return std::nullopt;
  const BreakerVerdict b = deps_.health->breaker().Of(cls);
  if (b.phase != BreakerPhase::kOpen || !b.until) return std::nullopt;
  const Duration left = *b.until - deps_.seam.clock.Now();
  LaunchOutcome out;
  out.decision = LaunchDecision::kDeferred;
  out.retry_after =
      std::clamp(left, config_.defer_delay(), std::max(config_.defer_delay(), kMaxPausedRecheck));
  out.detail = "class " + cls.label + " is paused by its circuit breaker until " +
               FormatRfc3339(*b.until) + " (its VMs kept failing): the job waits";
  deps_.metrics.AddDeferral("class_paused");
  deps_.seam.logger.Debug("launch deferred: the class is paused",
                          {{"job_id", in.job_id}, {"class", cls.label}});
  return out;
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
