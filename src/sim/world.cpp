// The wiring of sim::World: the runner set's configuration, the shared services and their faults,
// the processes of the runner set, and the actors a run starts.
#include "sim/world.h"

#include "sim/app_keys.h"

#include <stdexcept>

#include "base/json_text.h"
#include "runnerset/intake/webhook_endpoint.h"

namespace mvr::sim {
namespace {

using nlohmann::json;
namespace gh = emulate::github;
namespace vms = emulate::microvms;

runnerset::ServeConfig ConfigFor(const WorldOptions& o, const ConfigKnobs& k, const char* prefix,
                                 const char* repository, const char* label, const char* image) {
  json classes = json::array({{{"label", label},
                               {"image", image},
                               {"warmPoolSize", o.warm_pool_size},
                               {"hotPoolSize", o.hot_pool_size}}});
  if (o.hot_pool_target_seconds > 0) {
    classes[0]["hotPoolSize"] = {
        {"target", {{"p95QueuedToStartedSeconds", o.hot_pool_target_seconds}}},
        {"max", o.hot_pool_target_max}};
  }
  if (o.breaker_failures > 0) {
    classes[0]["circuitBreaker"] = {{"failures", o.breaker_failures},
                                    {"windowSeconds", o.breaker_window_seconds},
                                    {"pauseSeconds", o.breaker_pause_seconds}};
  }
  if (o.fallback_class) {
    classes[0]["fallbackClass"] = World::FallbackLabel();
    classes.push_back({{"label", World::FallbackLabel()}, {"image", World::FallbackImage()}});
  }
  json github = {{"apiUrl", gh::InProcessGithub::kApiUrl},
                 {"repository", repository},
                 {"patFile", "/nonexistent/pat"},
                 {"webhookSecretFile", "/nonexistent/webhook-secret"}};
  if (o.scale_set.enabled) github["source"] = "scaleset";  // scaleset_scenarios.cpp
  if (o.org_repositories > 0) {
    // The organisation's hook (the emulator's one hook, id 1): the janitor reads its deliveries.
    github.erase("repository");
    github["organization"] = std::string(repository).substr(0, std::string(repository).find('/'));
    github["hookId"] = 1;
  }
  json config = {
      {"runnerSetId", "sim"},
      {"region", "us-east-1"},
      {"runnerNamePrefix", prefix},
      {"github", github},
      {"classes", classes},
      {"maxConcurrentVms", o.max_concurrent_vms},
      {"store", "memory:"},
      {"queue", {{"uri", "memory:"}, {"visibilityTimeoutSeconds", k.visibility_timeout_seconds}}},
      {"launcher",
       {{"concurrency", 1},
        {"launchTimeoutSeconds", k.launch_timeout_seconds},
        {"claimTakeoverSeconds", k.claim_takeover_seconds},
        {"deferSeconds", k.defer_seconds}}},
      {"janitor",
       {{"intervalSeconds", k.janitor_interval_seconds},
        {"strikes", k.janitor_strikes},
        {"graceSeconds", k.janitor_grace_seconds},
        {"stuckLaunchSeconds", k.stuck_launch_seconds}}},
      {"warmPool", {{"intervalSeconds", k.warm_pool_interval_seconds}}}};
  if (!o.fair_share) config["launcher"]["fairShare"] = {{"enabled", false}};
  for (const gh::RunnerGroupSpec& g : World::RunnerGroups(o)) {
    config["launcher"]["fairShare"]["repositories"][g.repositories[0]] = {{"runnerGroupId", g.id}};
  }
  if (o.hot_pool_max_age_seconds > 0) {
    config["hotPool"] = {{"maxAgeSeconds", o.hot_pool_max_age_seconds}};
  }
  LifecycleConfig(o, config["janitor"]);  // issue 55, items 4 and 5 (world_lost.cpp)
  Result<runnerset::ServeConfig> parsed =
      runnerset::ParseServeConfig(JsonText(config), "simulation");
  if (!parsed.ok())
    throw std::logic_error("the simulation's configuration: " + parsed.status().ToString());
  return *std::move(parsed);
}

Scheduler::Options SchedulerOptions(const WorldOptions& o) {
  Scheduler::Options s;
  s.seed = o.seed;
  s.yield_delay_probability = o.yield_delay_probability;
  s.trace_tail = o.trace_tail;
  return s;
}

runnerset::RunnerTable::Options TableOptions(const runnerset::ServeConfig& c) {
  runnerset::RunnerTable::Options o;
  o.takeover_after = c.claim_takeover_after();
  return o;
}

github::GitHubClientOptions GithubClientOptions() {
  github::GitHubClientOptions o;
  o.rest.base_url = gh::InProcessGithub::kApiUrl;
  return o;
}

queue::QueueOptions QueueOptionsOf(const runnerset::ServeConfig& c) {
  queue::QueueOptions o;
  o.max_receive_count = c.queue.max_receive_count;
  return o;
}

vms::InProcessMicrovmsOptions MicrovmsOptions(const WorldOptions& o, const char* image,
                                              const char* key_id, const char* secret_key) {
  vms::InProcessMicrovmsOptions m;
  m.model.latency.run.low = o.vm_boot;
  m.model.boot_failure_probability = o.boot_failure;
  if (o.image_boot_failures > 0) m.model.boot_failures_by_image[image] = o.image_boot_failures;
  m.model.latency.suspend.low = Duration(2'070);  // seed 000's medians
  m.model.latency.resume.low = Duration(4'550);
  m.model.latency.terminate.low = Duration(1'000);
  m.front.sigv4_keys = {{key_id, secret_key}};
  m.images = {image};
  if (o.fallback_class) m.images.push_back(World::FallbackImage());
  return m;
}

}  // namespace

World::World(const WorldOptions& o)
    : options_(o),
      knobs_(o.knobs ? *o.knobs : DrawConfigKnobs(o.seed)),
      config_(ConfigFor(o, knobs_, kPrefix, kRepository, kLabel, kImage)),
      scheduler_(SchedulerOptions(o)),
      services_random_(o.seed * 7919 + 6),
      store_faults_(o.seed * 7919 + 1, o.store),
      queue_faults_(o.seed * 7919 + 2, o.queue),
      microvms_faults_(o.seed * 7919 + 3, o.microvms),
      github_faults_(o.seed * 7919 + 4, o.github),
      chance_(o.seed * 7919 + 5),
      memory_store_(clock_),
      store_(scheduler_, memory_store_, store_faults_),
      memory_queue_(clock_, sleeper_, QueueOptionsOf(config_)),
      queue_(scheduler_, memory_queue_, queue_faults_),
      github_(MakeGithub()),
      guest_(scheduler_, github_->model(), o.guest, kPrefix, o.seed * 7919 + 7),
      microvms_(services_, MicrovmsOptions(o, kImage, kKeyId, kSecretKey), &guest_),
      vms_http_(scheduler_, microvms_.api(), microvms_faults_, "microvms"),
      ingress_http_(scheduler_, microvms_.ingress(), microvms_faults_, "ingress"),
      github_http_(scheduler_, github_->api(), github_faults_, "github"),
      router_(runnerset::WebhookRouter::Create(
                  runnerset::WebhookRouterConfigOf(config_, Secret(kWebhookSecret)))
                  .value()) {
  github_http_.SetThrottleResponse([] {
    http::HttpResponse r =
        http::HttpResponse::Json(403, R"({"message":"You have exceeded a secondary rate limit."})");
    r.headers.Set("retry-after", "2");
    return r;
  });
  if (o.plant_unconditional_claims) store_.PlantUnconditionalPuts("job#");
  if (o.launch_dies_before_commit > 0) store_.BeforeCommit([this] { MaybeDieBeforeCommit(); });
  queue_.DuplicateSends(o.queue_duplicates, chance_);
  github_->model().SetRunnerListingLag(o.runner_listing_lag);
  if (Status s = github_->model().SetRunnerBusyLies(o.runner_busy_lies); !s.ok()) {
    throw std::invalid_argument("runner_busy_lies: " + s.message());
  }
  ApplyStolenKnobs();
  ApplyOrderKnobs();
  ApplyLostKnobs();
}

World::~World() { scheduler_.Shutdown(); }

WorldReport World::Run() {
  scheduler_.Note("knobs " + DescribeKnobs(knobs_));
  SpawnActors();
  const TimePoint end =
      scheduler_.Now() + options_.first_job_after + options_.arrivals + options_.drain;
  Scheduler::RunResult run = scheduler_.Run(end);
  WorldReport report;
  report.knobs = knobs_;
  report.steps = run.steps;
  for (const std::string& failure : run.failures) {
    report.violations.push_back("an actor failed: " + failure);
  }
  CheckTheEnd(report);
  report.trace_hash = scheduler_.TraceHash();
  report.tail = guest_.violations().empty() ? scheduler_.Tail() : guest_.violation_tail();
  return report;
}

void World::SpawnActors() {
  scheduler_.Spawn("platform", [this] { Platform(); });
  scheduler_.Spawn("workload", [this] { Workload(); });
  if (options_.runner_set) {
    for (int i = 0; i < options_.launchers; ++i) SpawnRole(Role::kLauncher);
    SpawnRole(Role::kJanitor);
    if (options_.has_pool()) SpawnRole(Role::kSweeper);
    if (options_.scale_set.enabled) SpawnRole(Role::kListener);
  }
  if (options_.scale_set.enabled) {
    scheduler_.Spawn("scaleset-faults", [this] { ScaleSetFaults(); });
    if (options_.scale_set.check) scheduler_.Spawn("scaleset-checks", [this] { ScaleSetChecks(); });
  }
  if (options_.crashes_per_hour > 0) scheduler_.Spawn("chaos", [this] { Chaos(); });
  if (options_.check_stolen || options_.check_ended_jobs) {
    scheduler_.Spawn("stolen-checks", [this] { StolenChecks(); });
  }
  if (options_.check_order) scheduler_.Spawn("order-checks", [this] { OrderChecks(); });
  if (options_.check_expiry) scheduler_.Spawn("expiry-checks", [this] { ExpiryChecks(); });
  if (options_.check_wedged) scheduler_.Spawn("wedged-checks", [this] { WedgedChecks(); });
  if (options_.check_breaker) scheduler_.Spawn("breaker-checks", [this] { BreakerChecks(); });
  if (options_.credentials_outage.count() > 0) {
    scheduler_.Spawn("credentials", [this] { CredentialsOutage(); });
  }
  if (!options_.min_runner_version.empty()) {
    scheduler_.Spawn("runner-versions", [this] { RaiseMinRunnerVersion(); });
  }
  if (options_.set_down_for.count() > 0) scheduler_.Spawn("set-outage", [this] { SetOutage(); });
  // A final wave after the others (the next day's runs) reconciles what they abandoned.
  const int final_wave = options_.action_runs > 0 ? options_.action_capacity : 0;
  for (int i = 0; i < options_.action_runs + final_wave; ++i) {
    Process& p = NewProcess();
    scheduler_.Spawn("action#" + std::to_string(i + 1), [this, &p, i] { ActionRun(p, i); });
  }
}

World::Process::Process(World& w, Duration skew)
    : seam(w.scheduler_, skew),
      vms(w.VmsClientOptions(), aws::MicrovmsClientDeps{w.vms_http_, w.credentials_, seam.seam}),
      table(w.store_, seam.seam, TableOptions(w.config_)),
      pool(w.store_, seam.seam),
      arrivals(w.store_, seam.seam) {
  std::vector<github::GitHub*> each;
  for (int i = 0; i < w.options_.github_apps; ++i) {
    apps.push_back(github::GitHubClient::Create(w.github_http_, seam.clock,
                                                w.UsesApps() ? w.GithubAppAuth(i) : w.GithubAuth(),
                                                w.GithubOptions(seam), &seam.logger)
                       .value());
    each.push_back(apps.back().get());
  }
  if (each.size() > 1) {
    router = std::make_unique<github::MultiAppGitHub>(std::move(each), seam.clock);
    github = router.get();
  } else {
    github = apps.front().get();
  }
  w.WireScaleSet(*this);
  // As `mvr serve` and `mvr lambda` do with the secrets they read.
  seam.logger.redactor().Add(kToken);
  seam.logger.redactor().Add(kFixedToken);
  seam.logger.redactor().Add(kWebhookSecret);
}

github::GitHubAuth World::GithubAuth() {
  github::GitHubAuth auth = github::GitHubAuth::Token(Secret(kToken));
  auth.reload = [this]() -> Result<Secret> { return Secret(github_secret_); };
  return auth;
}

github::GitHubAuth World::GithubAppAuth(int i) const {
  github::AppCredentials app;
  app.app_id = std::to_string(kFirstAppId + i);
  app.installation_id = kFirstAppId + i;
  app.private_key_pem = Secret(SimAppKeyPem(i));
  return github::GitHubAuth::App(std::move(app));
}

github::GitHubClientOptions World::GithubOptions(ActorSeam& seam) const {
  github::GitHubClientOptions o = GithubClientOptions();
  o.jitter = &seam.random;
  o.random = &seam.random;
  o.sleeper = &seam.sleeper;
  if (options_.plant_token_race) {
    static ConstantRandom same_jti;  // every JWT's jti the same: as good as none
    o.random = &same_jti;
    o.single_flight_tokens = false;
  }
  if (options_.plant_auth_spin) o.auth_backoff = {Duration(0), Duration(0)};
  if (options_.plant_rate_blind) o.rate_budget.pace = false;
  return o;
}

bool World::Chance(Random& random, double p) {
  return p > 0 && static_cast<double>(random.Next64() >> 11) * 0x1.0p-53 < p;
}

aws::MicrovmsClientOptions World::VmsClientOptions() const {
  aws::MicrovmsClientOptions o;
  o.endpoint = {microvms_.api_url(), "us-east-1", "lambda", "sim"};
  return o;
}

std::unique_ptr<gh::InProcessGithub> World::MakeGithub() {
  gh::InProcessGithubOptions o;
  o.model.repositories = Repositories(options_);
  if (options_.org_repositories > 0) {
    o.model.organizations = {
        std::string(kRepository).substr(0, std::string(kRepository).find('/'))};
  }
  o.model.webhook_secret = Secret(kWebhookSecret);
  o.model.runner_groups = RunnerGroups(options_);
  o.model.registration_idle_expiry = options_.registration_idle_expiry;
  o.model.offline_registration_expiry = options_.offline_registration_expiry;
  o.model.assignment_pickup_timeout = Duration(60'000);  // as `mvr emulate github`
  o.model.lost_runner_fails_job_after = options_.lost_runner_fails_job_after;
  o.model.wedged_runners = options_.wedged_runners;
  o.auth.pats = {Secret(kToken)};
  for (int i = 0; UsesApps() && i < options_.github_apps; ++i) {
    gh::AppOptions app;
    app.app_id = kFirstAppId + i;
    app.installation_id = kFirstAppId + i;
    app.private_key_pem = Secret(SimAppKeyPem(i));
    o.auth.apps.push_back(std::move(app));
  }
  o.auth.installation_token_format =
      gh::ParseInstallationTokenFormat(options_.installation_token_format).value();
  o.rate.secondary_per_minute = options_.github_mutations_per_minute;
  o.rate.github = options_.github_rate_limits;
  ScaleSetModel(options_, services_logger_, o);  // scaleset_scenarios.cpp
  return gh::InProcessGithub::Create(o, services_).value();
}

World::Process& World::NewProcess() {
  Duration skew{0};
  if (options_.max_clock_skew.count() > 0) {
    const int64_t span = 2 * options_.max_clock_skew.count() + 1;
    skew = Duration(static_cast<int64_t>(chance_.Next64() % static_cast<uint64_t>(span)) -
                    options_.max_clock_skew.count());
  }
  processes_.push_back(std::make_unique<Process>(*this, skew));
  return *processes_.back();
}

void World::SpawnRole(Role role) {
  Process& p = NewProcess();
  p.role = role;
  const std::string n = std::to_string(++incarnations_);
  switch (role) {
    case Role::kLauncher:
      crashable_.push_back(
          {role, scheduler_.Spawn("launcher#" + n, [this, &p] { LauncherLoop(p); })});
      break;
    case Role::kJanitor:
      crashable_.push_back(
          {role, scheduler_.Spawn("janitor#" + n, [this, &p] { JanitorLoop(p); })});
      break;
    case Role::kSweeper:
      crashable_.push_back(
          {role, scheduler_.Spawn("sweeper#" + n, [this, &p] { SweeperLoop(p); })});
      break;
    case Role::kListener:
      crashable_.push_back(
          {role, scheduler_.Spawn("listener#" + n, [this, &p] { ListenerLoop(p); })});
      break;
  }
}

WorldReport RunWorld(const WorldOptions& options) {
  auto world = std::make_unique<World>(options);
  return world->Run();
}

}  // namespace mvr::sim
