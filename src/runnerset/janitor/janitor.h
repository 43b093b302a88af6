// Janitor: the runner set's scheduled sweep (001, duty 6 and "Correctness guards"). One sweep:
//  inventory  the set's VMs (by its images), its runners (by name prefix), its table rows;
//  mapped     a RUNNING VM whose runner GitHub has lost track of ("absent") or whose runner never
//             took a job ("idle") gets a strike per sweep; at `strikes` it is reaped, but only
//             after a fresh per-runner read agrees (busy or back: strikes cleared, left alone);
//             an idle runner is deregistered first (GitHub refuses a busy one), then its VM goes;
//  unmapped   a RUNNING VM no row or live claim names gets strikes in an orphan-vm- row; at
//             `strikes` a strongly consistent re-scan of the table taken just before decides the
//             kill; an idle runner no row or live claim names is deregistered the same way (after
//             a fresh read);
//  stale      mapping rows whose VM is gone (a fresh GetMicrovm agrees) and orphan rows of VMs
//             that are gone or mapped are removed;
//  images     image versions of the classes' images beyond the active ones, the pinned ones,
//             those in use and the newest `keepImageVersions` are deleted;
//  discover   at organisation scope, the repositories whose queued runs recover also asks:
//             every repository the set can see, at start-up, after GitHub's record of the
//             webhook's deliveries shows a failed one, and every `scanEverySweeps` sweeps
//             (janitor_discover.cpp);
//  recover    jobs still queued on GitHub, older than `stuckLaunchSeconds`, that never got their
//             VM, or whose VM is gone or whose runner took another job, are put on the job queue
//             again (recoverStuckLaunches).
// Only RUNNING VMs are ever terminated (a suspended VM is listed and left alone); a pool member's
// VM (RUNNING while it is pre-booted) is never an orphan, and a hot member's runner (offline while
// its VM is suspended: parked, not lost) never gets a strike: the pool sweeper owns both.
// Each phase and each item is isolated: a failure is counted and the sweep goes on. Thread-safety:
// Sweep from one thread at a time; LastSweep from any.
#pragma once

#include <array>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "aws/microvms/microvms.h"
#include "base/retry.h"
#include "base/seam.h"
#include "fleet/control_delivery.h"
#include "github/github.h"
#include "http/client.h"
#include "queue/queue.h"
#include "runnerset/classes/class_health.h"
#include "runnerset/classes/image_runner.h"
#include "runnerset/config/config.h"
#include "runnerset/janitor/janitor_verdict.h"
#include "runnerset/lifecycle/lost_job.h"
#include "runnerset/metrics/metrics.h"
#include "runnerset/pools/warm_pool_table.h"
#include "runnerset/table/runner_table.h"

namespace mvr::runnerset {

// The janitor's reads of the inventory and of the evidence a runner runs a job are retried a
// few times (throttling, 5xx): one failed listing otherwise costs a whole phase a sweep, and
// under a steady error rate strikes take several periods longer to reach their limit (found by
// the simulation: docs/simulation.md, api-faults seeds 15 and 20).
inline const RetryPolicy kJanitorReadRetry{4, Duration(200), Duration(5'000), Duration(30'000)};
// Queued runs whose jobs one sweep's stuck-launch recovery reads per repository (a GET each).
inline constexpr int kRecoverRunsPerSweep = 100;
// How long the janitor waits for a supervisor's status before it goes by the other evidence.
inline constexpr Duration kSupervisorStatusTime{10'000};

enum class Swept {
  kVmsListed,
  kRunnersListed,
  kRowsListed,
  kStrikesAdded,
  kStrikesCleared,
  kBusySpared,
  kRunnersRemoved,
  kVmsTerminated,
  kOrphansTerminated,
  kOrphansSpared,
  kRowsRemoved,
  kImageVersionsDeleted,
  kLaunchesRecovered,
  kErrors,
  kDeliveriesFailed,     // failed `queued` deliveries found in GitHub's record (discovery)
  kRepositoriesScanned,  // repositories whose queued runs discovery added to the recovery
};
inline constexpr int kSweptCount = 16;
const char* SweptName(Swept counter);  // "vms_terminated" ...

struct SweepReport {
  std::array<int64_t, kSweptCount> counts{};
  std::vector<std::string> errors;  // the first few, for logs and /status
  TimePoint started{};
  TimePoint finished{};
  // Skipped to keep GitHub's hourly budget for launches (PacedByBudget): nothing was read.
  bool paced = false;

  int64_t Get(Swept c) const { return counts[static_cast<int>(c)]; }
  void Add(Swept c, int64_t n = 1) { counts[static_cast<int>(c)] += n; }
};

struct JanitorDeps {
  Seam seam;
  aws::MicrovmService& microvms;
  github::GitHub& github;
  RunnerTable& table;
  queue::Queue& queue;  // recovered launches go here
  Metrics& metrics;
  WarmPoolTable* pool = nullptr;  // warm-pool members are never orphans; optional
  // The VMs' ingress, to ask a supervisor whether its runner runs a job before its VM is
  // terminated (the evidence beside the jobs API); optional.
  http::HttpClient* ingress = nullptr;
  // What GitHub makes of each class's runner: learnt from the runners of launches, and holding
  // the recovery of a class GitHub refuses (class_health.h); optional.
  ClassHealth* health = nullptr;
  // The runner of a launch that died before its commit, found running a job, is adopted
  // (janitor_adopt.cpp). false only for the simulation's planted bug `kill-dead-launches`.
  bool adopt_dead_launches = true;
};

class Janitor {
 public:
  Janitor(const ServeConfig& config, JanitorDeps deps);

  // One sweep: every phase, every item; counters returned, logged and added to the metrics.
  SweepReport Sweep();
  std::optional<SweepReport> LastSweep() const;

 private:
  // What one sweep starts from.
  struct Inventory {
    std::map<std::string, aws::MicrovmSummary> vms;  // by id; every state the listing shows
    bool vms_ok = false;
    std::map<std::string, github::Runner> runners;  // by name, the set's prefix only
    bool runners_ok = false;
    std::vector<MappingRow> rows;
    std::vector<Claim> claims;
    std::vector<OrphanRow> orphans;
    std::set<std::string> pool_vms;      // VMs of pool member rows (the sweeper's to manage)
    std::set<std::string> pool_runners;  // runners of hot member rows (parked, not lost)
    bool rows_ok = false;
    // Classes with a job queued, listed on first need (AJobOfItsClassWaits).
    mutable std::optional<std::set<std::string>> waiting_classes;
    // The jobs in progress of each repository and when they were listed (RunsAJob).
    struct JobsListed {
      TimePoint at;
      std::vector<github::Job> jobs;
    };
    mutable std::map<std::string, JobsListed> in_progress;
    // The queued jobs of each repository, as the sweep listed them (QueuedJobsOf).
    struct QueuedListed {
      int max_runs = 0;  // the oldest runs read, at most
      int unread = 0;    // runs left unread past max_runs
      std::vector<github::Job> jobs;
    };
    mutable std::map<std::string, QueuedListed> queued;
  };
  Inventory TakeInventory(SweepReport& report);
  void ReapMapped(const Inventory& inv, SweepReport& report);
  void ReapMappedOne(const Inventory& inv, const MappingRow& row, SweepReport& report);
  // A row whose VM the listing does not show live: removed once a fresh read agrees.
  void RemoveIfVmGone(const MappingRow& row, SweepReport& report);
  // The mapped VM's verdict (janitor_verdict.h) carried out: strikes, a removal, a termination.
  void CarryOutMapped(const MappedVerdict& verdict, const MappingRow& row,
                      const std::string& suspicion, int strikes, SweepReport& report);
  // Terminates a stranded mapped VM and deletes its row.
  void EndMappedVm(const MappedVerdict& verdict, const MappingRow& row, SweepReport& report);
  // A fresh read of a suspect row's runner (a failure other than NotFound is reported).
  FreshRunner FreshRead(const MappingRow& row, SweepReport& report);
  // Issue 55, item 4 (janitor_lost.cpp): the job of a row whose VM is gone, when GitHub completed
  // it after the VM's end (lost with it), is re-run once when janitor.rerunLostJobs allows
  // (lifecycle/lost_job.h). False: keep the row and look again next sweep.
  bool SettleLostJob(const MappingRow& row, const aws::Microvm* vm, SweepReport& report);
  // A VM of the row's class was lost mid-job: its circuit breaker counts it.
  void NoteLostVm(const MappingRow& row);
  // The job the row's runner ran: the row's own, or the one its claim records it took.
  LostJobRef JobRanBy(const MappingRow& row);
  // Issue 55, item 5 (janitor_wedged.cpp): rows whose runner is wedged (lifecycle/wedged_runner.h)
  // are ended, and their job launched again while it is queued; they leave inv.rows.
  void EndWedged(Inventory& inv, SweepReport& report);
  bool EndWedgedOne(Inventory& inv, const MappingRow& row, SweepReport& report);
  // GET /v1/status of the VM's supervisor (NotFound: no ingress or no endpoint).
  Result<fleet::SupervisorStatus> ReadSupervisor(const std::string& microvm_id);
  void ReapUnmapped(const Inventory& inv, SweepReport& report);
  // Idle runners with the set's prefix that no row or live claim names; `struck` collects the
  // orphan-row keys struck this sweep.
  // An orphan's strike (row `key`); at the limit, the consistent re-scan of rows and claims
  // taken just before acting on it. nullopt: not yet at the limit, or an error (counted).
  struct Rescan {
    std::vector<MappingRow> rows;
    std::vector<Claim> claims;
    std::set<std::string> pool_vms;
    std::set<std::string> pool_runners;
  };
  std::optional<Rescan> StrikeThenRescan(const std::string& key, const std::string& what,
                                         SweepReport& report);
  // One orphan VM or registration (janitor_orphans.cpp): its verdict (janitor_verdict.h)
  // gathered and carried out; `struck` collects the orphan rows this sweep struck.
  void ReapOrphanVm(const Inventory& inv, const std::string& microvm_id, OrphanVmEvidence& evidence,
                    SweepReport& report, std::set<std::string>& struck);
  void TerminateOrphanVm(const std::string& microvm_id, SweepReport& report,
                         std::set<std::string>& struck);
  void ReapOrphanRunner(const Inventory& inv, const github::Runner& runner,
                        OrphanRunnerEvidence& evidence, SweepReport& report,
                        std::set<std::string>& struck);
  // Whether the re-scan shows a row, claim (in flight) or pool member that owns `runner`.
  bool OwnedOnRescan(const Rescan& rescan, const github::Runner& runner) const;
  // Deletes the orphan row of runner `name` (its strikes), and forgets it was struck.
  void ForgetOrphan(const std::string& key, const std::string& runner_name, SweepReport& report,
                    std::set<std::string>& struck);
  void ReapUnmappedRunners(const Inventory& inv, SweepReport& report,
                           std::set<std::string>& struck);
  // An unmapped RUNNING VM that the claim of a launch that died before its commit names
  // (janitor_adopt.cpp, issue 53, item 3): when GitHub's listing, the jobs API or its supervisor
  // says its runner runs a job, that runner is adopted (the claim committed with its mapping row),
  // and the VM is then the mapped path's. True when it was adopted (or is being: not an orphan).
  bool AdoptDeadLaunch(const Inventory& inv, const std::string& microvm_id, SweepReport& report);
  // Every VM id a mapping row, a claim whose launch may still be working, or a warm-pool member
  // row names.
  std::set<std::string> KnownVms(const std::vector<MappingRow>& rows,
                                 const std::vector<Claim>& claims,
                                 const std::set<std::string>& pool_vms) const;
  // The VM ids of the pool member rows and the runner names of the hot ones (none without a
  // pool table).
  struct PoolNames {
    std::set<std::string> vms;
    std::set<std::string> runners;
  };
  Result<PoolNames> ScanPool();
  void PruneImageVersions(const Inventory& inv, SweepReport& report);
  // `discovered`: the repositories DiscoverRepositories adds to those of rows and claims.
  // The jobs whose launch intents wait for a seat of the cap (the fair share's waiting room),
  // "<repository>#<job id>": recovery leaves them be. Each is due back at its turn; another
  // intent would only wait too, and a sweep after another a backlog's duplicates would outnumber
  // its jobs.
  std::set<std::string> WaitingForASeat();
  void RecoverStuckLaunches(const Inventory& inv, const std::set<std::string>& discovered,
                            SweepReport& report);
  // The runner versions GitHub accepts: each launch's runner listed online or busy.
  void LearnAcceptedRunners(const Inventory& inv);
  // A launch whose VM is gone while its job still waits, and whose runner GitHub lists with a
  // version but offline: that runner connected and was refused (or its VM was lost just then).
  void NoteRefusalSuspect(const Inventory& inv, const Claim& claim, const RunnerClass& cls);
  // Whether a queued job of `cls` waits for its class to be healthy again instead of being
  // launched (one probe per class a sweep goes through; `probing` collects them).
  // One job GitHub lists as queued (janitor_recover.cpp): its verdict (DecideStuckJob) gathered
  // and carried out; `claim` its launch's claim, if any.
  // `waiting_for_seat`: its launch intent is in the fair share's waiting room (WaitingForASeat).
  void RecoverStuckJob(const Inventory& inv, const std::string& repository, const github::Job& job,
                       const Claim* claim, bool waiting_for_seat, TimePoint now,
                       std::set<std::string>& probing, SweepReport& report);
  // A launch intent for the job on the queue.
  void QueueRecovery(const std::string& repository, const github::Job& job, const RunnerClass& cls,
                     TimePoint now, SweepReport& report);
  bool HeldByRefusal(const RunnerClass& cls, std::set<std::string>& probing);
  // The class is paused by its circuit breaker, or half-open with its probe under way, and names
  // no fallbackClass: the stuck-launch recovery launches nothing for it meanwhile.
  bool PausedByBreaker(const RunnerClass& cls);
  // Whether GitHub will keep handing jobs to the runner each class's active image version carries
  // (janitor_runner_window.cpp): the version `mvr image build` recorded, against GitHub's minimum
  // and the runner's latest release, read at most every kRunnerWindowEvery. Warns (log; class
  // health: metric and status page) from kRunnerUpdateNotice before GitHub stops.
  void WatchRunnerWindow(SweepReport& report);
  struct RunnerWindow {
    std::optional<TimePoint> read_at;                // when the release and images were read
    std::optional<github::RunnerRelease> latest;     // the runner's latest release, when known
    std::map<std::string, ClassImageRunner> images;  // by class label, those that record one
  };
  RunnerWindow runner_window_;  // Sweep's alone (one thread at a time)

  // Work announced while the set was down or whose delivery was lost (janitor_discover.cpp): the
  // repositories to scan this sweep (none when no scan is due, and at repository scope, whose
  // one repository recover asks every sweep anyway).
  std::set<std::string> DiscoverRepositories(SweepReport& report);
  // Reads GitHub's record of the webhook's deliveries since the last read; true when a `queued`
  // delivery failed (or the record could not be read, so that one may have).
  bool DeliveriesFailedSinceLastRead(SweepReport& report);
  struct Discovery {
    int sweeps = 0;
    TimePoint scan_until{};               // scan every sweep until then (start-up, a failure)
    std::optional<TimePoint> read_until;  // deliveries read up to then
    int64_t newest_seen = 0;              // the newest delivery id read
  };
  Discovery discovery_;  // Sweep's alone (one thread at a time)

  // Whether the jobs API shows `runner_name` running a job (janitor_evidence.cpp): a runner's
  // `busy` flag can say false while it runs one (actions/runner #4422). The in-progress jobs of
  // the set's repositories are listed just before acting. An error means "cannot tell".
  Result<bool> RunsAJob(const Inventory& inv, const std::string& runner_name);
  // Whether the jobs API says the job `row` was launched for has completed (janitor_evidence.cpp):
  // its runner will get no job of its own, and its `completed` webhook may never come. kNo when
  // it cannot tell; kRecently when it ran on the row's runner and its `completed` webhook, whose
  // terminate intent ends the VM, may still be on its way (kEndedWebhookWait); kLongAgo when it
  // completed kVmWordLapse ago or more: the VM's own word (its supervisor's /v1/status, which the
  // job's code could forge) no longer keeps it, only the jobs API can (issue 53, item 14).
  using JobEnded = OwnJob;
  JobEnded OwnJobEnded(const MappingRow& row);
  // What a VM about to be reaped is doing, by a fresh read: kEnding when it is no longer RUNNING
  // (a terminate intent or its own exit got there first: asking its supervisor would wait out
  // kSupervisorStatusTime for an endpoint that is gone), kRunsAJob when its supervisor says its
  // runner has taken a job (GET /v1/status on the control port), else kIdle (also when there is
  // no ingress or the status cannot be read: the other evidence stands).
  enum class VmWork { kIdle, kRunsAJob, kEnding };
  VmWork SupervisorRunsAJob(const std::string& microvm_id);
  // The jobs API first, then the supervisor unless `vm_word_counts` is false (logged when one says
  // the runner works); an error of the jobs API is "cannot tell".
  Result<VmWork> WorksOnAJob(const Inventory& inv, const MappingRow& row,
                             const std::string& listed_as, bool vm_word_counts);
  // Whether a job with the class's label is queued in a repository the set serves: an idle
  // runner whose own job ended then is a spare that may serve it (a job whose runner another job
  // took waits for exactly such a runner), not waste.
  bool AJobOfItsClassWaits(const Inventory& inv, const std::string& class_label);
  // The jobs GitHub lists as queued in `repository`'s `max_runs` oldest queued runs, listed once a
  // sweep (janitor_queued.cpp): the spare-runner question and the stuck-launch recovery both read
  // them, and each listing costs every page of the queued runs and a GET per run read (a backlog
  // of 500 runs: five pages of ~600 KB, twice a sweep). The first listing of a sweep reads as
  // many runs as recovery will (RecoveryLists), so that recovery's is answered from it. A failed
  // listing is not kept. `retry`: with kJanitorReadRetry. `unread`: runs past those read.
  Result<std::vector<github::Job>> QueuedJobsOf(const Inventory& inv, const std::string& repository,
                                                int max_runs, bool retry, int* unread);
  // Whether RecoverStuckLaunches will list the queued jobs this sweep (below the cap, and no rate
  // limit hold over less than stuckLaunchSeconds ago); `held` tells the hold was the reason.
  bool RecoveryLists(const Inventory& inv, bool* held = nullptr);

  // True when the VM has run at least graceSeconds (an unknown start counts as young).
  bool OldEnough(const aws::MicrovmSummary& vm) const;
  Status TerminateVm(const std::string& microvm_id);
  void Error(SweepReport& report, const std::string& what, const Status& status);
  // The sweep as the last one (LastSweep) and in the store's sweep history (the status page).
  void Keep(const SweepReport& report);

  const ServeConfig& config_;
  JanitorDeps deps_;
  github::RunnerScope scope_;
  // Whether this sweep should be skipped to spread what is left of GitHub's hourly budget, above
  // a fifth kept for launches, over the time until it resets (janitor_pace.cpp).
  bool PacedByBudget();
  // The cost of the last sweep in GitHub's budget and when it ran, for PacedByBudget.
  int64_t last_cost_ = 0;
  std::optional<TimePoint> last_swept_;
  bool pacing_ = false;  // for one log line per change

  mutable std::mutex mu_;
  std::optional<SweepReport> last_;
};

}  // namespace mvr::runnerset
