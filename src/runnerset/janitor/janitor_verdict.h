// The janitor's verdicts (issue 57, item 2) as pure functions of the evidence a sweep gathered;
// janitor.cpp and janitor_recover.cpp gather it (lazily, in the order these ask for it: each
// piece past the inventory costs a GitHub call) and carry the verdict out. What a launch that
// died before its commit left is decided by DecideDeadLaunch (runnerset/adopt/dead_launch.h).
//
// DecideMapped: a mapped VM (a mapping row) and its runner.
//   remove     its VM is gone (or the listing lags: a fresh read tells): its runner deregistered
//              unless busy, its row deleted;
//   keep       RUNNING and its runner busy, young, starting, or found busy or working by a fresh
//              read: its strikes cleared;
//   wait       nothing this sweep (its job ended moments ago, no listing, its VM ending);
//   strike     suspect (idle or absent) but not yet for janitor.strikes sweeps in a row;
//   deregister idle by a fresh read: its runner removed, then its VM terminated, its row deleted;
//   terminate  its runner gone: its VM terminated, its row deleted.
// A VM whose own job ended (its `completed` webhook may never come) skips the grace and the
// strikes, unless its runner may serve a job of its class that waits.
//
// DecideStuckJob: a job GitHub lists as queued in a repository the set serves.
//   skip       not the set's (no class takes its labels);
//   wait       too young to look stuck, or a launch holds its claim and may still be working;
//   keep       launched: its VM lives and its runner may still take the job;
//   release    launched, but its VM is gone or its runner took another job: the claim is
//              released, then the job relaunched (asking again for the refusal hold);
//   wait       ... or its launch intent waits for a seat of the cap (the fair share's waiting
//              room): it is due back at its turn, and another intent would only wait too;
//   hold       GitHub refuses the class's runner and no probe is due;
//   relaunch   a launch intent on the queue.
// DecideOrphanVm: a RUNNING VM past its grace that no row, claim or pool member names.
//   adopt      the runner of a launch that died before its commit runs a job there
//              (DecideDeadLaunch, which Janitor::AdoptDeadLaunch gathers and carries out);
//   strike     strikes first; past janitor.strikes, a consistent re-scan just before acting:
//   spare      a launch wrote a row or claim for it meanwhile (its orphan row goes);
//   keep       its supervisor says its runner runs a job (it may be another's VM of the image);
//   wait       its VM is ending already;
//   terminate  else.
// DecideOrphanRunner: a registration of the set's prefix that no row, claim or pool member owns
// and GitHub's listing shows idle.
//   strike, spare  as for a VM;
//   keep       a fresh read or the jobs API says it runs a job (its strike stays);
//   error      the jobs API cannot say;
//   forget     a fresh read says busy, gone or nothing: its orphan row goes, no removal;
//   deregister idle by every word: removed from GitHub (a busy refusal spares it), its orphan
//              row goes.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>

#include "base/clock.h"

namespace mvr::runnerset {

// What a fresh read of a suspect runner said.
enum class FreshRunner { kBusy, kIdle, kGone, kFailed };
// What the jobs API and the VM's supervisor say the suspect runner's VM does.
enum class VmDoing { kIdle, kRunsAJob, kEnding, kFailed };
// Whether the job a VM was launched for has ended (Janitor::OwnJobEnded).
enum class OwnJob { kNo, kRecently, kYes, kLongAgo };

struct MappedEvidence {
  bool vm_listed_live = false;  // the listing shows the VM, not TERMINATED
  bool vm_running = false;      // ... RUNNING
  bool runners_ok = false;      // GitHub's runner listing is complete
  bool listed = false;          // it names the row's runner
  bool listed_busy = false;
  bool listed_online = false;
  std::optional<OwnJob> own;            // read only when runners_ok (else kNo)
  std::optional<bool> class_job_waits;  // read only when own ended and the runner is listed
  // Each a clock read (a scheduling point in the simulation): read only when asked for.
  std::optional<bool> old_enough;    // the VM has run graceSeconds
  std::optional<bool> starting;      // younger than graceSeconds plus the launch timeout
  int strikes = 0;                   // this sweep's count for its suspicion
  int strikes_needed = 0;            // janitor.strikes
  std::optional<FreshRunner> fresh;  // a fresh read of the runner
  std::optional<VmDoing> doing;      // the jobs API, then the supervisor
};

enum class MappedStep { kGather, kRemove, kKeep, kWait, kStrike, kDeregister, kTerminate, kError };

enum class MappedReason {
  kNeedOwnJob,
  kNeedClassJobWaits,
  kNeedAge,
  kNeedStarting,
  kNeedFreshRead,
  kNeedVmDoing,
  kVmGone,
  kNotRunning,
  kListedBusy,
  kOwnJobJustEnded,
  kYoung,
  kNoListing,
  kStarting,
  kSuspect,
  kFreshReadFailed,
  kBusyAfterAll,
  kBackInView,
  kDoingUnknown,
  kVmEnding,
  kRunsAJob,
  kOwnJobEnded,
  kAbsent,
  kIdle,
};

struct MappedVerdict {
  MappedStep step = MappedStep::kGather;
  MappedReason reason = MappedReason::kNeedOwnJob;
  bool ended = false;  // its own job ended (no grace, no strikes)
};

MappedVerdict DecideMapped(const MappedEvidence& evidence);
const char* MappedStepName(MappedStep step);
const char* MappedReasonName(MappedReason reason);

struct StuckJobEvidence {
  bool has_class = false;         // a class of the set takes its labels
  bool young = false;             // created less than stuckLaunchSeconds ago
  bool claimed = false;           // it has a claim
  bool committed = false;         // ... that names its VM (the launch committed)
  bool vm_live = true;            // that VM lives (or the VM listing is incomplete)
  bool runner_elsewhere = false;  // its runner took another job (busy, or gone)
  bool claim_young = false;       // an uncommitted claim younger than claimTakeoverSeconds
  bool released = false;          // the janitor released that claim this sweep
  bool waiting_for_seat = false;  // its launch intent waits in the fair share's waiting room
  std::optional<bool> held;       // GitHub refuses the class's runner, no probe due
};

enum class StuckStep { kGather, kSkip, kWait, kKeep, kRelease, kHold, kRelaunch };

StuckStep DecideStuckJob(const StuckJobEvidence& evidence);
const char* StuckStepName(StuckStep step);

enum class OrphanStep {
  kGather,
  kSkip,
  kAdopt,
  kStrike,
  kSpare,
  kKeep,
  kWait,
  kError,
  kTerminate,
  kForget,
  kDeregister
};
const char* OrphanStepName(OrphanStep step);

struct OrphanVmEvidence {
  bool suspect = false;         // RUNNING, past its grace, and no row, claim or member names it
  std::optional<bool> adopted;  // AdoptDeadLaunch settled it
  std::optional<bool> strikes_done;  // struck janitor.strikes times and re-scanned (false: not yet,
                                     // or the strike or re-scan failed)
  bool known_on_rescan = false;
  std::optional<VmDoing> doing;  // its supervisor's word (kIdle, kRunsAJob, kEnding)
};
OrphanStep DecideOrphanVm(const OrphanVmEvidence& evidence);

struct OrphanRunnerEvidence {
  bool owned = false;  // a row, claim, launch in flight or pool member names it, or listed busy
  std::optional<bool> strikes_done;
  bool owned_on_rescan = false;
  std::optional<FreshRunner> fresh;  // a fresh read (kFailed: nothing known)
  std::optional<VmDoing> jobs_api;   // asked only when the fresh read says idle
};
OrphanStep DecideOrphanRunner(const OrphanRunnerEvidence& evidence);

}  // namespace mvr::runnerset
