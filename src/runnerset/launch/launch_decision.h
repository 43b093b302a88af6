// The launcher's decision (issue 57, item 2): whether a launch intent goes on (admission) and on
// which path (hot, warm, cold), from the evidence gathered so far, as one pure function. The
// launcher (launcher.cpp) gathers evidence lazily, in the order this function asks for it (each
// piece costs a store read or a GitHub call, and a later one is not asked for once an earlier
// one settles the launch), and carries out what it decides:
//   ignore: no class, labels the class does not offer, a repository outside the set's scope;
//   fail: the job's state or claim cannot be read (the message comes back);
//   defer: the class paused by its circuit breaker (and no fallbackClass takes the job), GitHub's
//     rate limits, an approval awaited or unknown, the cap (or its seats
//     unreadable), the fair share dealing the free seats to other repositories first, another
//     attempt holding the claim;
//   drop: a late queued whose runner's chain leaves no job waiting, a job no longer queued;
//   hold: GitHub refuses the class's runner and no fallback is healthy;
//   duplicate: the job has its VM;
//   take a hot member, take a warm member, launch cold.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "runnerset/config/config.h"
#include "runnerset/jobs/intent.h"
#include "runnerset/jobs/job_state.h"
#include "runnerset/lifecycle/circuit_breaker.h"

namespace mvr::runnerset {

// GitHub's word on whether the job needs a runner from this launch (Launcher::StillNeeded).
// The labels a hot runner of the class registers with: self-hosted, linux, ARM64 and the class
// label (github/platform_labels.h).
std::vector<std::string> HotRunnerLabels(const std::string& class_label);
// Whether a hot runner (HotRunnerLabels) can take the job: every label the job asks for is one of
// those.
bool FitsClassLabelAlone(const LaunchIntent& intent);
// Whether the committed launch of a scale set's job `job_id` (the runnerRequestId) serves another
// job now: its runner (`launched_runner`, the claim's) is bound by JobStarted to a job of the set
// other than this one (`bound_job`: the binding's job, nullopt while the runner has none). A
// runner bound to this job or to none yet still serves it; a launch not committed has no runner.
bool SetLaunchServesAnother(int64_t job_id, const std::string& launched_runner,
                            std::optional<int64_t> bound_job);

enum class JobNeed { kYes, kNo, kAwaitsApproval, kUnknown };

// One job of the still-queued check's chain that GitHub's jobs API lists as waiting for a runner
// (Launcher::StillNeeded): whether the launch is needed on that word. GitHub's jobs API lags the
// deliveries (RunsOn #429), so the set's own record (job_state.h) has the last word when it has
// the job in progress or over: for the intent's own job (`first`, own_job_over: a late queued)
// and, as much, for a job further down the chain (`recorded`: its phase in the set's record),
// whose `in_progress` delivery names the runner that took it and whose taken intent follows the
// chain on from there (launcher_taken.cpp). A launch on GitHub's lagging word there committed a
// VM to a job the set knew completed (`out-of-order` seeds 15, 21, 42, 66, 83, 86, 91, 99).
JobNeed NeedOfListedQueued(bool first, bool own_job_over, JobPhase recorded);

// A job a launch serves that is not the intent's own (Launcher::StillNeeded's chain).
struct ServedJob {
  std::string repository;
  int64_t job_id = 0;
  bool operator==(const ServedJob&) const = default;
};
// The fence of a launch's commit (JobStateLedger::Fence, in the commit's transaction), from the job
// StillNeeded found waiting (`head`; nullopt when it named none): only a launch that serves
// ANOTHER job its runner's chain left waiting is fenced, on that job, refused once the set records
// it in progress or over (it has a runner then, and its own in_progress's taken intent follows the
// chain on). The intent's own job never fences: GitHub hands a queued job to any idle runner of
// its labels, so a launch whose job ended or was taken meanwhile still brings a runner that serves
// another queued job of the burst; refusing it left that job without one (a lost launch in
// RunnerSetRateLimits' burst), and an idle runner's VM is the janitor's to reap.
std::optional<ServedJob> FenceOf(const LaunchIntent& intent, const std::optional<ServedJob>& head);
// The circuit breakers a launch meets (issue 55, item 4): its class's, and its fallbackClass's.
struct BreakerEvidence {
  BreakerPhase phase = BreakerPhase::kClosed;  // the job's class's breaker
  std::optional<TimePoint> until;              // kOpen: when the pause ends
  bool probe_due = false;  // kHalfOpen: no probe under way; this launch may take it (kNeedProbe)
  // kHalfOpen: whether this launch took the class's one probe (asked for once GitHub says the job
  // is queued, so a stale intent does not spend it).
  std::optional<bool> probe_taken;
  const RunnerClass* fallback = nullptr;  // the class's fallbackClass, when it names one
  BreakerPhase fallback_phase = BreakerPhase::kClosed;
};
enum class BreakerRoute {
  kClass,     // launch on the job's class (closed, or this launch is the half-open probe)
  kProbe,     // half-open with a probe due: this launch may be it (once the job is known queued)
  kFallback,  // the class is paused: launch on its fallbackClass
  kWait,      // the class is paused and no fallback takes the job: defer
};
// A paused class's job goes to its fallbackClass only while that one's breaker is closed and
// GitHub would hand the job to a runner with the fallback's labels (RunnerClass::Offers: every
// label the job asks for, the paused class's own among them); else it waits.
BreakerRoute DecideBreakerRoute(const BreakerEvidence& breaker, const LaunchIntent& intent);

// What the claim of job#<repo>#<jobId> said (RunnerTable::ClaimJob).
enum class ClaimEvidence { kUnreadable, kLaunched, kBusy, kWon };

struct LaunchEvidence {
  const LaunchIntent* intent = nullptr;
  const RunnerClass* cls = nullptr;  // the class the intent names (nullptr: the config has none)
  BreakerEvidence breaker;           // read before the decision (cheap: each process's copy)
  bool in_scope = true;              // the set's runners may serve the job's repository
  bool defer_rate_limited = true;    // LauncherDeps::defer_rate_limited

  // The job's state, once read (and the intent's action applied to it).
  struct Job {
    bool readable = true;
    bool stale = false;   // a late queued: the job is in progress or completed already
    bool waited = false;  // the job was seen waiting for an environment's approval
  };
  std::optional<Job> job;
  // How long GitHub's rate limits leave no room for a JIT runner: the client's own budget and
  // the hold another process recorded, and the wait for the set's shared pace of JIT configs
  // when it is too long to wait out inside the launch (zero or less: room now).
  struct RateRoom {
    Duration own{0};
    Duration held{0};
    Duration paced{0};
    TimePoint at{};  // when they were read
  };
  std::optional<RateRoom> rate;
  std::optional<bool> refused;  // GitHub refuses the runner the class launches on (no probe due)
  // GitHub's answer (nullopt inside: its rate limits kept it from answering).
  std::optional<std::optional<JobNeed>> need;
  // A seat of the concurrency cap (nullopt inside: the seats could not be read).
  std::optional<std::optional<bool>> seat;
  // No seat was taken because the fair share deals the free ones to other repositories (or the
  // repository holds its max; fair_share.h), not because the cap is full.
  bool seat_others_turn = false;
  std::optional<bool> refused_with_seat;  // as `refused`, a due probe spent

  // One attempt, on the class the job launches on now (after health and capacity routes).
  const RunnerClass* launch_class = nullptr;
  std::optional<ClaimEvidence> claim;
  bool has_pool_table = true;       // the launcher has the pools' rows
  std::optional<bool> pool_usable;  // GitHub accepts the launch class's runner (its pools serve)
  bool hot_tried = false;           // no hot member was taken (or none could be)
  bool warm_tried = false;          // no warm member was taken
};

enum class LaunchStep {
  kGather,  // the evidence `need` names is missing: gather it and decide again
  kIgnore,
  kFail,
  kDefer,
  kDrop,
  kHold,
  kDuplicate,
  kTakeHot,
  kTakeWarm,
  kLaunchCold,
};

enum class LaunchReason {
  // kGather: the evidence to gather next.
  kNeedJobState,
  kNeedRateRoom,
  kNeedRefusal,
  kNeedStillNeeded,
  kNeedSeat,
  kNeedRefusalWithSeat,
  kNeedClaim,  // admitted: route the launch and claim the job (per attempt)
  kNeedPoolHealth,
  kNeedProbe,  // the class is half-open and its probe due: take it (the job is queued)
  // kIgnore.
  kNoClass,
  kLabelsNotOffered,
  kOutOfScope,
  // kFail.
  kJobStateUnreadable,
  kClaimUnreadable,
  // kDefer.
  kRateLimited,        // no room for a JIT runner now
  kRateLimitedAsking,  // GitHub's rate limits kept it from saying whether the job waits
  kAwaitingApproval,
  kApprovalUnknown,
  kSeatsUnreadable,
  kAtCap,
  kNotItsTurn,  // the fair share: the free seats go to other repositories first (or its max)
  kClaimedElsewhere,
  kClassPaused,  // the class's circuit breaker pauses it and no fallbackClass takes the job
  // kDrop.
  kLateQueued,
  kNotQueued,
  // kHold.
  kRefused,
  kRefusedWithSeat,  // the seat taken is freed
  // kDuplicate.
  kHasVm,
  // kTakeHot, kTakeWarm, kLaunchCold.
  kHotMember,
  kWarmMember,
  kCold,
};

struct LaunchVerdict {
  LaunchStep step = LaunchStep::kGather;
  LaunchReason reason = LaunchReason::kNeedJobState;
  bool operator==(const LaunchVerdict&) const = default;
};

LaunchVerdict DecideLaunch(const LaunchEvidence& evidence);

const char* LaunchStepName(LaunchStep step);
const char* LaunchReasonName(LaunchReason reason);

}  // namespace mvr::runnerset
