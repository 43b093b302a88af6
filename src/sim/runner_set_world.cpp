#include "sim/runner_set_world.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <deque>
#include <exception>
#include <functional>
#include <memory>

#include "action/pool_keys.h"
#include "action/pool_records.h"
#include "action/server_handle.h"
#include "action/start_stop.h"
#include "aws/credentials.h"
#include "aws/microvms_client.h"
#include "base/json_text.h"
#include "base/retry.h"
#include "emulate/github/inprocess_github.h"
#include "github/github_client.h"
#include "queue/memory_queue.h"
#include "runnerset/config.h"
#include "runnerset/consumer.h"
#include "runnerset/janitor.h"
#include "runnerset/launcher.h"
#include "runnerset/metrics.h"
#include "runnerset/warm_pool_sweeper.h"
#include "runnerset/warm_pool_table.h"
#include "runnerset/webhook_endpoint.h"
#include "runnerset/webhook_router.h"
#include "sim/sim_http.h"
#include "store/memory_store.h"

namespace mvr::sim {
namespace {

using nlohmann::json;
namespace gh = emulate::github;
namespace vms = emulate::microvms;

constexpr char kRepository[] = "octo/app";
constexpr char kLabel[] = "mvr-small";
constexpr char kImage[] = "img-1";
constexpr char kPrefix[] = "mvr-sim-";
// Fixture secrets: the check at the end looks for them in every log line.
constexpr char kToken[] = "ghp_SIMTOKENFIXTURE0123456789";
constexpr char kWebhookSecret[] = "sim-webhook-secret-5c1f";
// The runner set's GitHub credential stands in as its control key (ControlKeyOf); the Action's
// MVR_CONTROL_KEY.
constexpr char kSetControlKey[] = "sim-set-control-key-0b7e";
constexpr char kActionControlKey[] = "sim-action-control-key-91d2";
constexpr char kKeyId[] = "AKIDSIMULATION";
constexpr char kSecretKey[] = "SIMSECRETKEYFIXTURE-0042";

runnerset::ServeConfig ConfigFor(const WorldOptions& o) {
  json config = {{"runnerSetId", "sim"},
                 {"region", "us-east-1"},
                 {"runnerNamePrefix", kPrefix},
                 {"github",
                  {{"apiUrl", gh::InProcessGithub::kApiUrl},
                   {"repository", kRepository},
                   {"patFile", "/nonexistent/pat"},
                   {"webhookSecretFile", "/nonexistent/webhook-secret"}}},
                 {"classes", json::array({{{"label", kLabel},
                                           {"image", kImage},
                                           {"warmPoolSize", o.warm_pool_size},
                                           {"hotPoolSize", o.hot_pool_size}}})},
                 {"maxConcurrentVms", o.max_concurrent_vms},
                 {"store", "memory:"},
                 {"queue", {{"uri", "memory:"}, {"visibilityTimeoutSeconds", 180}}},
                 {"launcher",
                  {{"concurrency", 1},
                   {"launchTimeoutSeconds", 120},
                   {"claimTakeoverSeconds", 240},
                   {"deferSeconds", 10}}},
                 {"janitor",
                  {{"intervalSeconds", 60},
                   {"strikes", 2},
                   {"graceSeconds", 120},
                   {"stuckLaunchSeconds", 120}}},
                 {"warmPool", {{"intervalSeconds", 30}}}};
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

bool Draw(SeededRandom& random, double p) {
  return p > 0 && static_cast<double>(random.Next64() >> 11) * 0x1.0p-53 < p;
}

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

class World {
 public:
  explicit World(const WorldOptions& o)
      : options_(o),
        scheduler_(SchedulerOptions(o)),
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
        microvms_(services_, MicrovmsOptions(o), &guest_),
        vms_http_(scheduler_, microvms_.api(), microvms_faults_, "microvms"),
        ingress_http_(scheduler_, microvms_.ingress(), microvms_faults_, "ingress"),
        github_http_(scheduler_, github_->api(), github_faults_, "github"),
        router_(runnerset::WebhookRouter::Create(
                    runnerset::WebhookRouterConfigOf(config_, Secret(kWebhookSecret)))
                    .value()) {
    github_http_.SetThrottleResponse([] {
      http::HttpResponse r = http::HttpResponse::Json(
          403, R"({"message":"You have exceeded a secondary rate limit."})");
      r.headers.Set("retry-after", "2");
      return r;
    });
    if (o.plant_unconditional_claims) store_.PlantUnconditionalPuts("job#");
    queue_.DuplicateSends(o.queue_duplicates, chance_);
    github_->model().SetRunnerListingLag(o.runner_listing_lag);
  }

  ~World() { scheduler_.Shutdown(); }

  WorldReport Run() {
    scheduler_.Spawn("platform", [this] { Platform(); });
    scheduler_.Spawn("workload", [this] { Workload(); });
    if (options_.runner_set) {
      for (int i = 0; i < options_.launchers; ++i) SpawnRole(Role::kLauncher);
      SpawnRole(Role::kJanitor);
      if (options_.warm_pool_size > 0 || options_.hot_pool_size > 0) SpawnRole(Role::kSweeper);
    }
    if (options_.crashes_per_hour > 0) scheduler_.Spawn("chaos", [this] { Chaos(); });
    // A final wave after the others (the next day's runs) reconciles what they abandoned.
    const int final_wave = options_.action_runs > 0 ? options_.action_capacity : 0;
    for (int i = 0; i < options_.action_runs + final_wave; ++i) {
      Process& p = NewProcess();
      scheduler_.Spawn("action#" + std::to_string(i + 1), [this, &p, i] { ActionRun(p, i); });
    }
    const TimePoint end =
        scheduler_.Now() + options_.first_job_after + options_.arrivals + options_.drain;
    Scheduler::RunResult run = scheduler_.Run(end);
    WorldReport report;
    report.steps = run.steps;
    for (const std::string& failure : run.failures) {
      report.violations.push_back("an actor failed: " + failure);
    }
    CheckTheEnd(report);
    report.trace_hash = scheduler_.TraceHash();
    report.tail = guest_.violations().empty() ? scheduler_.Tail() : guest_.violation_tail();
    return report;
  }

 private:
  enum class Role { kLauncher, kJanitor, kSweeper };

  // One process of the runner set (a Lambda invocation's sandbox, or one `mvr serve`): its own
  // seam (clock, maybe skewed), clients and tables over the shared services.
  struct Process {
    Process(World& w, Duration skew)
        : seam(w.scheduler_, skew),
          vms(w.VmsClientOptions(),
              aws::MicrovmsClientDeps{w.vms_http_, w.credentials_, seam.seam}),
          github(github::GitHubClient::Create(w.github_http_, seam.clock,
                                              github::GitHubAuth::Token(Secret(kToken)),
                                              GithubClientOptions(), &seam.logger)
                     .value()),
          table(w.store_, seam.seam, TableOptions(w.config_)),
          pool(w.store_, seam.seam) {
      // As `mvr serve` and `mvr lambda` do with the secrets they read.
      seam.logger.redactor().Add(kToken);
      seam.logger.redactor().Add(kWebhookSecret);
    }
    ActorSeam seam;
    aws::MicrovmsClient vms;
    std::unique_ptr<github::GitHubClient> github;
    runnerset::RunnerTable table;
    runnerset::WarmPoolTable pool;
  };

  static runnerset::RunnerTable::Options TableOptions(const runnerset::ServeConfig& c) {
    runnerset::RunnerTable::Options o;
    o.takeover_after = c.claim_takeover_after();
    return o;
  }
  static github::GitHubClientOptions GithubClientOptions() {
    github::GitHubClientOptions o;
    o.rest.base_url = gh::InProcessGithub::kApiUrl;
    return o;
  }
  static queue::QueueOptions QueueOptionsOf(const runnerset::ServeConfig& c) {
    queue::QueueOptions o;
    o.max_receive_count = c.queue.max_receive_count;
    return o;
  }
  static vms::InProcessMicrovmsOptions MicrovmsOptions(const WorldOptions& o) {
    vms::InProcessMicrovmsOptions m;
    m.model.latency.run.low = o.vm_boot;
    m.model.boot_failure_probability = o.boot_failure;
    m.model.latency.suspend.low = Duration(2'070);  // seed 000's medians
    m.model.latency.resume.low = Duration(4'550);
    m.model.latency.terminate.low = Duration(1'000);
    m.front.sigv4_keys = {{kKeyId, kSecretKey}};
    m.images = {kImage};
    return m;
  }
  aws::MicrovmsClientOptions VmsClientOptions() const {
    aws::MicrovmsClientOptions o;
    o.endpoint = {microvms_.api_url(), "us-east-1", "lambda", "sim"};
    return o;
  }
  std::unique_ptr<gh::InProcessGithub> MakeGithub() {
    gh::InProcessGithubOptions o;
    o.model.repositories = {kRepository};
    o.model.webhook_secret = Secret(kWebhookSecret);
    o.auth.pats = {Secret(kToken)};
    o.rate.secondary_per_minute = options_.github_mutations_per_minute;
    return gh::InProcessGithub::Create(o, services_).value();
  }

  Process& NewProcess() {
    Duration skew{0};
    if (options_.max_clock_skew.count() > 0) {
      const int64_t span = 2 * options_.max_clock_skew.count() + 1;
      skew = Duration(static_cast<int64_t>(chance_.Next64() % static_cast<uint64_t>(span)) -
                      options_.max_clock_skew.count());
    }
    processes_.push_back(std::make_unique<Process>(*this, skew));
    return *processes_.back();
  }

  void SpawnRole(Role role) {
    Process& p = NewProcess();
    const int n = ++incarnations_;
    switch (role) {
      case Role::kLauncher:
        crashable_.push_back({role, scheduler_.Spawn("launcher#" + std::to_string(n),
                                                     [this, &p] { LauncherLoop(p); })});
        break;
      case Role::kJanitor:
        crashable_.push_back({role, scheduler_.Spawn("janitor#" + std::to_string(n),
                                                     [this, &p] { JanitorLoop(p); })});
        break;
      case Role::kSweeper:
        crashable_.push_back({role, scheduler_.Spawn("sweeper#" + std::to_string(n),
                                                     [this, &p] { SweeperLoop(p); })});
        break;
    }
  }

  // A launcher: takes one intent at a time off the queue, as a `launcher` invocation does.
  void LauncherLoop(Process& p) {
    runnerset::Launcher launcher(
        config_, runnerset::LauncherDeps{p.seam.seam, p.vms, *p.github, ingress_http_, p.table,
                                         metrics_, nullptr, &p.pool, Secret(kSetControlKey)});
    while (true) {
      queue::ReceiveOptions ro;
      ro.max_messages = std::max(1, options_.sequential_batch);
      ro.visibility = config_.visibility_timeout();
      ro.wait = Duration(20'000);  // the event source mapping's long poll
      Result<std::vector<queue::QueueMessage>> got = queue_.Receive(ro);
      if (!got.ok()) p.seam.sleeper.Sleep(Duration(1'000));
      if (!got.ok() || got->empty()) continue;
      for (const queue::QueueMessage& m : *got) {
        runnerset::HandleMessage(queue_, launcher, p.seam.seam, m, config_.queue.max_receive_count);
      }
    }
  }

  void JanitorLoop(Process& p) {
    runnerset::Janitor janitor(config_, runnerset::JanitorDeps{p.seam.seam, p.vms, *p.github,
                                                               p.table, queue_, metrics_, &p.pool});
    const Duration interval(config_.janitor.interval_seconds * 1000LL);
    while (true) {
      p.seam.sleeper.Sleep(interval);
      (void)janitor.Sweep();
    }
  }

  void SweeperLoop(Process& p) {
    runnerset::WarmPoolSweeper sweeper(
        config_, runnerset::WarmPoolDeps{p.seam.seam, p.vms, p.pool, p.github.get(), &ingress_http_,
                                         &p.table, Secret(kSetControlKey)});
    const Duration interval(config_.warm_pool.interval_seconds * 1000LL);
    while (true) {
      (void)sweeper.Sweep();
      p.seam.sleeper.Sleep(interval);
    }
  }

  // The platform: the models' timers (VM boots, GitHub's scheduler) and GitHub's webhooks.
  void Platform() {
    TimePoint next_idle_check = scheduler_.Now();
    while (true) {
      std::optional<TimePoint> next = microvms_.NextDeadline();
      const TimePoint now = scheduler_.Now();
      Duration wait{1'000};
      if (next) wait = std::clamp(*next - now, Duration(1), Duration(1'000));
      platform_.sleeper.Sleep(wait);
      microvms_.RunDue();
      github_->RunDue();
      for (gh::HeldDelivery& held : github_->TakeWebhooks()) Deliver(std::move(held));
      CheckCapacity();
      // The Action has no janitor: a run whose stop failed leaves its VM leased until a later
      // start reconciles it (checked at the end, after the final wave).
      if (options_.runner_set && scheduler_.Now() >= next_idle_check) {
        guest_.CheckIdle(JanitorBound());
        next_idle_check = scheduler_.Now() + Duration(30'000);
      }
    }
  }

  void Deliver(gh::HeldDelivery held) {
    const WebhookFaults& f = options_.webhooks;
    const std::string name =
        "webhook " + held.delivery.action + " job " + std::to_string(held.delivery.job_id);
    if (Draw(chance_, f.lost)) {
      scheduler_.Note(name + " lost");
      gh::DeliveryOutcome lost;
      lost.lost = true;
      held.done(lost);
      return;
    }
    const int copies = Draw(chance_, f.duplicated) ? 2 : 1;
    auto shared = std::make_shared<gh::HeldDelivery>(std::move(held));
    for (int copy = 0; copy < copies; ++copy) {
      Duration delay(50 + static_cast<int64_t>(chance_.Next64() % 1'500));
      if (Draw(chance_, f.late)) {
        delay += Duration(
            static_cast<int64_t>(chance_.Next64() % static_cast<uint64_t>(f.late_by.count() + 1)));
      }
      const int crash_after = Draw(chance_, f.handler_crashes) ? CrashPoint(12) : 0;
      scheduler_.Spawn(name, [this, shared, copy, delay, crash_after] {
        webhooks_.sleeper.Sleep(delay);
        // A handler that dies leaves GitHub waiting until its delivery times out.
        bool answered = copy != 0;
        OnExit timed_out([&, unwinding = std::uncaught_exceptions()] {
          if (std::uncaught_exceptions() > unwinding) ++webhook_handler_crashes_;
          if (answered) return;
          gh::DeliveryOutcome outcome;
          outcome.error = "timed out: the endpoint did not answer";
          shared->done(outcome);
        });
        scheduler_.CrashAfter(crash_after);
        runnerset::WebhookAnswer answer = runnerset::AnswerWebhook(
            *router_, queue_, metrics_, webhooks_.logger, shared->delivery.headers,
            shared->delivery.payload, webhooks_.clock.Now());
        scheduler_.CrashAfter(0);
        if (copy == 0) {
          gh::DeliveryOutcome outcome;
          outcome.status = answer.status;
          outcome.copies_sent = 1;
          answered = true;
          shared->done(outcome);
        }
      });
    }
  }

  // Queues the jobs over the arrival window; the GitHub model announces each with a webhook.
  void Workload() {
    if (options_.first_job_after.count() > 0) workload_.sleeper.Sleep(options_.first_job_after);
    const int64_t gap =
        std::max<int64_t>(1, options_.arrivals.count() / std::max(1, options_.jobs));
    for (int i = 0; i < options_.jobs; ++i) {
      workload_.sleeper.Sleep(Duration(
          static_cast<int64_t>(workload_.random.Next64() % static_cast<uint64_t>(2 * gap))));
      gh::JobSpec spec;
      spec.repository = kRepository;
      spec.labels = {"self-hosted", kLabel};
      spec.steps = {"make test"};
      Result<gh::Job> job = github_->model().QueueJob(spec);
      if (job.ok()) queued_at_[job->id] = scheduler_.Now();
    }
  }

  // One workflow run's job using the Action on the pool: start (a new member, or a suspended one
  // resumed), run a job on the runner it registered, stop (suspend). An abandoning run never
  // stops in time (cancelled); later it stops with its old handle, which must be refused with
  // no lifecycle call once another run has taken the lease over.
  void ActionRun(Process& p, int index) {
    const int64_t window = std::max<int64_t>(1, options_.arrivals.count());
    if (index >= options_.action_runs) {
      p.seam.sleeper.Sleep(options_.arrivals + Duration(1'800'000));
      // The services have recovered: whatever the faults left behind must now be reconciled.
      for (Faults* f : {&store_faults_, &queue_faults_, &microvms_faults_, &github_faults_}) {
        f->End();
      }
    } else {
      p.seam.sleeper.Sleep(Duration(static_cast<int64_t>(p.seam.random.Next64() % window)));
    }
    SimHttpClient own_vms(scheduler_, microvms_.api(), microvms_faults_, "microvms");
    aws::MicrovmsClient vms(VmsClientOptions(),
                            aws::MicrovmsClientDeps{own_vms, credentials_, p.seam.seam});
    action::ActionDeps deps{p.seam.seam,
                            vms,
                            *p.github,
                            ingress_http_,
                            [this](const Secret& s) { action_secrets_.push_back(s.Reveal()); },
                            nullptr,
                            &store_,
                            Secret(kActionControlKey)};
    const bool final_wave = index >= options_.action_runs;
    // A crashing run dies somewhere in its start, or its stop, if it gets that far.
    const int crash_after =
        !final_wave && Draw(chance_, options_.action_crashes) ? CrashPoint(120) : 0;
    scheduler_.CrashAfter(crash_after);
    OnExit counted([this, unwinding = std::uncaught_exceptions()] {
      if (std::uncaught_exceptions() > unwinding) ++action_crashed_;  // it died (Killed)
    });
    action::StartCommand start;
    start.endpoints = {kRepository, gh::InProcessGithub::kApiUrl, Secret(kToken), "us-east-1"};
    start.identity.repository_id = "123";
    start.identity.run_id = std::to_string(1000 + index);
    start.identity.run_attempt = "1";
    start.identity.job = "build";
    start.image_id = kImage;
    start.event_name = "push";
    start.server = "build-cache";
    start.state_table = "memory:";
    start.server_capacity = options_.action_capacity;
    start.lease_timeout_seconds = options_.action_lease_timeout_seconds;
    const TimePoint began = scheduler_.Now();
    Result<action::StartResult> started = action::StartFlow(deps).Run(start);
    if (!started.ok()) {
      if (started.status().message().find("at capacity") != std::string::npos) {
        ++action_at_capacity_;
        return;
      }
      // A service that keeps failing (the store's own retries spent) may fail a start, with a
      // clear error; what it leaves behind is checked by the other invariants.
      if (IsRetryable(started.status())) {
        ++action_gave_up_;
        return;
      }
      action_failures_.push_back("start of run " + start.identity.run_id +
                                 " failed: " + started.status().ToString());
      return;
    }
    ++action_started_;
    (started->warm_hit ? action_start_warm_ : action_start_cold_)
        .push_back(static_cast<double>((scheduler_.Now() - began).count()) / 1000.0);
    gh::JobSpec spec;
    spec.repository = kRepository;
    spec.labels = {started->label};
    spec.steps = {"make test"};
    Result<gh::Job> job = github_->model().QueueJob(spec);
    if (job.ok()) queued_at_[job->id] = scheduler_.Now();
    const bool abandon =
        static_cast<double>(p.seam.random.Next64() >> 11) * 0x1.0p-53 < options_.action_abandon;
    action::StopCommand stop;
    stop.endpoints = start.endpoints;
    stop.server = started->server;
    stop.state_table = "memory:";
    stop.repository_id = "123";
    if (!abandon) {
      for (int i = 0; i < 120 && job.ok(); ++i) {  // the job runs, then the stop step
        Result<gh::Job> now = github_->model().GetJobById(job->id);
        if (now.ok() && now->status == "completed") break;
        p.seam.sleeper.Sleep(Duration(5'000));
      }
      Result<action::StopResult> stopped = action::StopFlow(deps).Run(stop);
      if (!stopped.ok() && IsRetryable(stopped.status())) {
        ++action_gave_up_;
      } else if (!stopped.ok()) {
        action_failures_.push_back("stop of run " + start.identity.run_id +
                                   " failed: " + stopped.status().ToString());
      }
      return;
    }
    // Cancelled: the stop comes long after the lease expired (or never, for a real cancel).
    p.seam.sleeper.Sleep(Duration(options_.action_lease_timeout_seconds * 3000));
    Result<action::PoolHandle> handle = action::DecodePoolHandle(started->server);
    if (!handle.ok()) return;
    Result<std::optional<store::Item>> row =
        memory_store_.Get({action::PoolPartition(handle->repository_id, handle->server_key_hash),
                           action::MemberSortKey(handle->member_id)});
    int64_t generation = 0;
    if (row.ok() && *row) {
      Result<action::MemberRecord> member = action::MemberFromItem(**row);
      if (member.ok()) generation = member->generation;
    }
    if (generation <= handle->generation) {
      // Nobody took it over: the late stop (a cancelled run's always() step) releases it.
      Result<action::StopResult> late = action::StopFlow(deps).Run(stop);
      if (!late.ok() && !IsRetryable(late.status())) {
        action_failures_.push_back("the late stop of run " + start.identity.run_id +
                                   " failed: " + late.status().ToString());
      }
      return;
    }
    const size_t calls_before = own_vms.mutations();
    Result<action::StopResult> late = action::StopFlow(deps).Run(stop);
    const size_t lifecycle_calls = own_vms.mutations() - calls_before;
    if (late.ok() && late->outcome != "already released") {
      action_failures_.push_back("run " + start.identity.run_id + "'s stale handle (generation " +
                                 std::to_string(handle->generation) + ", member now at " +
                                 std::to_string(generation) + ") was accepted: " + late->outcome);
    } else if (lifecycle_calls > 0) {
      action_failures_.push_back("run " + start.identity.run_id + "'s stale stop made " +
                                 std::to_string(lifecycle_calls) + " MicroVMs lifecycle call(s)");
    } else {
      ++action_stale_stops_;
    }
  }

  // Every VM the MicroVMs model holds, read without a scheduling point (the checks' view).
  std::vector<json> ModelVms() {
    return microvms_.WithModel([&](vms::MicrovmModel& model) {
      Result<json> listed = model.Invoke("ListMicrovms", json::object());
      std::vector<json> out;
      if (listed.ok()) out = (*listed)["items"].get<std::vector<json>>();
      return out;
    });
  }

  // The capacity a pooled request states bounds the members it creates: the pool never holds
  // more live VMs than the runs' server-capacity.
  void CheckCapacity() {
    if (options_.action_runs == 0) return;
    int live = 0;
    for (const json& vm : ModelVms()) {
      const std::string state = vm.value("state", "");
      live += state != "TERMINATED" && state != "TERMINATING";
    }
    if (live > options_.action_capacity && !over_capacity_) {
      over_capacity_ = true;
      action_failures_.push_back("the pool holds " + std::to_string(live) +
                                 " live VMs, over the runs' server-capacity of " +
                                 std::to_string(options_.action_capacity));
      scheduler_.Note("VIOLATION over capacity");
    }
  }

  // Crashes a launcher, the janitor or the sweeper now and then; a new one takes its place, as
  // Lambda starts a new sandbox (or systemd restarts `mvr serve`).
  void Chaos() {
    const double per_minute = options_.crashes_per_hour / 60.0;
    while (true) {
      chaos_.sleeper.Sleep(Duration(60'000));
      if (!Draw(chance_, per_minute) || crashable_.empty()) continue;
      const size_t pick = chance_.Next64() % crashable_.size();
      const auto [role, id] = crashable_[pick];
      crashable_.erase(crashable_.begin() + static_cast<std::ptrdiff_t>(pick));
      scheduler_.Kill(id);
      SpawnRole(role);
    }
  }

  // Where a crashing actor dies: at one of its next `span` seam calls.
  int CrashPoint(int span) {
    return 1 + static_cast<int>(chance_.Next64() % static_cast<uint64_t>(span));
  }

  void CheckTheEnd(WorldReport& report) {
    const std::vector<std::string> seen = guest_.violations();
    report.violations.insert(report.violations.begin(), seen.begin(), seen.end());
    report.violations.insert(report.violations.end(), action_failures_.begin(),
                             action_failures_.end());
    report.action_started = action_started_;
    report.action_at_capacity = action_at_capacity_;
    report.action_stale_stops = action_stale_stops_;
    report.action_gave_up = action_gave_up_;
    report.action_crashed = action_crashed_;
    report.action_start_cold = action_start_cold_;
    report.action_start_warm = action_start_warm_;
    report.webhook_handler_crashes = webhook_handler_crashes_;
    const std::vector<gh::Job> jobs = github_->model().ListAllJobs();
    report.jobs = static_cast<int>(jobs.size());
    const std::map<int64_t, JobTimes> times = guest_.jobs();
    for (const gh::Job& job : jobs) {
      if (job.status == "completed" && job.conclusion == "success") {
        ++report.jobs_completed;
      } else {
        report.violations.push_back("job " + std::to_string(job.id) + " never ran: it is " +
                                    job.status +
                                    (job.conclusion.empty() ? "" : " (" + job.conclusion + ")"));
      }
      auto started = times.find(job.id);
      auto queued = queued_at_.find(job.id);
      if (started != times.end() && started->second.started && queued != queued_at_.end()) {
        report.start_seconds.push_back(
            static_cast<double>((*started->second.started - queued->second).count()) / 1000.0);
      }
    }
    // Every VM older than the janitor's bound has ended, but a warm pool's SUSPENDED members.
    const double now_s = std::chrono::duration<double>(scheduler_.Now().time_since_epoch()).count();
    const double bound_s = static_cast<double>(JanitorBound().count()) / 1000.0;
    const bool pools =
        options_.warm_pool_size > 0 || options_.hot_pool_size > 0 || options_.action_runs > 0;
    for (const json& vm : ModelVms()) {
      const std::string state = vm.value("state", "");
      const double age_s = now_s - vm.value("startedAt", 0.0);
      if (state == "TERMINATED" || state == "TERMINATING" || age_s < bound_s ||
          (pools && state == "SUSPENDED")) {
        continue;
      }
      report.violations.push_back("VM " + vm.value("microvmId", "") + " is still " + state +
                                  " after " + std::to_string(static_cast<int64_t>(age_s)) +
                                  " s, past the janitor's bound of " +
                                  std::to_string(static_cast<int64_t>(bound_s)) + " s");
    }
    for (const gh::Runner& runner : github_->model().ListAllRunners()) {
      // A hot member's runner stays registered, parked with its suspended VM.
      if (options_.hot_pool_size > 0 && runner.name.find("hot-") != std::string::npos) continue;
      // A run that died between registering its runner and naming it on its member leaves it
      // unused: no reconcile knows it, and GitHub removes an ephemeral runner that has not
      // connected for a day. At most one such runner per crashed run, never one given a job.
      if (!runner.job_id && !runner.busy && report.action_runners_left < action_crashed_) {
        ++report.action_runners_left;
        continue;
      }
      report.violations.push_back("runner " + runner.name + " is still registered at the end");
    }
    CheckLogs(report);
    report.runners_started = guest_.runners_started();
    for (const char* counter :
         {"sweeps", "strikes_added", "strikes_cleared", "busy_spared", "runners_removed",
          "vms_terminated", "orphans_terminated", "launches_recovered", "errors"}) {
      if (int64_t n = metrics_.GetJanitor(counter)) report.janitor[counter] = n;
    }
    report.idle_vm_seconds = guest_.IdleVmSeconds(scheduler_.Now());
    auto seconds = [](Duration d) { return static_cast<double>(d.count()) / 1000.0; };
    for (const auto& [job, l] : guest_.launches()) {
      auto queued = queued_at_.find(job);
      if (queued == queued_at_.end()) continue;
      report.to_vm_running.push_back(seconds(l.vm_ready - queued->second));
      report.to_first_log.push_back(seconds(l.runner_started - l.vm_ready));
      report.to_connected.push_back(seconds(l.connected - l.runner_started));
      report.to_job.push_back(seconds(l.job_started - l.connected));
    }
    report.microvms_calls = vms_http_.requests();
    report.github_calls = github_http_.requests();
    for (const Faults* f : {&store_faults_, &queue_faults_, &microvms_faults_, &github_faults_}) {
      for (const auto& [what, n] : f->counts()) report.faults[what] += n;
    }
  }

  // How long a VM with no job may live. A launch that crashed after RunMicrovm leaves a VM its
  // claim protects until the takeover age; then the intent comes back after the visibility
  // timeout (the takeover terminates it) or the janitor strikes it out: takeover + visibility +
  // (strikes + 2) sweeps. The launch timeout and graceSeconds are shorter than the first two.
  Duration JanitorBound() const {
    const runnerset::JanitorSettings& j = config_.janitor;
    return config_.claim_takeover_after() + config_.visibility_timeout() +
           Duration((j.strikes + 2) * j.interval_seconds * 1000LL);
  }

  // No secret in any log line of any actor or service.
  void CheckLogs(WorldReport& report) {
    std::vector<std::string> secrets = guest_.secrets();
    secrets.insert(secrets.end(), action_secrets_.begin(), action_secrets_.end());
    for (const char* fixture : {kToken, kWebhookSecret, kSecretKey}) secrets.emplace_back(fixture);
    std::vector<const MemorySink*> sinks = {&services_sink_, &platform_.sink, &webhooks_.sink,
                                            &workload_.sink, &chaos_.sink};
    for (const auto& p : processes_) sinks.push_back(&p->seam.sink);
    if (options_.keep_logs) {
      for (const MemorySink* sink : sinks) {
        for (const std::string& line : sink->lines()) report.logs.push_back(line);
      }
    }
    for (const MemorySink* sink : sinks) {
      for (const std::string& line : sink->lines()) {
        for (const std::string& secret : secrets) {
          if (!secret.empty() && line.find(secret) != std::string::npos) {
            report.violations.push_back("a secret reached a log line: " + line.substr(0, 120));
            return;
          }
        }
      }
    }
  }

  WorldOptions options_;
  runnerset::ServeConfig config_ = ConfigFor(options_);
  Scheduler scheduler_;
  // The shared services read virtual time under their own locks: no scheduling point there.
  VirtualClock clock_{scheduler_};
  SimSleeper sleeper_{scheduler_};
  SeededRandom services_random_{options_.seed * 7919 + 6};
  MemorySink services_sink_;
  Logger services_logger_{services_sink_, clock_};
  Seam services_{clock_, sleeper_, services_random_, services_random_, services_logger_};
  Faults store_faults_, queue_faults_, microvms_faults_, github_faults_;
  SeededRandom chance_;  // the world's own draws: webhook faults, crashes, skews
  store::MemoryStore memory_store_;
  SimStore store_;
  queue::MemoryQueue memory_queue_;
  SimQueue queue_;
  std::unique_ptr<gh::InProcessGithub> github_;
  SimGuest guest_;
  vms::InProcessMicrovms microvms_;
  SimHttpClient vms_http_, ingress_http_, github_http_;
  std::optional<runnerset::WebhookRouter> router_;
  aws::StaticCredentialsProvider credentials_{
      aws::AwsCredentials{kKeyId, Secret(kSecretKey), Secret(), std::nullopt, "sim"}};
  runnerset::Metrics metrics_;
  ActorSeam platform_{scheduler_};
  ActorSeam webhooks_{scheduler_};
  ActorSeam workload_{scheduler_};
  ActorSeam chaos_{scheduler_};
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
  bool over_capacity_ = false;
};

}  // namespace

WorldReport RunRunnerSet(const WorldOptions& options) {
  auto world = std::make_unique<World>(options);
  return world->Run();
}

}  // namespace mvr::sim
