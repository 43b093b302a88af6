#include "runnerset/janitor/janitor_verdict.h"

#include <iterator>

namespace mvr::runnerset {
namespace {

constexpr MappedVerdict NeedMapped(MappedReason what) { return {MappedStep::kGather, what}; }

// Past the grace and the strikes: a fresh read of the runner, then what its VM does, must agree
// before a VM is ended.
MappedVerdict SuspectVerdict(const MappedEvidence& e, bool ended) {
  if (!e.fresh) return NeedMapped(MappedReason::kNeedFreshRead);
  switch (*e.fresh) {
    case FreshRunner::kFailed:
      return {MappedStep::kError, MappedReason::kFreshReadFailed, ended};
    case FreshRunner::kBusy:
      return {MappedStep::kKeep, MappedReason::kBusyAfterAll, ended};
    case FreshRunner::kIdle:
      // Back in GitHub's view.
      if (!e.listed && !ended) return {MappedStep::kKeep, MappedReason::kBackInView, ended};
      break;
    case FreshRunner::kGone:
      break;
  }
  // Idle or gone by its flag, which can lie: neither the jobs API nor the VM's supervisor may
  // say it runs a job.
  if (!e.doing) return NeedMapped(MappedReason::kNeedVmDoing);
  switch (*e.doing) {
    case VmDoing::kFailed:
      return {MappedStep::kError, MappedReason::kDoingUnknown, ended};
    case VmDoing::kEnding:  // the next sweep finds it gone and removes the row and runner
      return {MappedStep::kWait, MappedReason::kVmEnding, ended};
    case VmDoing::kRunsAJob:
      return {MappedStep::kKeep, MappedReason::kRunsAJob, ended};
    case VmDoing::kIdle:
      break;
  }
  const MappedReason why = ended      ? MappedReason::kOwnJobEnded
                           : e.listed ? MappedReason::kIdle
                                      : MappedReason::kAbsent;
  // Idle still: deregister first (GitHub refuses to remove a runner that took a job meanwhile).
  return {*e.fresh == FreshRunner::kIdle ? MappedStep::kDeregister : MappedStep::kTerminate, why,
          ended};
}

}  // namespace

MappedVerdict DecideMapped(const MappedEvidence& e) {
  if (!e.vm_listed_live) return {MappedStep::kRemove, MappedReason::kVmGone};
  // Only a RUNNING VM is ever acted on: a suspended or starting one is left alone.
  if (!e.vm_running) return {MappedStep::kKeep, MappedReason::kNotRunning};
  if (e.runners_ok && e.listed && e.listed_busy) {
    return {MappedStep::kKeep, MappedReason::kListedBusy};
  }
  if (e.runners_ok && !e.own) return NeedMapped(MappedReason::kNeedOwnJob);
  const OwnJob own = e.runners_ok ? *e.own : OwnJob::kNo;
  // A job that ended moments ago is its `completed` webhook's to clean up, if it comes.
  if (own == OwnJob::kRecently) return {MappedStep::kWait, MappedReason::kOwnJobJustEnded};
  bool ended = false;
  if (own == OwnJob::kYes || own == OwnJob::kLongAgo) {
    // Unless its runner is registered and a job of its class waits: it may serve that job.
    if (e.listed && !e.class_job_waits) return NeedMapped(MappedReason::kNeedClassJobWaits);
    ended = !e.listed || !*e.class_job_waits;
  }
  if (!ended) {
    if (!e.old_enough) return NeedMapped(MappedReason::kNeedAge);
    if (!*e.old_enough) return {MappedStep::kKeep, MappedReason::kYoung};
  }
  if (!e.runners_ok) return {MappedStep::kWait, MappedReason::kNoListing};
  // A runner not yet online on a VM its launch may still be bringing up is starting, not
  // stranded.
  if (!ended && e.listed && !e.listed_online) {
    if (!e.starting) return NeedMapped(MappedReason::kNeedStarting);
    if (*e.starting) return {MappedStep::kKeep, MappedReason::kStarting};
  }
  if (!ended && e.strikes < e.strikes_needed) return {MappedStep::kStrike, MappedReason::kSuspect};
  return SuspectVerdict(e, ended);
}

const char* MappedStepName(MappedStep step) {
  static constexpr const char* kNames[] = {"gather", "remove",     "keep",      "wait",
                                           "strike", "deregister", "terminate", "error"};
  const auto i = static_cast<size_t>(step);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

const char* MappedReasonName(MappedReason reason) {
  static constexpr const char* kNames[] = {
      "need_own_job",
      "need_class_job_waits",
      "need_age",
      "need_starting",
      "need_fresh_read",
      "need_vm_doing",
      "vm_gone",
      "not_running",
      "listed_busy",
      "own_job_just_ended",
      "young",
      "no_listing",
      "starting",
      "suspect",
      "fresh_read_failed",
      "busy_after_all",
      "back_in_view",
      "doing_unknown",
      "vm_ending",
      "runs_a_job",
      "own_job_ended",
      "absent",
      "idle",
  };
  const auto i = static_cast<size_t>(reason);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

StuckStep DecideStuckJob(const StuckJobEvidence& e) {
  if (!e.has_class) return StuckStep::kSkip;  // not this set's job
  if (e.young) return StuckStep::kWait;
  if (e.claimed && !e.released) {
    if (e.committed) {
      // Launched: leave it while its VM lives and its runner may still take the job. A VM gone,
      // or a runner that took another job while this one still waits, releases the claim.
      if (e.vm_live && !e.runner_elsewhere) return StuckStep::kKeep;
      return StuckStep::kRelease;
    }
    if (e.claim_young) return StuckStep::kWait;  // a launch holds it and may still be working
  }
  // Due back at its turn; a relaunch each sweep would multiply a backlog's intents.
  if (e.waiting_for_seat) return StuckStep::kWait;
  if (!e.held) return StuckStep::kGather;
  return *e.held ? StuckStep::kHold : StuckStep::kRelaunch;
}

const char* StuckStepName(StuckStep step) {
  static constexpr const char* kNames[] = {"gather",  "skip", "wait",    "keep",
                                           "release", "hold", "relaunch"};
  const auto i = static_cast<size_t>(step);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

OrphanStep DecideOrphanVm(const OrphanVmEvidence& e) {
  if (!e.suspect) return OrphanStep::kSkip;
  if (!e.adopted) return OrphanStep::kGather;
  if (*e.adopted) return OrphanStep::kAdopt;
  if (!e.strikes_done) return OrphanStep::kGather;
  if (!*e.strikes_done) return OrphanStep::kStrike;
  // The instant before the kill: a launch that wrote a row or a claim for it meanwhile wins.
  if (e.known_on_rescan) return OrphanStep::kSpare;
  if (!e.doing) return OrphanStep::kGather;
  switch (*e.doing) {
    case VmDoing::kEnding:
      return OrphanStep::kWait;
    case VmDoing::kRunsAJob:  // until it says so no longer (its maximum lifetime bounds it)
      return OrphanStep::kKeep;
    default:
      return OrphanStep::kTerminate;
  }
}

OrphanStep DecideOrphanRunner(const OrphanRunnerEvidence& e) {
  if (e.owned) return OrphanStep::kSkip;
  if (!e.strikes_done) return OrphanStep::kGather;
  if (!*e.strikes_done) return OrphanStep::kStrike;
  if (e.owned_on_rescan) return OrphanStep::kSpare;
  if (!e.fresh) return OrphanStep::kGather;
  if (*e.fresh != FreshRunner::kIdle) return OrphanStep::kForget;
  // Its busy flag can lie (actions/runner #4422): the jobs API must not name it on a job.
  if (!e.jobs_api) return OrphanStep::kGather;
  switch (*e.jobs_api) {
    case VmDoing::kFailed:
      return OrphanStep::kError;
    case VmDoing::kRunsAJob:
      return OrphanStep::kKeep;
    default:
      return OrphanStep::kDeregister;
  }
}

const char* OrphanStepName(OrphanStep step) {
  static constexpr const char* kNames[] = {"gather",    "skip",   "adopt",     "strike",
                                           "spare",     "keep",   "wait",      "error",
                                           "terminate", "forget", "deregister"};
  const auto i = static_cast<size_t>(step);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

}  // namespace mvr::runnerset
