// sim::World's actors of the runner set and the platform: launchers, the janitor, the warm-pool
// sweeper, the platform's timers and webhooks, each webhook delivery's handler, and the chaos
// that crashes the set's processes.
#include <algorithm>
#include <exception>

#include "runnerset/intake/webhook_endpoint.h"
#include "runnerset/janitor/janitor.h"
#include "runnerset/launch/consumer.h"
#include "runnerset/launch/launcher.h"
#include "runnerset/pools/sweep/pool_sweeper.h"
#include "runnerset/serve/pool_sweepers.h"
#include "sim/world.h"

namespace mvr::sim {

namespace gh = emulate::github;

// A launcher: takes one intent at a time off the queue, as a `launcher` invocation does.
void World::LauncherLoop(Process& p) {
  runnerset::Launcher launcher(
      config_,
      runnerset::LauncherDeps{p.seam.seam, p.vms, *p.github, ingress_http_, p.table, metrics_,
                              nullptr, &p.pool, Secret(kSetControlKey), &class_health_,
                              /*defer_rate_limited=*/!options_.plant_rate_blind, &p.arrivals,
                              options_.plant_undo_job_state,
                              /*adopt_dead_launches=*/!options_.plant_kill_dead_launches,
                              /*check_hot_registration=*/!options_.plant_stale_hot,
                              /*wait_for_approval=*/!options_.plant_launch_waiting});
  while (true) {
    queue::ReceiveOptions ro;
    ro.max_messages = std::max(1, options_.sequential_batch);
    ro.visibility = config_.visibility_timeout();
    ro.wait = Duration(20'000);  // the event source mapping's long poll
    Result<std::vector<queue::QueueMessage>> got = queue_.Receive(ro);
    if (!got.ok()) p.seam.sleeper.Sleep(Duration(1'000));
    if (!got.ok() || got->empty()) continue;
    for (const queue::QueueMessage& m : *got) {
      const TimePoint began = scheduler_.Now();
      runnerset::HandleMessage(queue_, launcher, p.seam.seam, m, config_.queue.max_receive_count);
      Invoked("launcher", began);
      if (options_.check_order) NoteCompleted(m);
    }
  }
}

void World::JanitorLoop(Process& p) {
  runnerset::Janitor janitor(
      config_,
      runnerset::JanitorDeps{p.seam.seam, p.vms, *p.github, p.table, queue_, metrics_, &p.pool,
                             &ingress_http_, &class_health_, !options_.plant_kill_dead_launches});
  const Duration interval(config_.janitor.interval_seconds * 1000LL);
  while (true) {
    p.seam.sleeper.Sleep(interval);
    const TimePoint began = scheduler_.Now();
    const runnerset::SweepReport swept = janitor.Sweep();
    Invoked("janitor", began);
    if (swept.paced) continue;
    const TimePoint now = scheduler_.Now();
    if (janitor_swept_) janitor_gap_ = std::max(janitor_gap_, now - *janitor_swept_);
    janitor_swept_ = now;
  }
}

void World::SweeperLoop(Process& p) {
  runnerset::PoolSweeper sweeper(config_,
                                 runnerset::PoolSweeperDeps{p.seam.seam,
                                                            p.vms,
                                                            p.pool,
                                                            p.github,
                                                            &ingress_http_,
                                                            &p.table,
                                                            Secret(kSetControlKey),
                                                            &class_health_,
                                                            runnerset::kDefaultHotSettle,
                                                            {},
                                                            &p.arrivals,
                                                            !options_.plant_kill_dead_launches});
  runnerset::AddPoolSweepers(sweeper);
  const Duration interval(config_.warm_pool.interval_seconds * 1000LL);
  while (true) {
    const TimePoint began = scheduler_.Now();
    const runnerset::PoolSweepReport swept = sweeper.Sweep();
    Invoked("warm-pool", began);
    if (swept.errors == 0) {
      const TimePoint now = scheduler_.Now();
      if (sweeper_swept_) sweeper_gap_ = std::max(sweeper_gap_, now - *sweeper_swept_);
      sweeper_swept_ = now;
    }
    p.seam.sleeper.Sleep(interval);
  }
}

// The platform: the models' timers (VM boots, GitHub's scheduler) and GitHub's webhooks.
void World::Platform() {
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
      guest_.CheckIdle(JanitorBound(), PoolBound());
      next_idle_check = scheduler_.Now() + Duration(30'000);
    }
  }
}

// A delivery GitHub sends: lost, or handled once or twice (duplicated), each copy by an actor of
// its own after its network delay (late ones reordered), and maybe crashing mid-way.
void World::Deliver(gh::HeldDelivery held) {
  const WebhookFaults& f = options_.webhooks;
  const std::string name =
      "webhook " + held.delivery.action + " job " + std::to_string(held.delivery.job_id);
  if (webhooks_down_ || options_.scale_set.enabled) {
    // Nothing listens (with a scale set, no webhook points at the set): GitHub records a failed
    // delivery and never tries again by itself.
    scheduler_.Note(name + " refused: the set is down");
    gh::DeliveryOutcome refused;
    refused.error = "connection refused";
    held.done(refused);
    return;
  }
  if (Chance(chance_, f.lost)) {
    scheduler_.Note(name + " lost");
    gh::DeliveryOutcome lost;
    lost.lost = true;
    held.done(lost);
    return;
  }
  const int copies = Chance(chance_, f.duplicated) ? 2 : 1;
  auto shared = std::make_shared<gh::HeldDelivery>(std::move(held));
  for (int copy = 0; copy < copies; ++copy) {
    Duration delay(50 + static_cast<int64_t>(chance_.Next64() % 1'500));
    if (Chance(chance_, f.late)) {
      delay += Duration(
          static_cast<int64_t>(chance_.Next64() % static_cast<uint64_t>(f.late_by.count() + 1)));
    }
    const int crash_after = Chance(chance_, f.handler_crashes) ? CrashPoint(12) : 0;
    scheduler_.Spawn(name, [this, shared, copy, delay, crash_after] {
      HandleDelivery(shared, copy, delay, crash_after);
    });
  }
}

// One copy of a delivery reaching the real webhook handler; GitHub hears the first copy's answer.
void World::HandleDelivery(const std::shared_ptr<gh::HeldDelivery>& held, int copy, Duration delay,
                           int crash_after) {
  webhooks_.sleeper.Sleep(delay);
  // A handler that dies leaves GitHub waiting until its delivery times out.
  bool answered = copy != 0;
  OnExit timed_out([&, unwinding = std::uncaught_exceptions()] {
    if (std::uncaught_exceptions() > unwinding) ++webhook_handler_crashes_;
    if (answered) return;
    gh::DeliveryOutcome outcome;
    outcome.error = "timed out: the endpoint did not answer";
    held->done(outcome);
  });
  scheduler_.CrashAfter(crash_after);
  const TimePoint began = scheduler_.Now();
  runnerset::WebhookAnswer answer =
      runnerset::AnswerWebhook(*router_, queue_, metrics_, webhooks_.logger, held->delivery.headers,
                               held->delivery.payload, webhooks_.clock.Now());
  Invoked("webhook", began);
  scheduler_.CrashAfter(0);
  if (copy == 0) {
    gh::DeliveryOutcome outcome;
    outcome.status = answer.status;
    outcome.copies_sent = 1;
    answered = true;
    held->done(outcome);
  }
}

// Crashes a launcher, the janitor or the sweeper now and then; a new one takes its place, as
// Lambda starts a new sandbox (or systemd restarts `mvr serve`).
void World::Chaos() {
  const double per_minute = options_.crashes_per_hour / 60.0;
  while (true) {
    chaos_.sleeper.Sleep(Duration(60'000));
    if (!Chance(chance_, per_minute) || crashable_.empty()) continue;
    const size_t pick = chance_.Next64() % crashable_.size();
    const auto [role, id] = crashable_[pick];
    crashable_.erase(crashable_.begin() + static_cast<std::ptrdiff_t>(pick));
    if (role == Role::kLauncher) NoteClaimsOfKilledLauncher();
    scheduler_.Kill(id);
    SpawnRole(role);
  }
}

// An App key revoked or a PAT expired: GitHub answers 401 to the set's calls until an operator
// writes a new PAT where the set reads its secret; the set must notice that without a restart.
void World::CredentialsOutage() {
  outage_.sleeper.Sleep(options_.credentials_revoked_at);
  github_->auth().RevokePat(kToken).IgnoreError();
  revoked_at_ = scheduler_.Now();
  scheduler_.Note("credentials revoked");
  outage_.sleeper.Sleep(options_.credentials_outage);
  github_->auth().AddPat(Secret(kFixedToken));
  github_secret_ = kFixedToken;
  fixed_at_ = scheduler_.Now();
  scheduler_.Note("credentials fixed");
}

void World::MaybeDieBeforeCommit() {
  const ActorId self = scheduler_.CurrentId();
  auto entry = std::find_if(crashable_.begin(), crashable_.end(), [&](const auto& c) {
    return c.first == Role::kLauncher && c.second == self;
  });
  // Only a launcher's commit (the sweeper's and the janitor's adoptions commit too), and only one
  // that is still crashable (not already dying).
  if (entry == crashable_.end() || !Chance(chance_, options_.launch_dies_before_commit)) return;
  crashable_.erase(entry);
  ++launches_died_at_commit_;
  scheduler_.Note("a launcher dies between its delivery and its commit");
  NoteClaimsOfKilledLauncher();
  SpawnRole(Role::kLauncher);
  scheduler_.CrashAfter(1);  // the commit's own scheduling point, before it is applied
}

void World::Invoked(const char* function, TimePoint began) {
  WorldReport::LambdaUse& use = lambda_[function];
  ++use.invocations;
  use.seconds += static_cast<double>((scheduler_.Now() - began).count()) / 1000.0;
}

int World::CrashPoint(int span) {
  return 1 + static_cast<int>(chance_.Next64() % static_cast<uint64_t>(span));
}

}  // namespace mvr::sim
