#include "runnerset/pools/hot/hot_step.h"

#include "runnerset/pools/sweep/pool_sweeper_core.h"

namespace mvr::runnerset {

HotVerdict DecideHotStep(const HotStepEvidence& e) {
  using State = PoolMember::State;
  // GitHub handed the runner a job before any launch claimed the member (while it still looked
  // online after its suspend, or on its way there): resume it, so that the job runs.
  if (e.listed && e.busy) return {HotStep::kAdopt, HotStepReason::kRunnerBusy};
  if (e.state != State::kSuspended && e.age_ms > e.boot_timeout.count()) {
    return {HotStep::kRetire, HotStepReason::kBootTimeout};
  }
  if (!e.image_current) return {HotStep::kRetire, HotStepReason::kOldImage};
  if (e.age_ms >= e.max_age.count()) return {HotStep::kRetire, HotStepReason::kTooOld};
  if (e.state != State::kBooting && !e.listed)
    return {HotStep::kRetire, HotStepReason::kRunnerGone};
  if (!PoolVmInPlace(e.state, e.vm)) return {HotStep::kRetire, HotStepReason::kVmNotInPlace};
  switch (e.state) {
    case State::kBooting:
      if (e.vm != aws::MicrovmState::kRunning)
        return {HotStep::kWait, HotStepReason::kStillBooting};
      return {HotStep::kStartRunner, HotStepReason::kBooted};
    case State::kStarting:
      // Connected and idle: freeze it as it is. Its registration stays; only its poll stops.
      if (!e.online) return {HotStep::kWait, HotStepReason::kRunnerStarting};
      return {HotStep::kPark, HotStepReason::kRunnerOnline};
    case State::kParking:
      // Claimable only once the VM is SUSPENDED and GitHub shows the runner offline: until then
      // it could hand the frozen runner a job (which the busy check above then serves).
      if (e.vm != aws::MicrovmState::kSuspended || e.online) {
        return {HotStep::kWait, HotStepReason::kStillParking};
      }
      return {HotStep::kMarkReady, HotStepReason::kParked};
    case State::kSuspended:
      break;
  }
  return {HotStep::kWait, HotStepReason::kReady};
}

const char* HotStepName(HotStep step) {
  switch (step) {
    case HotStep::kAdopt:
      return "adopt";
    case HotStep::kRetire:
      return "retire";
    case HotStep::kStartRunner:
      return "start_runner";
    case HotStep::kPark:
      return "park";
    case HotStep::kMarkReady:
      return "mark_ready";
    case HotStep::kWait:
      return "wait";
  }
  return "unknown";
}

const char* HotStepReasonText(HotStepReason reason) {
  switch (reason) {
    case HotStepReason::kRunnerBusy:
      return "GitHub handed its runner a job";
    case HotStepReason::kBootTimeout:
      return "it was not ready within bootTimeoutSeconds";
    case HotStepReason::kOldImage:
      return "it runs an old image version";
    case HotStepReason::kTooOld:
      return "it is older than hotPool.maxAgeSeconds (or near its maximum duration)";
    case HotStepReason::kRunnerGone:
      return "GitHub no longer lists its runner";
    case HotStepReason::kVmNotInPlace:
      return "its VM is not SUSPENDED";
    case HotStepReason::kBooted:
      return "its VM is RUNNING";
    case HotStepReason::kRunnerOnline:
      return "its runner is online";
    case HotStepReason::kParked:
      return "its VM is SUSPENDED and its runner offline";
    case HotStepReason::kStillBooting:
      return "its VM is still booting";
    case HotStepReason::kRunnerStarting:
      return "its runner is still starting";
    case HotStepReason::kStillParking:
      return "its suspend is under way";
    case HotStepReason::kReady:
      return "it is ready";
  }
  return "unknown";
}

}  // namespace mvr::runnerset
