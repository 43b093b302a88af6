// sim::World: the runner set and the Action in simulation. The real webhook handler
// (AnswerWebhook), launchers (Launcher through HandleMessage, as each `launcher` Lambda invocation
// or `mvr serve` worker runs it), the janitor, the warm-pool sweeper and runs of the Action are
// actors, each process with its own seam, clients and tables, against the MicroVMs and GitHub
// models (in-process services), the in-memory store and queue, and SimGuest in every VM, all in
// virtual time under one seeded Scheduler. Faults come from the seed (world_options.h); Run
// checks the invariants of docs/simulation.md.
//
// The class is split by concern: world.cpp wires it, world_actors.cpp holds the runner set's and
// the platform's actors, world_workloads.cpp the jobs and the Action's runs, and
// world_invariants.cpp the checks.
// Thread-safety: one World per run, driven by one Run; RunWorld may run on many threads at once
// (each run owns its world).
#pragma once

#include <nlohmann/json.hpp>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "aws/microvms/microvms_client.h"
#include "aws/signing/credentials.h"
#include "emulate/github/inprocess_github.h"
#include "emulate/microvms/front/inprocess_microvms.h"
#include "github/github_client.h"
#include "github/multi_app.h"
#include "github/scaleset_client.h"
#include "queue/memory_queue.h"
#include "runnerset/classes/class_health.h"
#include "runnerset/config/config.h"
#include "runnerset/intake/webhook_router.h"
#include "runnerset/metrics/metrics.h"
#include "runnerset/pools/warm_pool_table.h"
#include "runnerset/table/runner_table.h"
#include "sim/scheduler.h"
#include "sim/seams.h"
#include "sim/sim_guest.h"
#include "sim/sim_http.h"
#include "sim/sim_services.h"
#include "sim/world_options.h"
#include "store/memory_store.h"

namespace mvr::action {
struct ActionDeps;
struct StartCommand;
struct StartResult;
struct StopCommand;
}  // namespace mvr::action

namespace mvr::sim {

// janitor.rerunLostJobs and janitor.wedgedRunnerSeconds of `o` into the janitor's configuration
// (world_lost.cpp).
void LifecycleConfig(const WorldOptions& o, nlohmann::json& janitor);
// The GitHub model's scale-set API (its routes and knobs) for `o.scale_set`
// (scaleset_scenarios.cpp).
void ScaleSetModel(const WorldOptions& o, const Logger& logger,
                   emulate::github::InProcessGithubOptions& github);

class World {
 public:
  explicit World(const WorldOptions& options);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // Runs the seed to its end and checks the invariants. Call once.
  WorldReport Run();

  // The stale-runner-version scenario's fallback class and its image
  // (WorldOptions::fallback_class).
  static const char* FallbackLabel() { return kFallbackLabel; }
  // With repository_runner_groups, a runner group limited to each repository (world_outage.cpp).
  static std::vector<emulate::github::RunnerGroupSpec> RunnerGroups(const WorldOptions& o);
  static const char* FallbackImage() { return kFallbackImage; }

 private:
  enum class Role { kLauncher, kJanitor, kSweeper, kListener };

  // The world's fixture names and secrets; the end checks look for the secrets in every log line.
  static constexpr char kRepository[] = "octo/app";
  static constexpr char kLabel[] = "mvr-small";
  static constexpr char kImage[] = "img-1";
  // The stale-runner-version scenario's fallback class (WorldOptions::fallback_class).
  static constexpr char kFallbackLabel[] = "mvr-large";
  static constexpr char kFallbackImage[] = "img-2";
  static constexpr char kPrefix[] = "mvr-sim_";  // runnerset::RunnerNamePrefix("sim")
  static constexpr char kToken[] = "ghp_SIMTOKENFIXTURE0123456789";
  static constexpr int64_t kFirstAppId = 4101;  // App i is 4101 + i, installed as 4101 + i
  // The PAT that replaces kToken in the revoked-credentials scenario.
  static constexpr char kFixedToken[] = "ghp_SIMFIXEDTOKENFIXTURE98765";
  static constexpr char kWebhookSecret[] = "sim-webhook-secret-5c1f";
  // The runner set's GitHub credential stands in as its control key (ControlKeyOf); the Action's
  // MVR_CONTROL_KEY.
  static constexpr char kSetControlKey[] = "sim-set-control-key-0b7e";
  static constexpr char kActionControlKey[] = "sim-action-control-key-91d2";
  static constexpr char kKeyId[] = "AKIDSIMULATION";
  static constexpr char kSecretKey[] = "SIMSECRETKEYFIXTURE-0042";

  // One process of the runner set (a Lambda invocation's sandbox, or one `mvr serve`): its own
  // seam (clock, maybe skewed), clients and tables over the shared services.
  struct Process {
    Process(World& w, Duration skew);
    ActorSeam seam;
    Role role = Role::kLauncher;  // or the Action's run
    aws::MicrovmsClient vms;
    // One client per GitHub App (one with the PAT); with several, the set calls `router`.
    std::vector<std::unique_ptr<github::GitHubClient>> apps;
    std::unique_ptr<github::MultiAppGitHub> router;
    github::GitHub* github = nullptr;
    runnerset::RunnerTable table;
    runnerset::WarmPoolTable pool;
    runnerset::ArrivalHistory arrivals;
    // With options_.scale_set: the scale-set client, and GitHub as the launcher calls it (a set's
    // JIT runners from the set); `github` then points at set_github (WireScaleSet).
    std::unique_ptr<github::ScaleSetClient> scale_sets;
    std::unique_ptr<github::GitHub> set_github;
  };

  // Runs `f` when the scope ends, unwinding from a crash included.
  class OnExit {
   public:
    explicit OnExit(std::function<void()> f) : f_(std::move(f)) {}
    ~OnExit() { f_(); }
    OnExit(const OnExit&) = delete;
    OnExit& operator=(const OnExit&) = delete;

   private:
    std::function<void()> f_;
  };

  // --- wiring (world.cpp) ---
  static bool Chance(Random& random, double p);  // true with probability p
  aws::MicrovmsClientOptions VmsClientOptions() const;
  std::unique_ptr<emulate::github::InProcessGithub> MakeGithub();
  Process& NewProcess();
  // The set's GitHub credential, re-read from github_secret_ while GitHub refuses it.
  github::GitHubAuth GithubAuth();
  // Whether the set calls GitHub as Apps (several, or one with github_app_auth) or with its PAT.
  bool UsesApps() const { return options_.github_apps > 1 || options_.github_app_auth; }
  // A Random whose every draw is 0 (the planted token race's jti).
  struct ConstantRandom final : Random {
    uint64_t Next64() override { return 0; }
  };
  // App i's credentials (UsesApps()).
  github::GitHubAuth GithubAppAuth(int i) const;
  github::GitHubClientOptions GithubOptions(ActorSeam& seam) const;
  void SpawnRole(Role role);
  void SpawnActors();

  // --- the runner set's and the platform's actors (world_actors.cpp) ---
  void LauncherLoop(Process& p);
  void JanitorLoop(Process& p);
  void SweeperLoop(Process& p);
  void Platform();
  void Deliver(emulate::github::HeldDelivery held);
  void HandleDelivery(const std::shared_ptr<emulate::github::HeldDelivery>& held, int copy,
                      Duration delay, int crash_after);
  void Chaos();
  // Revokes the set's PAT, then fixes the secret (options_.credentials_*).
  void CredentialsOutage();
  // Raises GitHub's minimum runner version at options_.min_runner_version_at (world_versions.cpp).
  void RaiseMinRunnerVersion();
  int CrashPoint(int span);  // where a crashing actor dies: at one of its next `span` seam calls
  // --- the set down while work arrives (world_outage.cpp) ---
  // kill -9 of `mvr serve` (or its webhook receiver alone), then the restart.
  void SetOutage();
  // The repository the `index`th job is queued in (the organisation's are spread by the seed).
  std::string JobRepository(int index);
  static std::vector<std::string> Repositories(const WorldOptions& o);

  // --- the jobs from a runner scale set (issue 54, item 5; scaleset_scenarios.cpp) ---
  void WireScaleSet(Process& p);
  void ListenerLoop(Process& p);
  void ScaleSetFaults();  // restarts, sessions taken over, stale statistics
  void ScaleSetChecks();  // watched as the run goes
  void CheckScaleSet(WorldReport& report);

  // --- the workloads: jobs and the Action's runs (world_workloads.cpp) ---
  void Workload();
  void ActionRun(Process& p, int index);
  void WaitForActionRun(Process& p, int index);
  action::StartCommand ActionStart(int index) const;
  bool CountStart(const action::StartCommand& start, const Result<action::StartResult>& started,
                  TimePoint began);
  void StopAfterTheJob(Process& p, const action::ActionDeps& deps, const action::StopCommand& stop,
                       const Result<emulate::github::Job>& job, const std::string& run_id);
  void StopLate(Process& p, const action::ActionDeps& deps, const action::StopCommand& stop,
                const std::string& server, const SimHttpClient& own_vms, const std::string& run_id);

  // --- the invariants (world_invariants.cpp) ---
  std::vector<nlohmann::json> ModelVms();
  void CheckCapacity();
  void CheckCap();
  void CheckTheEnd(WorldReport& report);
  void CheckJobs(WorldReport& report);
  void CheckVms(WorldReport& report);
  void CheckRunners(WorldReport& report);
  void CheckLogs(WorldReport& report);
  void CheckAuthOutage(WorldReport& report);
  // stale-runner-version: no job went to a refused runner, the class is reported unhealthy and
  // nothing was launched from its image once the set knew (world_versions.cpp).
  void CheckRunnerVersions(WorldReport& report);
  // GitHub's rate limits (world_rate_limits.cpp): no launch failed, and the burst's figures.
  void CheckRateLimits(WorldReport& report);
  // token-formats: GitHub never had to refuse one of the set's JWTs as seen within the second
  // (world_tokens.cpp).
  void CheckTokenRequests(WorldReport& report);
  void ReportFigures(WorldReport& report);
  Duration JanitorBound() const;
  // How long a pool member's VM may idle unparked: its launch, then two sweeps of the sweeper
  // (the one that sees its runner connect or fail, and the one that replaces it), plus slack; a
  // sweep with an error may have moved no member, so the period is the longest gap between
  // sweeps without one.
  Duration PoolBound() const;
  // Issue 30, items 1 and 7 (world_stolen.cpp): the GitHub model's knobs, the cancellations, and
  // the invariants watched as the run goes.
  void ApplyStolenKnobs();
  void MaybeCancel(int64_t job_id);
  void StolenChecks();
  void CheckStolenJobs();
  // Issue 55, item 3 (world_order.cpp): the GitHub model's knobs, gated jobs, and the invariants
  // watched as the run goes.
  void ApplyOrderKnobs();
  void GateJob(emulate::github::JobSpec& spec);
  void NoteCompleted(const queue::QueueMessage& message);
  void OrderChecks();
  void CheckOrder();
  void CheckEndedJobs();
  Duration StolenBound() const;
  // Issue 55 (expiry_scenarios.cpp): every job starts within ExpiryBound() of being queued.
  void ExpiryChecks();
  Duration ExpiryBound() const;
  // Every 5 s: a job still queued (not cancelled) longer than `bound` after it was queued is a
  // violation, once per job and tag: "job N was still queued S s after it was queued, past WHY".
  void QueuedPastBoundChecks(const std::string& tag, Duration bound, const std::string& why);
  // Issue 55, items 4 and 5 (world_lost.cpp): VMs lost mid-job and wedged runners.
  void ApplyLostKnobs();
  void WedgedChecks();
  Duration WedgedBound() const;
  bool LostJobExcused(const emulate::github::Job& job) const;  // its re-run is checked instead
  void CheckLost(WorldReport& report);
  Duration EndedJobBound() const;
  // Issue 55, item 4's circuit breaker (world_lost.cpp): each second, the class's record and
  // the VMs of its image launched since; at the end, what they showed.
  void BreakerChecks();
  void CheckBreaker(WorldReport& report);
  struct BreakerSeen {
    std::set<std::string> vms;                    // VMs of the image looked at
    std::map<int64_t, std::set<int64_t>> probes;  // pause's end (ms) → probes taken after it
    std::map<int64_t, std::vector<std::string>> half_open_vms;  // pause's end → VMs then
    std::set<int64_t> pauses;                                   // each pause's end
  };
  BreakerSeen breaker_seen_;
  // Issue 56, item 4 (world_fair_share.cpp): the last job started within FairShareBound().
  void CheckFairShare(WorldReport& report);
  // One launch after a seat frees: its terminate intent (the completed webhook, p50 2 s, and the
  // queue) and a cold launch (seed 001's 25 s), with room for the launchers' turn.
  static constexpr Duration kFairShareLaunch{60'000};

  WorldOptions options_;
  ConfigKnobs knobs_;
  runnerset::ServeConfig config_;
  Scheduler scheduler_;
  // The shared services read virtual time under their own locks: no scheduling point there.
  VirtualClock clock_{scheduler_};
  SimSleeper sleeper_{scheduler_};
  SeededRandom services_random_;
  MemorySink services_sink_;
  Logger services_logger_{services_sink_, clock_};
  Seam services_{clock_, sleeper_, services_random_, services_random_, services_logger_};
  Faults store_faults_, queue_faults_, microvms_faults_, github_faults_;
  SeededRandom chance_;  // the world's own draws: webhook faults, crashes, skews
  store::MemoryStore memory_store_;
  SimStore store_;
  queue::MemoryQueue memory_queue_;
  SimQueue queue_;
  std::unique_ptr<emulate::github::InProcessGithub> github_;
  SimGuest guest_;
  emulate::microvms::InProcessMicrovms microvms_;
  SimHttpClient vms_http_, ingress_http_, github_http_;
  std::optional<runnerset::WebhookRouter> router_;
  aws::StaticCredentialsProvider credentials_{
      aws::AwsCredentials{kKeyId, Secret(kSecretKey), Secret(), std::nullopt, "sim"}};
  runnerset::Metrics metrics_;
  // The set's record of the classes GitHub refuses the runner of: in memory, shared by its
  // launchers and sweeper as `mvr serve` shares it between its threads.
  runnerset::ClassHealth class_health_{clock_};
  // When the janitor last swept (not a sweep it skipped to pace itself), and the longest time
  // between two of its sweeps so far: JanitorBound's interval while it paces itself.
  std::optional<TimePoint> janitor_swept_;
  Duration janitor_gap_{0};
  // The same for the pool sweeper's sweeps without an error: a sweep that failed (its scan
  // refused by the store) moved no member on, so PoolBound's period is the longest gap.
  std::optional<TimePoint> sweeper_swept_;
  Duration sweeper_gap_{0};
  std::optional<TimePoint> min_raised_at_;
  ActorSeam platform_{scheduler_};
  ActorSeam webhooks_{scheduler_};
  ActorSeam workload_{scheduler_};
  ActorSeam chaos_{scheduler_};
  ActorSeam outage_{scheduler_};
  ActorSeam versions_{scheduler_};
  ActorSeam set_outage_{scheduler_};
  // The set's GitHub credential as its secret file holds it (what a re-read finds).
  std::string github_secret_ = kToken;
  std::optional<TimePoint> revoked_at_, fixed_at_;
  std::deque<std::unique_ptr<Process>> processes_;  // kept to the end: their logs are checked
  std::vector<std::pair<Role, ActorId>> crashable_;
  int incarnations_ = 0;
  std::map<int64_t, TimePoint> queued_at_;
  std::vector<std::string> action_secrets_;
  std::vector<std::string> action_failures_;
  int action_started_ = 0, action_at_capacity_ = 0, action_stale_stops_ = 0, action_gave_up_ = 0;
  int action_crashed_ = 0;
  std::vector<double> action_start_cold_, action_start_warm_;
  int webhook_handler_crashes_ = 0;
  // Each function's invocations and their virtual seconds (the scale report's Lambda bill).
  std::map<std::string, WorldReport::LambdaUse> lambda_;
  void Invoked(const char* function, TimePoint began);
  bool over_capacity_ = false;
  bool over_cap_ = false;  // CheckCap found the set over maxConcurrentVms (reported once)
  // world_stolen.cpp's state: its own random stream (the other draws stay as they were), when
  // each job lost the runner launched for it, and what was reported.
  SeededRandom stolen_random_{options_.seed * 7919 + 9};
  std::map<int64_t, TimePoint> runner_taken_at_;
  // A job that lost its runner and whose new launch's claim a killed launcher held: when that
  // claim lets go (its takeover age, then the intent's return after the visibility timeout).
  std::map<int64_t, TimePoint> claim_released_at_;
  // On a launcher's kill: the claims of jobs waiting for a runner that no launch has committed.
  void NoteClaimsOfKilledLauncher();
  // SimStore's hook before a launch's commit: with launch_dies_before_commit, the launcher calling
  // is killed there (and replaced).
  void MaybeDieBeforeCommit();
  int launches_died_at_commit_ = 0;
  std::set<std::string> stolen_reported_;
  std::vector<std::string> stolen_failures_;
  std::set<int64_t> cancelled_jobs_;  // cancelled by the workload while queued
  // world_order.cpp's state: its own random stream, when the set had recorded each job completed,
  // the claims seen committed at the last check, and when that check ran.
  SeededRandom order_random_{options_.seed * 6151 + 17};
  std::map<int64_t, TimePoint> completed_known_at_;
  std::set<int64_t> committed_seen_;
  std::optional<TimePoint> order_checked_at_;
  std::set<std::string> order_reported_;
  bool webhooks_down_ = false;  // deliveries fail: nothing listens (SetOutage)
  // scaleset_scenarios.cpp's state: its own random stream, the set's id, what was reported.
  SeededRandom scale_set_random_{options_.seed * 7919 + 54};
  int64_t scale_set_id_ = 0;
  // The scale-set API as the set's clients reach it: the long poll waited out on the caller's
  // fiber (ScaleSetModel), then the GitHub faults.
  std::unique_ptr<http::HttpClient> scale_set_poll_;
  std::unique_ptr<SimHttpClient> scale_set_http_;
  std::set<std::string> scale_set_reported_;
  std::vector<std::string> scale_set_failures_;
};

// Runs one seed (the world on the heap: it is large).
WorldReport RunWorld(const WorldOptions& options);

}  // namespace mvr::sim
