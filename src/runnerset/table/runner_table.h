// RunnerTable: the runner set's rows in the store (001, "State: the runner table").
//   job#<repo>#<jobId> / claim   the launch idempotency claim. Created by a conditional write
//                                that succeeds only when none exists; an attempt that died can be
//                                taken over once the claim is old enough; every later write is
//                                conditional on the attempt's random attemptToken, so exactly one
//                                attempt's write succeeds. It remembers the attempt's runner and
//                                VM while the launch is in flight, so a takeover can remove them.
//   <runnerName> / runner        the mapping row: runner → MicroVM, plus the job's timeline and
//                                the janitor's strike memory for it.
//   orphan-vm-<id> / orphan      the janitor's strike memory for a VM no mapping row names.
//   binding#<runnerName> / binding
//                                a scale set's word on what the runner runs (issue 54, item 3):
//                                JobStarted bound it to a job, JobCompleted ended it.
//   github#runner-versions / <n>:<class>#<imageVersion>
//                                what GitHub made of a class's image version's runner
//                                (ClassHealth).
// A committed launch writes its mapping row and stamps the claim's VM id in ONE transaction.
// Rows carry a TTL.
// Thread-safety: safe to share; the store is.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/seam.h"
#include "store/store.h"

namespace mvr::runnerset {

// Times of a job's launch, epoch milliseconds (0 = not reached).
struct LaunchTimes {
  int64_t received_ms = 0;   // the webhook reached mvr serve
  int64_t claimed_ms = 0;    // the claim was won
  int64_t running_ms = 0;    // the VM was RUNNING
  int64_t delivered_ms = 0;  // the supervisor accepted the runner's config
  // A pool member's (warm, hot): when it was launched and when it was parked; from its launch to
  // its park it ran without a job, from its park to `running_ms` it was suspended. 0 when cold.
  int64_t member_created_ms = 0;
  int64_t member_parked_ms = 0;
};

struct Claim {
  std::string attempt_token;
  int64_t claimed_ms = 0;
  std::string microvm_id;  // set by the committing transaction: the launch is done
  // What the attempt holding the claim has created so far (for a takeover's cleanup).
  int64_t pending_runner_id = 0;
  std::string pending_microvm_id;
  std::string repository;
  int64_t job_id = 0;
  std::string runner_name;  // set by the committing transaction
  // The job the launch's runner took when that was another job (RecordTook): the chain a job
  // whose runner another job took follows to the launch that serves it.
  std::string took_runner;
  std::string took_repository;
  int64_t took_job_id = 0;
  // The job the committed launch serves when it is not this one (a late queued whose runner's
  // chain left another job waiting: Launcher::StillNeeded); set by the committing transaction.
  std::string serves_repository;
  int64_t serves_job_id = 0;
};

// A job, by repository and id.
struct JobRef {
  std::string repository;
  int64_t job_id = 0;
};

struct MappingRow {
  std::string runner_name;
  int64_t runner_id = 0;
  std::string microvm_id;
  std::string repository;
  int64_t job_id = 0;
  std::string class_label;
  std::string image_version;  // the VM's, as RunMicrovm or the pool member reported it
  std::string path;           // how the job got its VM: "cold", "warm" or "hot" ("" = unknown)
  LaunchTimes times;
  // The janitor's strike memory: sweeps in a row the VM looked stranded, and why ("absent": no
  // runner in GitHub's listing; "idle": a runner that never took a job).
  int strikes = 0;
  std::string suspicion;
};

// What GitHub made of the runner of one class's image version (ClassHealth, class_health.h).
struct RunnerVerdictRow {
  std::string label;
  std::string image_version;
  std::string runner_version;
  bool refused = false;
  int64_t since_ms = 0;               // refused since (epoch ms)
  int64_t updated_ms = 0;             // the newest evidence
  std::vector<std::string> suspects;  // runners that looked refused since one was accepted
  int64_t probe_ms = 0;               // the last launch let through while it was refused
};

// One janitor sweep, as the status page shows it: its counters by name (SweptName), when it
// started, how long it took, the first few errors, and whether it was skipped to save GitHub's
// budget.
struct SweepRecord {
  int64_t started_ms = 0;
  int64_t duration_ms = 0;
  bool paced = false;
  std::vector<std::pair<std::string, int64_t>> counters;  // only the non-zero ones
  std::vector<std::string> errors;
};

// One job's way from its webhook to its end, kept after the launch's rows are gone so that the
// status page shows the last jobs from any process of the set (runner_table_history.cpp). A launch
// that failed is a record too, with `failure` saying why.
struct JobRecord {
  std::string repository;
  int64_t job_id = 0;
  std::string job_name;  // GitHub's; attacker-controlled text, escaped wherever it is shown
  std::string class_label;
  std::string path;  // "cold", "warm", "hot" ("" = unknown)
  std::string runner_name;
  std::string image_version;  // the version of the VM that ran the job ("" = not known)
  LaunchTimes times;
  int64_t runner_online_ms = 0;  // 0 = not seen (only mvr serve watches runners come online)
  int64_t started_ms = 0;
  int64_t ended_ms = 0;  // the job completed, or the launch failed
  // The life of the VM whose runner ran the job, whichever job it was launched for (the cost
  // table's): RUNNING (or resumed for this job), a pool member's launch and park, and its end
  // by the job's terminate intent. 0 where not known.
  struct VmTimes {
    int64_t running_ms = 0;
    int64_t member_created_ms = 0;
    int64_t member_parked_ms = 0;
    int64_t ended_ms = 0;
  } vm;
  std::string conclusion;  // GitHub's ("success", "failure" ...), "" when none
  std::string failure;     // why the launch failed; "" when it did not
};

// GitHub's binding of a job to the runner that runs it, from a scale set's JobStarted (the
// webhook source has none: GitHub's REST API only ever implies it). Ended by JobCompleted.
struct JobBinding {
  std::string runner_name;
  int64_t runner_id = 0;
  std::string repository;
  int64_t job_id = 0;  // the runnerRequestId
  int64_t started_ms = 0;
  int64_t ended_ms = 0;  // 0 while the job runs
  bool running() const { return ended_ms == 0; }
};

// An orphan row: strikes against a running VM that no mapping row or claim names.
struct OrphanRow {
  std::string microvm_id;
  int strikes = 0;
};

// Row decoding, shared by the table's files.
Claim ClaimFromItem(const store::Item& item);
MappingRow MappingFromItem(const store::Item& item);
// A launch's times as the mapping row and the job history keep them.
LaunchTimes TimesFromItem(const store::Item& item);
void PutTimes(store::Attributes& attributes, const LaunchTimes& times);

class RunnerTable {
 public:
  struct Options {
    Duration takeover_after{600'000};  // a claim this old without a VM may be taken over
    Duration claim_ttl{48 * 3600'000LL};
    Duration mapping_ttl{48 * 3600'000LL};
    Duration history_ttl{7 * 24 * 3600'000LL};
  };
  RunnerTable(store::Store& store, const Seam& seam, Options options)
      : store_(store), seam_(seam), options_(options) {}

  // The store the table lives in (the cap's seats share it: cap_ledger.h).
  store::Store& store() const { return store_; }

  static store::Key ClaimKey(const std::string& repository, int64_t job_id);
  // How logs and the timeline name a job: "<owner/name>#<job id>".
  static std::string JobKey(const std::string& repository, int64_t job_id);
  static store::Key MappingKey(const std::string& runner_name);

  enum class ClaimOutcome {
    kWon,       // this attempt holds the claim (attempt_token)
    kLaunched,  // the job already has its VM: a duplicate
    kBusy,      // another attempt holds a fresh claim
  };
  struct ClaimResult {
    ClaimOutcome outcome = ClaimOutcome::kBusy;
    std::string attempt_token;        // kWon
    std::optional<Claim> taken_over;  // kWon by takeover: the previous attempt's claim
    std::string microvm_id;           // kLaunched
    int64_t held_since_ms = 0;        // kBusy: when the claim that holds the job was made
  };
  // Claims the job: creates the claim, or takes over one older than takeover_after.
  Result<ClaimResult> ClaimJob(const std::string& repository, int64_t job_id);

  // Records the attempt's runner / VM on the claim (conditional on the token).
  Status RecordRunner(const store::Key& claim, const std::string& token, int64_t runner_id);
  Status RecordMicrovm(const store::Key& claim, const std::string& token,
                       const std::string& microvm_id);

  // The mapping row and the claim's VM id, together. Conflict when the token no longer holds the
  // claim (a takeover won) or the runner already has a row.
  // `also` joins the transaction (a warm launch deletes its pool member row; a launch's fence on
  // the job state, job_state.h): a condition check of `also` that fails is Conflict with error
  // type kCheckFailed. `serves`: the other job the launch serves, recorded on the claim.
  static constexpr char kCheckFailed[] = "ConditionCheckFailed";
  Status Commit(const store::Key& claim, const std::string& token, const MappingRow& row,
                const std::vector<store::WriteOp>& also = {},
                const std::optional<JobRef>& serves = std::nullopt);

  // Deletes the claim if this attempt still holds it (a lost claim is not an error).
  Status Release(const store::Key& claim, const std::string& token);
  // A mapping row for a runner no job's launch registered (a hot-pool runner GitHub handed a job
  // before its member was claimed), with `also` in the same transaction. Conflict when the
  // runner already has a row.
  Status Adopt(const MappingRow& row, const std::vector<store::WriteOp>& also);

  Result<std::optional<MappingRow>> GetMapping(const std::string& runner_name);
  Status DeleteMapping(const std::string& runner_name, const std::string& microvm_id);

  // --- the janitor's reads and strike memory (runner_table_sweep.cpp) ---
  // Every mapping row whose runner name starts with `prefix`, and every claim. Strongly
  // consistent where the backend allows (DynamoDB: ConsistentRead).
  Result<std::vector<MappingRow>> ScanMappings(const std::string& prefix);
  Result<std::vector<Claim>> ScanClaims();
  Result<std::vector<OrphanRow>> ScanOrphans();
  // Records strikes on a mapping row that still names `microvm_id` (0 clears them).
  Status SetStrikes(const std::string& runner_name, const std::string& microvm_id, int strikes,
                    const std::string& suspicion);
  // One more strike against an unmapped VM; returns the count.
  Result<int> AddOrphanStrike(const std::string& microvm_id);
  Status DeleteOrphan(const std::string& microvm_id);
  // Deletes a committed claim whose VM is gone, if `token` still holds it, so the job can be
  // launched again.
  Status ReleaseCommitted(const std::string& repository, int64_t job_id, const std::string& token);
  // Records on the claim of `job_id` that `runner_name`, launched for it, took another job (a
  // claim since released or never written records nothing).
  Status RecordTook(const std::string& repository, int64_t job_id, const std::string& runner_name,
                    const std::string& took_repository, int64_t took_job_id);
  // The job's claim, if any (strongly consistent where the backend allows).
  Result<std::optional<Claim>> GetClaim(const std::string& repository, int64_t job_id);

  // GitHub's rate limits, as every process of the set sees them (runner_table_rate_hold.cpp): a
  // launcher that GitHub (or its own budget) told to wait records until when, so the other
  // launchers wait without asking GitHub, and the janitor does not take the launches waiting on
  // the queue for lost ones. Keeps the later of the recorded time and `until`.
  Status HoldForRateLimit(TimePoint until);
  // Until when launches are held; nullopt when none is recorded or it passed more than `grace`
  // ago.
  Result<std::optional<TimePoint>> RateLimitHold(Duration grace = Duration(0));

  // What GitHub made of the runners of the classes' image versions (runner_table_health.cpp).
  Status PutRunnerVerdict(const RunnerVerdictRow& row);
  Result<std::vector<RunnerVerdictRow>> RunnerVerdicts();

  // The last jobs that ended and the janitor's last sweeps, newest first, in two partitions whose
  // sort keys count down with time (runner_table_history.cpp). Records expire after
  // Options::history_ttl.
  // The scale set's binding of a job to a runner (runner_table_binding.cpp): JobStarted records
  // it (a redelivered JobStarted leaves an ended binding ended), JobCompleted ends it (recording
  // it ended when its start was never seen).
  Status RecordJobStarted(const JobBinding& binding);
  Status RecordJobEnded(const JobBinding& binding);
  Result<std::optional<JobBinding>> GetJobBinding(const std::string& runner_name);
  // The runner GitHub started the set's job on (RecordJobStarted writes it beside the claim,
  // `job#<repo>#<runnerRequestId>` / `started`); nullopt while none did.
  Result<std::optional<std::string>> SetJobStartedOn(const std::string& repository, int64_t job_id);
  Status PutJobRecord(const JobRecord& record);
  Result<std::vector<JobRecord>> RecentJobRecords(int limit);
  Status PutSweep(const SweepRecord& sweep);
  Result<std::vector<SweepRecord>> RecentSweeps(int limit);

 private:
  store::Item MappingItem(const MappingRow& row) const;
  int64_t NowMs() const;
  int64_t Ttl(Duration ttl) const;

  store::Store& store_;
  Seam seam_;
  Options options_;
};

}  // namespace mvr::runnerset
