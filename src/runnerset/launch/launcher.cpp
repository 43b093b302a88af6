// Launcher: an intent's way in. The launch's decision (launch_decision.h) asks for its evidence
// piece by piece; Gather reads each, Settle and Defer carry out a verdict that ends the intent,
// and an admitted launch runs its attempts (launcher_attempt.cpp) along its class's route.
#include "runnerset/launch/launcher.h"

#include <algorithm>
#include <memory>

#include "runnerset/launch/launcher_attempt.h"
#include "runnerset/metrics/rate_budget_metrics.h"

namespace mvr::runnerset {
namespace {

// GitHub's secondary limits are per App: a set with several shares its JIT configs among them.
int JitPerMinute(const ServeConfig& config) {
  const size_t apps = std::max<size_t>(1, config.github.apps.size());
  return config.launcher.jit_configs_per_minute * static_cast<int>(apps);
}

}  // namespace

const char* LaunchDecisionName(LaunchDecision decision) {
  switch (decision) {
    case LaunchDecision::kLaunched:
      return "launched";
    case LaunchDecision::kDuplicate:
      return "duplicate";
    case LaunchDecision::kDroppedNotQueued:
      return "dropped_not_queued";
    case LaunchDecision::kIgnored:
      return "ignored";
    case LaunchDecision::kDeferred:
      return "deferred";
    case LaunchDecision::kFailed:
      return "failed";
    case LaunchDecision::kTerminated:
      return "terminated";
    case LaunchDecision::kHeld:
      return "held";
  }
  return "unknown";
}

Launcher::Launcher(const ServeConfig& config, LauncherDeps deps)
    : config_(config),
      deps_(deps),
      scope_(RunnerScopeOf(config)),
      cap_(deps.table.store(), deps.seam),
      jobs_(deps.table.store(), deps.seam.clock, deps.plant_undo_job_state),
      run_pacer_(deps.seam.clock, deps.seam.sleeper, config.launcher.run_microvm_per_second),
      // No burst: calls one interval apart, as the per-process pacer did. A burst as large as
      // the platform's leaves no room for a call that reaches it late beside one on time
      // (RunnerSetEndToEnd.ABurstOfTwentyLaunchesConcurrentlyAtThePlatformRate met 429s).
      run_pace_(deps.table.store(), deps.seam.clock, "runmicrovm",
                config.launcher.run_microvm_per_second, 1),
      jit_pace_(deps.table.store(), deps.seam.clock, "jitconfig", JitPerMinute(config),
                Duration(60'000)) {}

LaunchOutcome Launcher::Handle(const Intent& intent) {
  LaunchOutcome o =
      std::holds_alternative<LaunchIntent>(intent)  ? Launch(std::get<LaunchIntent>(intent))
      : std::holds_alternative<TakenIntent>(intent) ? Taken(std::get<TakenIntent>(intent))
      : std::holds_alternative<JobEventIntent>(intent)
          ? NoteJobEvent(std::get<JobEventIntent>(intent))
          : Terminate(std::get<TerminateIntent>(intent));
  Record(o);
  return o;
}

void Launcher::Record(const LaunchOutcome& o) {
  // What is left of GitHub's rate budget after this launch (the Lambda functions' EMF lines).
  deps_.metrics.SetGauges(GitHubGauges(deps_.github, deps_.seam.clock.Now()));
  switch (o.decision) {
    case LaunchDecision::kLaunched:
      deps_.metrics.Add(Counter::kLaunched);
      break;
    case LaunchDecision::kDuplicate:
      deps_.metrics.Add(Counter::kDuplicate);
      break;
    case LaunchDecision::kDroppedNotQueued:
      deps_.metrics.Add(Counter::kDroppedNotQueued);
      break;
    case LaunchDecision::kIgnored:
      deps_.metrics.Add(Counter::kIgnored);
      break;
    case LaunchDecision::kDeferred:
      deps_.metrics.Add(Counter::kDeferred);
      break;
    case LaunchDecision::kFailed:
      deps_.metrics.Add(Counter::kFailed);
      break;
    case LaunchDecision::kTerminated:
      deps_.metrics.Add(Counter::kTerminated);
      break;
    case LaunchDecision::kHeld:
      deps_.metrics.Add(Counter::kHeld);
      break;
  }
}

bool Launcher::InScope(const std::string& repository) const {
  return config_.github.Serves(repository);
}

std::optional<std::string> Launcher::RefusedClass(const RunnerClass& cls, bool take) {
  if (!deps_.health) return std::nullopt;
  const RunnerClass& launch = deps_.health->LaunchClass(config_, cls);
  if (deps_.health->Admit(launch, take) != ClassHealth::Admission::kHeld) return std::nullopt;
  return launch.label;
}

LaunchOutcome Launcher::Launch(const LaunchIntent& in) {
  // The janitor launches a job GitHub's jobs API lists as queued.
  return LaunchAs(in, in.delivery_id == "janitor" ? JobAction::kRequeued : JobAction::kQueued);
}

LaunchOutcome Launcher::LaunchAs(const LaunchIntent& in, JobAction action,
                                 const github::Job* just_read) {
  // The decision asks for the evidence it lacks, in its order (launch_decision.h); each piece is
  // gathered only once the ones before it let the launch go on.
  LaunchEvidence evidence;
  evidence.intent = &in;
  evidence.cls = config_.FindClass(in.class_label);
  evidence.in_scope = InScope(in.repository);
  evidence.defer_rate_limited = deps_.defer_rate_limited;
  Gathered gathered;
  gathered.action = action;
  gathered.just_read = just_read;
  if (evidence.cls != nullptr) evidence.breaker = GatherBreaker(*evidence.cls);
  int64_t probe_ms = 0;  // the half-open probe this launch took
  for (;;) {
    const LaunchVerdict verdict = DecideLaunch(evidence);
    if (verdict.step != LaunchStep::kGather || verdict.reason == LaunchReason::kNeedClaim) {
      LaunchOutcome o = verdict.step != LaunchStep::kGather ? Settle(verdict, evidence, gathered)
                                                            : LaunchOnRoute(evidence, gathered);
      if (probe_ms != 0) SettleProbe(*evidence.cls, probe_ms, o);
      return o;
    }
    if (verdict.reason == LaunchReason::kNeedProbe) {
      probe_ms = TakeProbe(in, *evidence.cls);
      evidence.breaker.probe_taken = probe_ms != 0;
      continue;
    }
    Gather(verdict.reason, evidence, gathered);
  }
}

void Launcher::Gather(LaunchReason need, LaunchEvidence& e, Gathered& g) {
  const LaunchIntent& in = *e.intent;
  switch (need) {
    case LaunchReason::kNeedJobState:
      // A late queued (the job is in progress or completed already) launches nothing; the job's
      // state says whether it was seen waiting for an approval (launcher_job_state.cpp).
      return GatherJobState(in, e, g);
    case LaunchReason::kNeedRateRoom:
      // (0) GitHub's rate limits leave no room for a JIT runner now: wait, without asking GitHub.
      e.rate = RateRoomNow();
      return;
    case LaunchReason::kNeedRefusal:
    case LaunchReason::kNeedRefusalWithSeat: {
      // Only the second look, with a seat taken, spends a probe that is due.
      const bool take = need == LaunchReason::kNeedRefusalWithSeat;
      std::optional<std::string> refused = RefusedClass(*e.cls, take);
      if (refused) g.held_class = *refused;
      (take ? e.refused_with_seat : e.refused) = refused.has_value();
      return;
    }
    case LaunchReason::kNeedStillNeeded: {
      // (1) Still queued (or its runner taken by another job)? Fails open, but for GitHub's rate
      // limits, which the launch waits for.
      Result<Need> needed =
          StillNeeded(in, !g.stale.empty(), g.action == JobAction::kRequeued, &g.head, g.just_read);
      e.need = needed.ok() ? std::optional<JobNeed>(*needed) : std::nullopt;
      if (!needed.ok()) g.need_error = needed.status();
      return;
    }
    case LaunchReason::kNeedSeat: {
      // (2) The concurrency cap defers, never fails: a seat in the store (cap_ledger.h), shared
      // between repositories by launcher.fairShare (launcher_fair_share.cpp).
      Result<std::optional<CapSeat>> seat = TakeSeat(in, g.seat_wait);
      e.seat = seat.ok() ? std::optional<bool>(seat->has_value()) : std::nullopt;
      e.seat_others_turn = seat.ok() && !seat->has_value() && g.seat_wait.why != "cap";
      if (seat.ok()) g.seat = *seat;
      if (!seat.ok()) g.seat_error = seat.status();
      return;
    }
    default:
      return;  // an attempt's evidence (the claim, the pools' health): Run gathers it
  }
}

LaunchOutcome Launcher::Settle(const LaunchVerdict& v, const LaunchEvidence& e, Gathered& g) {
  const LaunchIntent& in = *e.intent;
  LaunchOutcome out;
  switch (v.reason) {
    case LaunchReason::kNoClass:
      out.detail = "no runner class has the label " + in.class_label;
      break;
    case LaunchReason::kLabelsNotOffered:
      out.detail = "class " + e.cls->label +
                   " does not offer every label the job asks for (labelMatch " +
                   LabelMatchName(e.cls->label_match) + ")";
      break;
    case LaunchReason::kOutOfScope:
      out.detail = "the repository " + in.repository + " is outside the set's " + scope_.ToString();
      break;
    case LaunchReason::kJobStateUnreadable:
      out.retry_after = config_.defer_delay();
      out.detail = "reading the job's state: " + g.job_error.ToString();
      break;
    case LaunchReason::kLateQueued:
      out.detail = g.stale;
      break;
    case LaunchReason::kNotQueued:
      out.detail = "GitHub says the job is no longer queued";
      break;
    case LaunchReason::kRefusedWithSeat:
      cap_.Free(*g.seat).IgnoreError();  // a seat left behind is freed by the next reconciliation
      [[fallthrough]];
    case LaunchReason::kRefused:
      out.detail = "GitHub refuses the runner of class " + g.held_class +
                   " and no fallbackClass is healthy: the job waits for a new image version (the " +
                   "janitor launches it then)";
      break;
    default:
      return Defer(v.reason, e, g);
  }
  out.decision = v.step == LaunchStep::kIgnore ? LaunchDecision::kIgnored
                 : v.step == LaunchStep::kFail ? LaunchDecision::kFailed
                 : v.step == LaunchStep::kDrop ? LaunchDecision::kDroppedNotQueued
                                               : LaunchDecision::kHeld;
  return out;
}

LaunchOutcome Launcher::Defer(LaunchReason reason, const LaunchEvidence& e, Gathered& g) {
  const LaunchIntent& in = *e.intent;
  LaunchOutcome out;
  out.decision = LaunchDecision::kDeferred;
  out.retry_after = config_.defer_delay();
  switch (reason) {
    case LaunchReason::kRateLimited:
      return DeferForRateRoom(in, *e.rate);
    case LaunchReason::kRateLimitedAsking:
      return DeferForRateLimit(in.job_id, g.need_error, LaunchOutcome{});
    case LaunchReason::kAwaitingApproval:
    case LaunchReason::kApprovalUnknown:
      return DeferForApproval(in, reason == LaunchReason::kAwaitingApproval);
    case LaunchReason::kClassPaused:
      return DeferForPause(in, e);
    case LaunchReason::kSeatsUnreadable:
      out.detail = "cannot read the cap's seats: " + g.seat_error.ToString();
      deps_.metrics.AddDeferral("list_failed");
      return out;
    case LaunchReason::kAtCap:
    case LaunchReason::kNotItsTurn:
      // Due back at its turn (FairShareDueIn), not every deferSeconds: each return re-reads the
      // job on GitHub.
      if (g.seat_wait.due > Duration(0)) out.retry_after = g.seat_wait.due;
      out.detail = SeatDeferralDetail(g.seat_wait.why, config_.max_concurrent_vms);
      deps_.metrics.AddDeferral(g.seat_wait.why);
      return out;
    default:
      out.decision = LaunchDecision::kFailed;
      out.detail =
          std::string("no way to carry out the launch's verdict ") + LaunchReasonName(reason);
      return out;
  }
}

LaunchOutcome Launcher::LaunchOnRoute(const LaunchEvidence& evidence, Gathered& g) {
  const Seam& seam = deps_.seam;
  const LaunchIntent& in = *evidence.intent;
  const RunnerClass* asked = evidence.cls;
  const RunnerClass* cls = asked;
  if (DecideBreakerRoute(evidence.breaker, in) == BreakerRoute::kFallback) {
    cls = evidence.breaker.fallback;
    seam.logger.Info(
        "class paused by its circuit breaker; launching on its fallbackClass",
        {{"job_id", in.job_id}, {"class", asked->label}, {"fallback_class", cls->label}});
    deps_.metrics.Add(Counter::kBreakerFallback);
  }
  if (deps_.health) cls = &deps_.health->LaunchClass(config_, *cls);
  cls = &capacity_.Route(config_, *cls, seam.clock.Now());
  LaunchOutcome o;
  bool keep_seat = false;
  // A class the platform has no capacity or quota for falls back along its fallbackClass chain.
  for (size_t hop = 0; hop <= config_.classes.size(); ++hop) {
    auto attempt = std::make_unique<Attempt>(seam, *this, in, *cls);
    attempt->seat = *g.seat;
    attempt->deadline = seam.clock.Now() + config_.launch_timeout();
    attempt->times.received_ms = ToUnixMillis(in.queued_at);
    attempt->fence = FenceOf(in, g.head);
    if (hop == 0 && asked->has_pool_target()) attempt->counts_for = asked;
    o = Run(*attempt, evidence);
    keep_seat = keep_seat || attempt->keep_seat;
    if (!attempt->out_of_capacity || o.decision != LaunchDecision::kFailed) break;
    const RunnerClass* fallback = capacity_.Short(config_, *cls, seam.clock.Now());
    if (!fallback) break;
    seam.logger.Warn("no capacity for the class; launching on its fallbackClass",
                     {{"job_id", in.job_id},
                      {"class", cls->label},
                      {"fallback_class", fallback->label},
                      {"error", o.detail}});
    deps_.metrics.Add(Counter::kCapacityFallback);
    cls = fallback;
  }
  if (o.decision != LaunchDecision::kLaunched && !keep_seat) cap_.Free(*g.seat).IgnoreError();
  if (o.decision == LaunchDecision::kLaunched) NoteVmBooted(*cls);
  return o;
}

void Launcher::CountArrival(const RunnerClass& cls, const LaunchIntent& in) {
  // The count only sizes a pool: a failure is logged and the launch goes on.
  if (Status s = deps_.arrivals->Record(cls.label, in.queued_at); !s.ok()) {
    deps_.seam.logger.Warn("counting the job among its class's arrivals",
                           {{"job_id", in.job_id}, {"class", cls.label}, {"error", s.ToString()}});
  }
}

}  // namespace mvr::runnerset
