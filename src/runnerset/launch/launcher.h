// Launcher: carries out the runner set's intents (001, duties 3 and 4).
// Launch, step by step: (1) ask GitHub whether the job is still queued, and drop it if it
// definitely is not (anything short of a definite answer proceeds: fail open; a job that a
// runner launched for another job took still gets its launch, for that other job); (2) count the
// set's live VMs by its image ARNs and defer at the cap; (3) claim job#<repo>#<jobId> with a
// conditional write and a random attemptToken (taking over, and cleaning up after, an attempt
// that died); (4) register a single-use JIT runner; (5) RunMicrovm in "delivered" mode with a
// clientToken from the claim attempt and no execution role by default; (6) wait for RUNNING and
// push the runner's JIT config to the supervisor's control port through the VM's ingress
// endpoint with a short-lived token for that port only; (7) write the mapping row and stamp the
// claim's VM id in one transaction. A failure after the VM exists terminates it and releases the
// claim once it is gone; a failed launch removes its runner registration.
// Step (1) is launcher_needed.cpp.
// The warm path (launcher_warm.cpp; a class with warmPoolSize): after the job's claim, claim a
// usable pool member's warmvm#<id> first-writer-wins (losing means trying the next member, then
// the cold path), resume it, THEN register the runner against it, deliver, and commit (which
// also deletes the member row). A member of an old image version is never used.
// The hot path (a class with hotPoolSize, a job whose labels are the class label alone): claim a
// ready hot member first-writer-wins, resume it, and commit a mapping row naming its runner,
// which is registered and connected already: nothing is registered or delivered.
// Terminate: mapping row → terminate that VM → delete the row; an unknown runner is a no-op.
// Thread-safety: Launch and Terminate may run concurrently from many threads.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "aws/microvms/microvms.h"
#include "base/seam.h"
#include "fleet/boot_schedule.h"
#include "github/github.h"
#include "http/client.h"
#include "runnerset/classes/class_health.h"
#include "runnerset/config/config.h"
#include "runnerset/jobs/intent.h"
#include "runnerset/jobs/job_state.h"
#include "runnerset/launch/assigned_jobs.h"
#include "runnerset/launch/cap_gate.h"
#include "runnerset/launch/cap_ledger.h"
#include "runnerset/launch/fair_share.h"
#include "runnerset/launch/launch_decision.h"
#include "runnerset/launch/runner_watch.h"
#include "runnerset/launch/shared_pace.h"
#include "runnerset/metrics/metrics.h"
#include "runnerset/pools/pool_target.h"
#include "runnerset/pools/warm_pool_table.h"
#include "runnerset/table/runner_table.h"

namespace mvr::runnerset {

// Whether RunMicrovm failed for want of the platform's capacity or the account's quota
// (InsufficientCapacityException, ServiceQuotaExceededException): a fallbackClass may serve.
bool IsOutOfCapacity(const Status& status);

// Where launches go while a class's image had no capacity or quota: for kCapacityMemory after
// RunMicrovm said so, a class with a fallbackClass launches there at once (a burst does not pay a
// failed RunMicrovm per job). Per process; safe from many threads.
class CapacityRoute {
 public:
  static constexpr Duration kCapacityMemory{60'000};
  // The class to launch `cls`'s job on now: `cls`, or the first class along its fallbackClass
  // chain not short of capacity.
  const RunnerClass& Route(const ServeConfig& config, const RunnerClass& cls, TimePoint now);
  // Records that `cls` is short of capacity; its fallbackClass if it names one, else nullptr.
  const RunnerClass* Short(const ServeConfig& config, const RunnerClass& cls, TimePoint now);

 private:
  std::mutex mu_;
  std::map<std::string, TimePoint> short_until_;  // by class label
};

struct LauncherDeps {
  Seam seam;
  aws::MicrovmService& microvms;
  github::GitHub& github;
  http::HttpClient& http;  // the VMs' ingress endpoints
  RunnerTable& table;
  Metrics& metrics;
  RunnerWatch* watch = nullptr;   // told about each delivered runner (the timeline); optional
  WarmPoolTable* pool = nullptr;  // the warm pools' rows; optional (no warm path without)
  // The set's control key (ControlKeyOf, config.h), from which a pool member's control nonce is
  // derived again at delivery (warm_pool_sweeper.h); a cold launch's nonce is random.
  Secret control_key{};
  // Which classes GitHub refuses the runner of (class_health.h): their pools are left alone and
  // their jobs launch on a healthy fallbackClass. Optional.
  ClassHealth* health = nullptr;
  // A launch GitHub's rate limits hold back is deferred until they allow it (never failed).
  // false only for the simulation's planted bug `rate-blind`.
  bool defer_rate_limited = true;
  // Where a job of a class whose pool is sized to a target is counted (pool_target.h). Optional.
  ArrivalHistory* arrivals = nullptr;
  // The simulation's planted bug `undo-late-delivery`: a late delivery undoes the job's state.
  bool plant_undo_job_state = false;
  // The runner of a launch that died before its commit, found running a job by the takeover of
  // its claim, is adopted (a mapping row). false only for the simulation's planted bug
  // `kill-dead-launches`, which restores the release that left its VM an orphan.
  bool adopt_dead_launches = true;
  // A hot member's registration is read before it is resumed, and one GitHub no longer has is
  // recycled rather than served (issue 55). false only for the simulation's planted bug
  // `stale-hot`.
  bool check_hot_registration = true;
  // GitHub's word that the job waits for an environment's approval defers its launch (issue 55,
  // item 3). false only for the simulation's planted bug `launch-waiting`.
  bool wait_for_approval = true;
};

enum class LaunchDecision {
  kLaunched,          // a VM runs the job's runner: delete the message
  kDuplicate,         // the job already has its VM: delete
  kDroppedNotQueued,  // GitHub says the job is no longer queued: delete
  kIgnored,           // nothing to do (no such class, unknown runner): delete
  kDeferred,          // try again after retry_after (not a failure)
  kFailed,            // failed; the message comes back (and is dead-lettered after enough)
  kTerminated,        // the runner's VM is terminated and its row deleted
  kHeld,  // GitHub refuses the runner of the job's class and no fallback is healthy: delete (the
          // janitor launches the job once the class is healthy again, or as a probe)
};
const char* LaunchDecisionName(LaunchDecision decision);

// HotRunnerLabels and FitsClassLabelAlone: launch_decision.h.

struct LaunchOutcome {
  LaunchDecision decision = LaunchDecision::kFailed;
  Duration retry_after{0};
  std::string detail;  // for logs; never a secret
  std::string microvm_id;
  std::string runner_name;
};

class Launcher {
 public:
  Launcher(const ServeConfig& config, LauncherDeps deps);

  LaunchOutcome Launch(const LaunchIntent& intent);
  // `action`: kQueued for a webhook's launch, kRequeued for one GitHub's jobs API asked for.
  // `just_read`: GitHub's answer for the job, read a moment ago by the caller (a taken job's
  // relaunch), which the still-queued check takes instead of reading the job again.
  LaunchOutcome LaunchAs(const LaunchIntent& intent, JobAction action,
                         const github::Job* just_read = nullptr);
  // Records what a delivery told of a job (launcher_job_state.cpp): nothing else to do.
  LaunchOutcome NoteJobEvent(const JobEventIntent& intent);
  LaunchOutcome Terminate(const TerminateIntent& intent);
  // A runner launched for one job took another (launcher_taken.cpp): when the job it was
  // launched for still waits, its claim is released and it is launched again.
  LaunchOutcome Taken(const TakenIntent& intent);
  // What the taken job's own launch means for the job left waiting (launcher_taken.cpp).
  enum class TakenJobsLaunch { kServes, kUnderWay, kNone };
  // kUnderWay sets `under_way_since_ms` to when that launch claimed its job.
  TakenJobsLaunch TakenJobsLaunchState(const TakenIntent& intent,
                                       int64_t* under_way_since_ms = nullptr);
  // How long an intent waits before it looks again at a launch another attempt holds, claimed
  // at `claimed_ms`, which counts as hung (or can be taken over) `horizon` after that: half
  // the claim's age, at least deferSeconds and at most until then. A young claim commits within
  // seconds and is looked at again soon; one that has not commits late or never, and each look
  // costs GitHub calls (the chain walk, the still-queued check), so polling it every few seconds
  // for minutes spent the hourly budget (chaos seed 256).
  Duration WaitOnClaim(int64_t claimed_ms, Duration horizon) const;
  // The job at the head of a chain of taken jobs, still queued, and the runner launched for it
  // (which took another job).
  struct WaitingHead {
    std::string repository;
    github::Job job;
    std::string runner_name;
  };
  Result<std::optional<WaitingHead>> FindWaitingHead(std::string repository, int64_t job_id,
                                                     std::string runner_name);
  // The job left waiting at the head of a taken job's chain: its committed claim released and the
  // job launched again (unless its launch is under way, or it was launched again already).
  LaunchOutcome RelaunchWaiting(const TakenIntent& intent, const WaitingHead& head);
  // Any of them, counted in the metrics.
  LaunchOutcome Handle(const Intent& intent);

  const github::RunnerScope& scope() const { return scope_; }

 private:
  struct Attempt;
  // Whether a job of `repository` can run on the set's runners (GitHub compares names
  // case-insensitively).
  bool InScope(const std::string& repository) const;
  // kNo only when GitHub definitely says the job needs no runner from this launch: it is no
  // longer queued, and the chain of jobs taken by runners launched for other jobs ends with no
  // job left waiting; kAwaitsApproval while the job itself waits for an environment's approval;
  // kUnknown when GitHub could not be asked (the launch fails open, but for a job seen waiting).
  // own_job_over: the set's job state says this job is in progress or over (a late queued), so
  // GitHub's word on the job itself (a lagging jobs API) does not count: the launch is needed only
  // when the chain leads to another job still waiting (its runner took this job). requeued:
  // GitHub's jobs API listed the job queued when the intent was made (the janitor's launch), so the
  // job itself is read from GitHub, never from the answers kept (assigned_). head (when given)
  // names the job found waiting, when the answer is kYes on GitHub's word on one job.
  using Need = JobNeed;
  // just_read: GitHub's fresh answer for the job itself, taken instead of a read (nullptr: read).
  Result<Need> StillNeeded(const LaunchIntent& intent, bool own_job_over = false,
                           bool requeued = false, std::optional<ServedJob>* head = nullptr,
                           const github::Job* just_read = nullptr);
  // The launch's decision (launch_decision.h): the evidence gathered so far and what gathering
  // kept for carrying the verdict out (launcher_attempt.h).
  struct Gathered;
  // Gathers the piece of evidence `need` names (the verdict's reason), in the I/O it costs.
  void Gather(LaunchReason need, LaunchEvidence& evidence, Gathered& gathered);
  // Carries out a verdict that ends the intent before any attempt: ignore, fail, drop, hold.
  LaunchOutcome Settle(const LaunchVerdict& verdict, const LaunchEvidence& evidence,
                       Gathered& gathered);
  // ... and one that defers it.
  LaunchOutcome Defer(LaunchReason reason, const LaunchEvidence& evidence, Gathered& gathered);
  // Admitted with a seat: the attempts on the class's route (fallbackClass on want of capacity).
  LaunchOutcome LaunchOnRoute(const LaunchEvidence& evidence, Gathered& gathered);
  // The job's state for a launch (launcher_job_state.cpp): evidence.job, and in `gathered` the
  // job's state and why a queued is late (the job is in progress or completed already).
  void GatherJobState(const LaunchIntent& in, LaunchEvidence& evidence, Gathered& gathered);
  // Whether the job's state, read again once the claim is won, now makes the intent stale (a
  // `completed` recorded since GatherJobState read it); false when it cannot be read.
  bool StaleSinceGathered(const LaunchIntent& in);
  // A launch deferred while the job waits for an environment's approval (`waits`), or was seen
  // waiting and GitHub cannot say whether the approval came.
  LaunchOutcome DeferForApproval(const LaunchIntent& in, bool waits);
  // The circuit breakers the launch meets (issue 55, item 4; launcher_breaker.cpp): its class's
  // and its fallbackClass's, from this process's copy.
  BreakerEvidence GatherBreaker(const RunnerClass& cls);
  // A half-open class's probe for this launch: when it was taken (epoch ms), 0 when not.
  int64_t TakeProbe(const LaunchIntent& in, const RunnerClass& cls);
  // A probe taken whose launch made no VM (deferred, dropped ...) is released for the next.
  void SettleProbe(const RunnerClass& cls, int64_t probe_ms, const LaunchOutcome& outcome);
  // The deferral of a paused class's job (LaunchReason::kClassPaused).
  LaunchOutcome DeferForPause(const LaunchIntent& in, const LaunchEvidence& evidence);
  // A launch of `cls` committed: its VM booted, which closes a half-open breaker.
  void NoteVmBooted(const RunnerClass& cls);
  // A VM of class `label` failed ("launch_failed", "lost_mid_job"): the breaker counts it.
  void NoteVmFailure(const std::string& label, const std::string& microvm_id, const char* why);
  // Records `action` of a job in its state for a terminate or taken intent; a failure is
  // logged (the intent goes on: its own work does not depend on it).
  void NoteJobAction(const std::string& repository, int64_t job_id, JobAction action);
  // The set's VMs that hold capacity (every state but TERMINATED) by its image ARNs, unclaimed
  // pool members left out, with their startedAt (epoch ms): what reconciles the cap's seats.
  Result<std::map<std::string, int64_t>> ListLiveVms();
  CapLedger::Options CapOptions() const;
  // A scale set's job offered again (JobAssigned once more) whose committed launch's runner
  // GitHub bound to another job of the set (JobStarted): that launch serves the other job, so its
  // claim is released and true returned, for this job to be launched again (launcher_taken.cpp).
  bool ReleaseIfItsRunnerTookAnother(const LaunchIntent& in);
  // A scale set's job GitHub already started on a runner of the set (JobStarted, written before
  // its message was acknowledged) needs no launch, whichever runner took it: a duplicate, not a VM
  // that would wait for a job already run (launcher_taken.cpp); deferred while that is unreadable.
  // nullopt: launch as usual.
  std::optional<LaunchOutcome> SetJobStarted(const LaunchIntent& in);
  // (2)'s seat, shared between repositories by launcher.fairShare (launcher_fair_share.cpp);
  // A deferral's `wait` says why and when the intent is due back (its turn, FairShareDueIn).
  Result<std::optional<CapSeat>> TakeSeat(const LaunchIntent& in, SeatWait& wait);
  // Names the attempt's VM (a.microvm_id) on its seat of the cap; a failure is logged (the next
  // reconciliation counts the VM all the same).
  void NameSeat(Attempt& attempt);
  // What a dead attempt left (launcher_adopt.cpp): removed, or, when its runner runs a job, that
  // runner adopted (issue 53, item 3).
  struct TakenOverLeft {
    bool runner_busy = false;          // its VM was left alone
    std::optional<MappingRow> adopt;   // the row that adopts its runner (nullopt: none)
    std::vector<store::WriteOp> also;  // with it: its pool member's row goes
  };
  TakenOverLeft CleanUpTakenOver(const Claim& previous, TimePoint deadline);
  // After a takeover: the outcome when the dead attempt's busy runner settles the job (adopted
  // with the claim, or the job no longer queued); nullopt: this attempt launches.
  std::optional<LaunchOutcome> SettleTakenOver(Attempt& attempt, const Claim& previous);
  // A commit of `row` refused: when a mapping row for its runner on its VM is there already (the
  // pool sweeper or the janitor adopted that runner first), the launch stands on that row and its
  // claim is released; any other refusal fails the launch (Fail).
  LaunchOutcome CommitRefused(Attempt& attempt, const Status& refused, const MappingRow& row);
  // One attempt on its class: claims the job, decides the path and carries it out.
  LaunchOutcome Run(Attempt& attempt, LaunchEvidence evidence);
  // The attempt's VM on the path the decision chose: a hot member (attempt.hot), a warm one
  // (attempt.warm), or a default Microvm for a cold launch.
  Result<aws::Microvm> TakeMemberOnPath(Attempt& attempt, LaunchEvidence& evidence);
  // Delivers the runner's JIT config to a warm or cold attempt's VM (steps 5-6).
  Status Deliver(Attempt& attempt, const aws::Microvm& vm);
  // (7) The mapping row and the claim's VM id, together.
  LaunchOutcome Commit(Attempt& attempt, const aws::Microvm& vm);
  // Counts a job whose claim this launch won first among its class's arrivals (pool_target.h).
  void CountArrival(const RunnerClass& cls, const LaunchIntent& in);
  // Registers the attempt's JIT runner and records it on the claim.
  Status Register(Attempt& attempt);
  // RunMicrovm (paced, idempotent per attempt), recorded on the claim, then RUNNING.
  Result<aws::Microvm> LaunchCold(Attempt& attempt);
  // A usable member of `kind` of the class's pool, claimed and resumed (attempt.warm, and for a
  // hot one attempt.hot). A default Microvm with attempt.warm false: none taken (none usable,
  // all lost).
  Result<aws::Microvm> TakePoolMember(Attempt& attempt, PoolMember::Kind kind);
  // Claims and resumes member `m`, won for the attempt; nullopt: it would not resume and is gone
  // (try the next).
  std::optional<Result<aws::Microvm>> ResumeMember(Attempt& attempt, const PoolMember& m);
  // Whether the attempt's (hot) runner has taken a job: busy, or already removed after it.
  bool RunnerTookAJob(Attempt& attempt);
  // Whether hot member `m` (claimed by this attempt, not yet resumed) lost its registration:
  // then its VM is terminated and its row removed, so that no launch serves it (issue 55).
  bool RecycledStaleHot(Attempt& attempt, const PoolMember& m);
  // The id of the job a runner this set launched was launched for (from its name, or for a hot
  // runner from the mapping row its launch wrote); kLaunchInFlight for a hot runner a launch has
  // resumed but not yet mapped; nullopt for a runner the set did not launch or mapped to no job.
  std::optional<int64_t> LaunchedFor(const std::string& runner_name);
  // What a taken intent tells for later walks: the job it names is the runner's (AssignedJobs),
  // and the runner launched for `launched_for` went there (RunnerTable::RecordTook).
  Status NoteTook(const TakenIntent& in, const std::string& repository, int64_t launched_for);
  // GitHub's answer for a job in a chain walk: kept once a runner has taken it (assigned_); fresh:
  // asked of GitHub even when kept.
  Result<github::Job> ReadJob(const github::RepositoryRef& repo, int64_t job_id,
                              bool fresh = false);
  static constexpr int64_t kLaunchInFlight = -1;
  // How many links of a chain of taken jobs are followed, in either direction, before giving up.
  static constexpr int kMaxChain = 8;
  // Whether the hot member whose runner this is is claimed by a launch (not the sweeper).
  bool HotLaunchInFlight(const std::string& runner_name);
  // Removes unclaimed pool members from the VMs the cap counts: they are not jobs.
  void LeavePoolMembersOut(std::map<std::string, int64_t>& live);
  LaunchOutcome Fail(Attempt& attempt, const Status& failure);
  // Undoes what the attempt made (its runner, then its VM unless that runner is busy, then its
  // claim once the VM is gone), noting what could not be undone in out.detail.
  void Undo(Attempt& attempt, LaunchOutcome& out);
  // The commit's fence refused it (FenceOf): undone, counted, logged once, deferred.
  LaunchOutcome Fenced(Attempt& attempt, const Status& refused);
  // A job's end (or a failed launch) in the store's history, for the status page.
  void KeepJobRecord(const JobRecord& record);
  // The end of the job the runner of `row` ran: its timeline's last milestones and its record.
  void EndJob(const TerminateIntent& in, const MappingRow& row);
  // The completed job as its `completed` delivery told it, else as GitHub's GET answers.
  Result<github::Job> JobAsCompleted(const TerminateIntent& in, const std::string& repository,
                                     int64_t job_id);
  // Issue 55, item 4 (launcher_lost.cpp): the job of a `completed` whose VM ended before it was
  // lost with it; it is re-run once when janitor.rerunLostJobs allows. False: GitHub refused the
  // re-run, and the row is kept for the janitor to ask again.
  bool RerunIfLost(const TerminateIntent& in, const MappingRow& row);
  // A terminate intent for a runner with no mapping row whose launch died between its delivery
  // and its commit (launcher_uncommitted.cpp): the VM its claim names ends, and the claim goes.
  // nullopt: no such claim (the intent is ignored, as before).
  std::optional<LaunchOutcome> TerminateUncommitted(const TerminateIntent& in);
  // GitHub's rate limits (launcher_rate.cpp). Whether `failure` is one (its 403/429, or the
  // client's own budget); the deferral for it (recorded for the other processes); and, before a
  // launch that will register a JIT runner asks GitHub anything, its deferral while the client's
  // budget or another process's hold says no JIT runner can be registered now.
  bool IsGitHubRateLimit(const Status& failure) const;
  LaunchOutcome DeferForRateLimit(int64_t job_id, const Status& failure, LaunchOutcome out);
  LaunchEvidence::RateRoom RateRoomNow();
  LaunchOutcome DeferForRateRoom(const LaunchIntent& in, const LaunchEvidence::RateRoom& room);
  // Waits for the attempt's slot of the set's shared pace (shared_pace.h) before RunMicrovm or a
  // JIT config: Throttled when the slot is past `longest` from now (the launch is deferred), Ok
  // otherwise (a pace that cannot be read waits on `fallback`, this process's own, if any).
  // `error_type` names the refusal ("RateBudget" for a JIT config: deferred as GitHub's limits).
  Status WaitForPace(SharedRate& pace, Duration longest, Pacer* fallback,
                     const std::string& error_type);
  // The longest a launch waits inside its attempt for its JIT config's slot; a launch whose slot
  // is further off is deferred before it reads GitHub.
  static constexpr Duration kLongestPaceWait{30'000};
  // The class whose runner GitHub refuses, when `cls`'s jobs would launch on it and no probe is
  // due (ClassHealth::Admit; `take` spends a probe that is due); nullopt: admitted.
  std::optional<std::string> RefusedClass(const RunnerClass& cls, bool take);
  void Record(const LaunchOutcome& outcome);

  const ServeConfig& config_;
  LauncherDeps deps_;
  github::RunnerScope scope_;
  CapLedger cap_;
  AssignedJobs assigned_;
  fleet::BootSchedule boots_;  // the boots of this process's launches: when to poll GetMicrovm
  JobStateLedger jobs_;
  Pacer run_pacer_;  // this process's RunMicrovm pace, when the shared one cannot be read
  // The set's paces, shared by its processes through the store (shared_pace.h): RunMicrovm at
  // runMicrovmPerSecond (a token bucket, as its quota), and JIT configs at most
  // jitConfigsPerMinute for each GitHub App in any minute (a sliding window, as GitHub's limit).
  SharedPace run_pace_;
  SharedWindow jit_pace_;
  CapacityRoute capacity_;
};

}  // namespace mvr::runnerset
