// What a run of the simulated world (world.h) is asked to do and what it reports: the scenario's
// size, the faults it turns on, the runner set's configuration knobs the seed drew, and the
// figures and invariant violations of one seed.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/sim_guest.h"
#include "sim/sim_services.h"

namespace mvr::sim {

// Issue 54, item 5 (scaleset_scenarios.cpp): the set's jobs come from its class's runner scale set
// (github.source scaleset): the jobs ask for the class label alone, no webhook reaches the set,
// and a listener actor (ScaleSetSource::Listen) holds the set's session. The scale-set API's
// faults, from the GitHub model (ScaleSetOptions) or played by the world.
struct ScaleSetWorld {
  bool enabled = false;
  double lost_acknowledgements = 0;  // a DELETE of a message answers 204 but the message stays
  Duration message_delay{0};         // a message is visible this long after it is made
  Duration start_timeout{300'000};   // an acquired job no runner started is offered again
  int restarts = 0;                  // `mvr serve` killed (-9) this often, each back after a while
  int takeovers = 0;                 // another listener takes the set's session this often
  // totalAssignedJobs shows this many jobs more than the set holds (ARC #4397), from a time in
  // the arrival window for `phantom_for`.
  int phantom_jobs = 0;
  Duration phantom_for{600'000};
  // Watched as the run goes and at the end: no VM booted for a job after the set recorded
  // another runner taking it, and nothing of the set's is left when it ends.
  bool check = false;
};

struct WebhookFaults {
  double lost = 0;        // never delivered (GitHub does not redeliver on its own)
  double duplicated = 0;  // delivered twice
  double late = 0;        // delivered up to `late_by` late (so reordered)
  Duration late_by{300'000};
  // The handler dies in the middle of a delivery, between any two of its calls: GitHub records a
  // failed delivery and does not redeliver.
  double handler_crashes = 0;
};

// The runner set's configuration knobs that bound its recovery: each seed draws them (as it
// draws faults) within KnobRanges(), so a bug that only one setting exposes is found, and the
// report names them so a failing seed replays with the same. The defaults are the values the
// simulation used before it drew them (and the latency report keeps).
struct ConfigKnobs {
  int janitor_interval_seconds = 60;
  int janitor_strikes = 2;
  int janitor_grace_seconds = 120;
  int stuck_launch_seconds = 120;
  int visibility_timeout_seconds = 180;
  int launch_timeout_seconds = 120;
  int claim_takeover_seconds = 240;
  int defer_seconds = 10;
  int warm_pool_interval_seconds = 30;
};

// One knob: its configuration key, the range a seed draws from and the range the configuration's
// validation accepts (the first within the second), and why the drawn one is narrower.
struct KnobRange {
  const char* key;
  int ConfigKnobs::*field;
  int low, high;
  int valid_low, valid_high;
  const char* narrowed;
};
const std::vector<KnobRange>& KnobRanges();
ConfigKnobs DrawConfigKnobs(uint64_t seed);
// Puts the drawn launch timeout within [low, high] and keeps the claim takeover no shorter than
// it, as the configuration's validation requires (a scenario that moved one alone drew an invalid
// configuration: registration-expiry, seeds 151..200).
void ClampLaunchTimeout(ConfigKnobs& knobs, int low, int high = std::numeric_limits<int>::max());
// "janitor.intervalSeconds=60 janitor.strikes=2 ...", in KnobRanges() order.
std::string DescribeKnobs(const ConfigKnobs& knobs);

struct WorldOptions {
  uint64_t seed = 1;
  std::optional<ConfigKnobs> knobs;  // nullopt: drawn from the seed
  int jobs = 6;
  Duration first_job_after{0};  // the first job is queued this late (a warm pool fills first)
  Duration arrivals{60'000};    // the jobs are queued over this window
  Duration drain{2'700'000};    // then the run goes on this long (the janitor's bound and more)
  int launchers = 3;            // launcher actors taking intents off the queue
  // Messages a launcher takes per receive and then launches one after another (1: mvr's
  // launcher, which works a batch's messages concurrently; 10: a launcher that does not).
  int sequential_batch = 1;
  int max_concurrent_vms = 20;
  int warm_pool_size = 0;
  int hot_pool_size = 0;  // VMs kept suspended with a registered runner (hotPoolSize)
  // The hot pool sized to a start-time target instead (pool_target.h): p95 queued → started in
  // seconds (0: hot_pool_size) and the most members it may ask for.
  int hot_pool_target_seconds = 0;
  int hot_pool_target_max = 20;
  bool has_pool() const {
    return warm_pool_size > 0 || hot_pool_size > 0 || hot_pool_target_seconds > 0;
  }
  // When not empty, the jobs are queued at these times after the start (and `jobs` is their
  // number) instead of spread over `arrivals`.
  std::vector<Duration> arrival_at;
  // Jobs the set counted before the run began (its store's arrival history), at these times
  // relative to the start (negative: before it).
  std::vector<Duration> history_at;
  FaultRates store, queue, microvms, github;
  WebhookFaults webhooks;
  double crashes_per_hour = 0;  // of launchers, the janitor and the sweeper (each replaced)
  double yield_delay_probability = 0;
  Duration max_clock_skew{0};   // each process's clock is off by up to this, either way
  Duration vm_boot{5'000};      // RunMicrovm → RUNNING, the platform's part of seed 001's 6.8 s
  double boot_failure = 0;      // a RunMicrovm whose VM never boots (the MicroVMs model's knob)
  double queue_duplicates = 0;  // a sent message delivered twice (SQS is at-least-once)
  int github_mutations_per_minute = 0;  // GitHub's secondary limit on POST/DELETE (0: none)
  GuestTimings guest;
  Duration runner_listing_lag{0};
  // GitHub's runner listing and GET say busy:false for a runner running a job with this
  // probability, and a DELETE believes it (actions/runner #4422; GithubModel::SetRunnerBusyLies).
  double runner_busy_lies = 0;
  // Issue 30, items 1 and 7 (world_stolen.cpp). GitHub hands a queued job to any idle runner whose
  // labels match, in a random order (GithubModel::SetAssignment "random").
  bool random_assignment = false;
  // Each `completed` delivery is dropped with this probability (actions/runner #4309).
  double completed_webhook_loss = 0;
  // This fraction of the jobs is cancelled while still queued, up to `cancel_within` after it was
  // queued (a cancelled run), if no runner has taken it by then.
  double cancel_queued = 0;
  Duration cancel_within{60'000};
  // Watched as the run goes: a job whose runner went to another job while it waited is
  // in_progress within one launch plus one janitor period of it (StolenBound()).
  bool check_stolen = false;
  // Watched as the run goes: the VM and runner launched for a job that has ended (cancelled while
  // queued, or run elsewhere) are gone within one janitor period of it (EndedJobBound()).
  bool check_ended_jobs = false;
  // Stale runner versions (actions/runner #4392): GitHub's minimum runner version rises to
  // `min_runner_version` at `min_runner_version_at` (from the start; "" = never). The runner each
  // image bakes is in guest.runner_versions. With `fallback_class`, a second class (mvr-large on
  // img-2, no pools) is the first class's fallbackClass.
  std::string min_runner_version;
  Duration min_runner_version_at{0};
  bool fallback_class = false;
  // The Action (`mvr start`/`mvr stop`) on a warm pool found by name: this many runs start over
  // the arrival window with `server-capacity` action_capacity, run one job on their runner and
  // stop; a fraction abandon their lease (a cancelled run) and stop late with the old handle.
  int action_runs = 0;
  bool runner_set = true;  // false: no launchers, janitor or sweeper (the Action alone)
  int action_capacity = 3;
  double action_abandon = 0;
  // A run's start or stop dies between any two of its calls (the runner host lost, the job
  // cancelled hard); later runs must reconcile what it left. The final wave never crashes.
  double action_crashes = 0;
  // Longer than a start (about 35 s with seed 000's 9.9 s boot) and the longest job (90 s), as
  // docs/action.md asks (at 120 s an abandoning run's job outlives its lease: seed 11, where the
  // reconcile now spares the busy runner's VM).
  int64_t action_lease_timeout_seconds = 180;
  // A planted bug (the simulation must find it): the job claim is no longer first-writer-wins
  // (its condition is ignored).
  bool plant_unconditional_claims = false;
  // GitHub refuses the set's PAT (revoked) from `credentials_revoked_at` for `credentials_outage`;
  // then the secret is fixed: a new PAT, in the "file" each process re-reads (0: no outage).
  Duration credentials_revoked_at{0};
  Duration credentials_outage{0};
  // A planted bug: the GitHub client's auth backoff is off, so every call of every actor goes to
  // GitHub while it refuses the credentials (a request storm).
  bool plant_auth_spin = false;
  // The set at organisation scope (issue 30, item 2): the jobs are spread over this many
  // repositories of the organisation (0: the set serves one repository); the set reads the org
  // hook's deliveries and scans the repositories it can see (world_outage.cpp).
  int org_repositories = 0;
  // `mvr serve` killed (-9) at `set_down_at` for `set_down_for`: every launcher, the janitor and
  // the sweeper die and GitHub's deliveries meanwhile fail (nothing listens); then it restarts.
  // With `webhook_only_down`, only the webhook receiver is down (its Lambda function).
  Duration set_down_at{0};
  Duration set_down_for{0};
  bool webhook_only_down = false;
  // GitHub's documented rate limits, the secondary ones included, enforced by the model
  // (`mvr emulate github --rate-limits github`; issue 30, item 4).
  bool github_rate_limits = false;
  // The GitHub Apps the set calls through (github/multi_app.h, `github.apps`): 1, the set's
  // PAT; more, that many Apps, each with its own installation and so its own rate limits.
  int github_apps = 1;
  // A planted bug: the set is blind to GitHub's rate limits: its GitHub client paces nothing and
  // holds nothing back, and a launch refused for a rate limit fails (and dead-letters).
  bool plant_rate_blind = false;
  // Issue 55, item 3 (world_order.cpp). This fraction of the jobs waits for an environment's
  // approval, which comes up to `approval_within` after it was queued (GitHub delivers queued,
  // waiting, then queued again: CloudSnorkel #416).
  double gated_jobs = 0;
  Duration approval_within{120'000};
  // GitHub's GET of a job shows it as it was this long ago (RunsOn #429).
  Duration jobs_api_lag{0};
  // Each delivery is followed by another installation's copy with this probability (RunsOn #509).
  double foreign_deliveries = 0;
  // Watched as the run goes: no runner registered for a job while it waits for its approval or
  // for a job GitHub does not have (another installation's), and no launch committed to a job
  // after the set recorded it completed.
  bool check_order = false;
  // A planted bug: the job's state takes the last delivery to arrive, so a late one undoes it.
  bool plant_undo_job_state = false;
  // The set authenticates as one GitHub App even with github_apps 1 (token-formats): each process
  // signs JWTs and buys installation tokens of `installation_token_format` ("stateless", GitHub's
  // ~520-character tokens since 2026-04, or "classic"), and GitHub answers 404 to a JWT it saw in
  // the same second (terraform-aws-github-runner #5056).
  bool github_app_auth = false;
  std::string installation_token_format = "stateless";
  // A planted bug: App JWTs carry no distinguishing jti (every process draws the same one) and a
  // process's callers each request their own installation token (no single flight).
  bool plant_token_race = false;
  // A launch dies between delivering its runner's config and committing, with this probability
  // per commit (issue 53, item 3: "commit fails after delivery"): the launcher is killed just
  // before its commit's transaction and replaced. Its runner may take a job; the takeover of its
  // claim, the warm-pool sweeper and the janitor must adopt a busy one, never kill its VM.
  double launch_dies_before_commit = 0;
  // A planted bug: what such a launch left is released and retired without asking its runner
  // (the code before item 3: LauncherDeps/PoolSweeperDeps::adopt_dead_launches off).
  bool plant_kill_dead_launches = false;
  // Issue 55, item 1 (expiry_scenarios.cpp): GitHub removes a registration listening without a job
  // this long, and a once-connected one offline this long (GithubModelOptions; 0: never).
  Duration registration_idle_expiry{0};
  Duration offline_registration_expiry{0};
  int hot_pool_max_age_seconds = 0;  // hotPool.maxAgeSeconds (0: the default)
  // Watched as the run goes: every job starts within one launch plus one janitor period of being
  // queued (ExpiryBound()),
  // however the registrations of the hot members it could take expired.
  bool check_expiry = false;
  // A planted bug: the launcher resumes a hot member without reading its registration first, so
  // it serves one whose registration expired.
  bool plant_stale_hot = false;
  // Planted bug `launch-waiting`: the launcher takes GitHub's `waiting` (a job behind an
  // environment's approval) for queued and launches.
  bool plant_launch_waiting = false;
  // Issue 55, item 4 (world_lost.cpp): GitHub fails a job whose runner has made no contact this
  // long (GithubModelOptions::lost_runner_fails_job_after; 0: never). The VMs lost mid-job are
  // guest.lose_vm_mid_job. janitor.rerunLostJobs; watched at the end: a job lost with its VM is
  // re-run at most once, and its re-run (when allowed) completes.
  Duration lost_runner_fails_job_after{0};
  bool rerun_lost_jobs = false;
  bool check_lost = false;
  // Issue 55, item 5: the runner picking up a job wedges with this probability (its worker never
  // reads the job: GithubModelOptions::wedged_runners); janitor.wedgedRunnerSeconds (0: off).
  // Watched as the run goes: a wedged runner's job starts within WedgedBound() of being queued.
  double wedged_runners = 0;
  int wedged_runner_seconds = 0;
  bool check_wedged = false;
  // Issue 56, item 4 (fair_share_scenarios.cpp): when not empty, job i is queued in
  // Repositories()[job_repository[i]] instead of JobRepository's blocks; with check_fair_share,
  // the last job (another repository's, behind a backlog) must start within one launch slot.
  std::vector<int> job_repository;
  bool check_fair_share = false;
  // launcher.fairShare.enabled (false: the code before item 4, for the test that shows the
  // scenario fails without it).
  bool fair_share = true;
  // Each repository's launches register their runners in a runner group of its own, limited to
  // it (launcher.fairShare.repositories[...].runnerGroupId; GitHub's model: group 2 + index):
  // false is the organisation's Default group, where GitHub hands the runner dealt a seat for
  // one repository's job the oldest job of any.
  bool repository_runner_groups = false;
  // Issue 55, item 4's circuit breaker (world_lost.cpp): classes[0].circuitBreaker (0 failures:
  // none), and the class image's first `image_boot_failures` VMs fail while they boot
  // (MicrovmModelOptions::boot_failures_by_image). Watched as the run goes: no VM of the image is
  // launched while the class is paused (but by a launch admitted before the pause) and at most
  // one per half-open probe; the breaker must have opened.
  int breaker_failures = 0;
  int breaker_window_seconds = 600;
  int breaker_pause_seconds = 900;
  int image_boot_failures = 0;
  bool check_breaker = false;
  ScaleSetWorld scale_set;  // issue 54, item 5 (scaleset_scenarios.cpp)
  size_t trace_tail = 200;  // trace steps kept for the report
  bool keep_logs = false;   // the report carries every actor's log lines
};

struct WorldReport {
  std::vector<std::string> violations;
  ConfigKnobs knobs;  // the configuration the seed ran with
  uint64_t trace_hash = 0;
  std::vector<std::string> tail;  // the trace's last steps
  uint64_t steps = 0;
  int jobs = 0;
  int jobs_completed = 0;
  int jobs_cancelled = 0;           // cancelled by the workload while queued (lost-completed)
  int jobs_lost = 0;                // failed with a VM lost mid-job, their re-run checked (vm-lost)
  int action_started = 0;           // runs whose start succeeded
  int action_at_capacity = 0;       // runs refused with the pool's capacity error
  int action_stale_stops = 0;       // late stops of taken-over leases, refused as they must be
  int action_gave_up = 0;           // starts or stops failed by a service that kept failing
  int action_crashed = 0;           // runs that died mid-start or mid-stop (action_crashes)
  int action_runners_left = 0;      // unused runners those runs left for GitHub to remove
  int webhook_handler_crashes = 0;  // deliveries whose handler died (handler_crashes)
  // Seconds from a run's start to its runner connected: on a new member, on a suspended one.
  std::vector<double> action_start_cold, action_start_warm;
  int runners_started = 0;
  std::vector<double> start_seconds;  // queued → a runner took it, per job that started
  // Seed 001's segments, per launch whose runner took its own job: queued → VM running,
  // → the runner's first log line, → connected, → the job begins.
  std::vector<double> to_vm_running, to_first_log, to_connected, to_job;
  // Every VM's billed time over the run (with a job, without one, suspended), and of that the
  // pool members' parked at the end, ready for the next jobs (SimGuest's reserve).
  runnerset::VmUsage vm_usage;
  runnerset::VmUsage reserve_usage;
  std::vector<double> job_seconds;  // how long each job that finished ran on its runner
  size_t microvms_calls = 0;
  size_t github_calls = 0;
  // The same by operation (SimHttpClient::by_operation), for the scale report's breakdown.
  std::map<std::string, size_t> microvms_operations, github_operations;
  // check_fair_share: the last job's wait from the first seat freed after it was queued to its
  // start (-1: not checked), and the backlog's jobs that started after it was queued and before
  // it.
  double fair_share_wait_seconds = -1;
  int fair_share_overtaken = 0;
  // Issue 56's scale report: the set's calls to DynamoDB and SQS, and its Lambda functions'
  // invocations and seconds (virtual) by function: webhook, launcher, janitor, warm-pool.
  StoreCalls store_calls;
  size_t queue_calls = 0;
  struct LambdaUse {
    int64_t invocations = 0;
    double seconds = 0;
  };
  std::map<std::string, LambdaUse> lambda;
  std::map<std::string, int> faults;       // drawn faults by operation and kind
  std::map<std::string, int64_t> janitor;  // the janitor's counters over the run (non-zero ones)
  std::vector<std::string> logs;           // with keep_logs: every log line, by process
  // With github_rate_limits: first job queued -> last job completed (virtual seconds), the
  // launches that failed and those deferred for a rate limit, GitHub's 403/429 answers by limit,
  // and the most JIT configs GitHub admitted within a minute and within an hour.
  bool rate_limited = false;
  double burst_seconds = 0;
  int64_t failed_launches = 0;       // for any reason (retried from the queue)
  int64_t failed_other_intents = 0;  // terminate and taken intents that failed (retried)
  int64_t rate_limit_failures = 0;   // for a rate limit: none may
  int64_t rate_deferrals = 0;
  std::map<std::string, int64_t> github_rate_refusals;
  int content_minute_peak = 0, content_hour_peak = 0;
  // The GitHub Apps the set registered through; first job queued -> the last JIT config GitHub
  // admitted; and the soonest GitHub's content limits let that many JIT configs through that
  // many Apps (ContentBoundSeconds): how near the set came to the binding limit.
  int github_apps = 1;
  double jit_seconds = 0;
  double jit_bound_seconds = 0;
};

// The soonest the last of the JIT configs wanted at `wanted_at` (seconds, ascending: when each
// job was queued) can be admitted, dealt in turn to `apps` Apps, each allowed `per_minute` in any
// minute and `per_hour` in any hour (sliding windows), none before its job. With GitHub's 80 and
// 500, 1,000 wanted at once take 66 minutes through one App (the hour binds), 4 through three
// (the minute binds).
double ContentBoundSeconds(const std::vector<double>& wanted_at, int apps, int per_minute = 80,
                           int per_hour = 500);

}  // namespace mvr::sim
