#include "runnerset/launch/launcher.h"
#include "runnerset/metrics/rate_budget_metrics.h"

#include "runnerset/launch/launcher_attempt.h"

#include <algorithm>
#include <memory>

#include "fleet/control_delivery.h"
#include "fleet/microvm_lifecycle.h"
#include "fleet/network_connectors.h"
#include "fleet/runner_registration.h"
#include "github/labels.h"
#include "github/platform_labels.h"
#include "runnerset/classes/class_resolve.h"
#include "runnerset/config/runner_name.h"
#include "supervisor/run_payload.h"

namespace mvr::runnerset {
namespace {

// Time a failing launch may spend cleaning up after its deadline.
constexpr Duration kCleanupTime{60'000};

bool Live(aws::MicrovmState s) { return s != aws::MicrovmState::kTerminated; }

// Whether RunMicrovm's failure says no VM was made: the request was refused as invalid,
// unauthorized, for an unknown image, for want of capacity or quota, or for a clientToken reused
// with other parameters. A timeout, a 5xx or a throttle after retries leaves the outcome unknown.
bool RefusedToRun(const Status& s) {
  switch (s.code()) {
    case Code::kInvalidArgument:
    case Code::kUnauthorized:
    case Code::kNotFound:
    case Code::kConflict:
    case Code::kQuotaExceeded:
      return true;
    default:
      return IsOutOfCapacity(s);
  }
}

// The labels a cold runner registers with: an ARM64 MicroVM's (self-hosted, linux, ARM64), the
// class label and the job's own (so GitHub hands the job to it; the class took it, so they are
// among what the class offers, and never another platform's: github/platform_labels.h).
std::vector<std::string> RunnerLabels(const LaunchIntent& in) {
  std::vector<std::string> custom{in.class_label};
  custom.insert(custom.end(), in.labels.begin(), in.labels.end());
  return github::Arm64RunnerLabels(custom);
}

}  // namespace

std::vector<std::string> HotRunnerLabels(const std::string& class_label) {
  return github::Arm64RunnerLabels({class_label});
}

bool FitsClassLabelAlone(const LaunchIntent& in) {
  const std::vector<std::string> hot = HotRunnerLabels(in.class_label);
  for (const std::string& l : in.labels) {
    if (std::none_of(hot.begin(), hot.end(),
                     [&](const std::string& h) { return github::LabelEquals(h, l); })) {
      return false;
    }
  }
  return true;
}

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
      run_pacer_(deps.seam.clock, deps.seam.sleeper, config.launcher.run_microvm_per_second) {}

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

Result<std::map<std::string, int64_t>> Launcher::ListLiveVms() {
  std::set<std::string> images;
  std::map<std::string, int64_t> live;
  for (const RunnerClass& c : config_.classes) images.insert(c.RunImage());
  for (const std::string& image : images) {
    aws::ListMicrovmsRequest req;
    req.image_identifier = image;
    req.max_results = 50;
    MVR_ASSIGN_OR_RETURN(auto items, aws::ListAllMicrovms(deps_.microvms, req));
    for (const auto& vm : items) {
      if (Live(vm.state)) live[vm.microvm_id] = vm.started_at ? ToUnixMillis(*vm.started_at) : 0;
    }
  }
  LeavePoolMembersOut(live);
  return live;
}

CapLedger::Options Launcher::CapOptions() const {
  CapLedger::Options o;
  o.cap = config_.max_concurrent_vms;
  o.period = Duration(config_.launcher.cap_reconcile_seconds * 1000LL);
  // A launch names its VM within its timeout; one that has not by then (and its cleanup) died.
  o.settle = config_.launch_timeout() + kCleanupTime + Duration(60'000);
  return o;
}

void Launcher::NameSeat(Attempt& a) {
  if (Status s = cap_.Name(a.seat, a.microvm_id); !s.ok()) {
    deps_.seam.logger.Warn("naming the MicroVM on its seat of the cap",
                           {{"microvm_id", a.microvm_id}, {"error", s.ToString()}});
  }
}

std::optional<LaunchOutcome> Launcher::HeldByRefusal(const RunnerClass& cls, bool take) {
  if (!deps_.health) return std::nullopt;
  const RunnerClass& launch = deps_.health->LaunchClass(config_, cls);
  if (deps_.health->Admit(launch, take) != ClassHealth::Admission::kHeld) return std::nullopt;
  LaunchOutcome out;
  out.decision = LaunchDecision::kHeld;
  out.detail = "GitHub refuses the runner of class " + launch.label +
               " and no fallbackClass is healthy: the job waits for a new image version (the " +
               "janitor launches it then)";
  return out;
}

LaunchOutcome Launcher::Launch(const LaunchIntent& in) {
  // The janitor launches a job GitHub's jobs API lists as queued.
  return LaunchAs(in, in.delivery_id == "janitor" ? JobAction::kRequeued : JobAction::kQueued);
}

LaunchOutcome Launcher::LaunchAs(const LaunchIntent& in, JobAction action) {
  const Seam& seam = deps_.seam;
  LaunchOutcome out;
  const RunnerClass* cls = config_.FindClass(in.class_label);
  if (!cls) {
    out.decision = LaunchDecision::kIgnored;
    out.detail = "no runner class has the label " + in.class_label;
    return out;
  }
  // The configuration may have changed since the intent was made (a class's labels, labelMatch).
  if (!in.labels.empty() && !cls->Takes(in.labels)) {
    out.decision = LaunchDecision::kIgnored;
    out.detail = "class " + cls->label +
                 " does not offer every label the job asks for (labelMatch " +
                 LabelMatchName(cls->label_match) + ")";
    return out;
  }
  // Runners are registered in the configured scope: a job of another repository (a webhook
  // configured wider than the set) could never be handed to them.
  if (!InScope(in.repository)) {
    out.decision = LaunchDecision::kIgnored;
    out.detail = "the repository " + in.repository + " is outside the set's " + scope_.ToString();
    return out;
  }
  // A late queued (the job is in progress or completed already) launches nothing; the job's
  // state says whether it was seen waiting for an approval (launcher_job_state.cpp).
  JobState state;
  std::string stale;
  if (std::optional<LaunchOutcome> stop = CheckJobState(in, action, state, stale)) return *stop;
  // (0) GitHub's rate limits leave no room for a JIT runner now: wait, without asking GitHub.
  if (std::optional<LaunchOutcome> held = HeldByRateLimit(in, *cls)) return *held;
  // GitHub refuses the runner of the class, and no fallback is healthy: nothing to launch.
  if (std::optional<LaunchOutcome> held = HeldByRefusal(*cls, false)) return *held;
  // (1) Still queued (or its runner taken by another job)? Fails open, but for GitHub's rate
  // limits, which the launch waits for.
  Result<Need> needed = StillNeeded(in, !stale.empty());
  if (!needed.ok()) return DeferForRateLimit(in.job_id, needed.status(), std::move(out));
  // A late queued goes on only for a job its runner's chain left waiting: never on a guess.
  if (!stale.empty() && *needed != Need::kYes) {
    out.decision = LaunchDecision::kDroppedNotQueued;
    out.detail = stale;
    return out;
  }
  if (std::optional<LaunchOutcome> held = HoldForApproval(in, *needed, state)) return *held;
  if (*needed == Need::kNo) {
    out.decision = LaunchDecision::kDroppedNotQueued;
    out.detail = "GitHub says the job is no longer queued";
    return out;
  }
  // (2) The cap defers, never fails: a seat in the store (cap_ledger.h), fairly shared.
  SeatWait wait;  // why a deferral waits, and for how long
  Result<std::optional<CapSeat>> seat = TakeSeat(in, wait);
  if (!seat.ok()) {
    out.decision = LaunchDecision::kDeferred;
    out.retry_after = config_.defer_delay();
    out.detail = "cannot read the cap's seats: " + seat.status().ToString();
    deps_.metrics.AddDeferral("list_failed");
    return out;
  }
  if (!*seat) {
    out.decision = LaunchDecision::kDeferred;
    out.retry_after = wait.due;
    out.detail = SeatDeferralDetail(wait.why, config_.max_concurrent_vms);
    deps_.metrics.AddDeferral(wait.why);
    return out;
  }
  // A class whose runner GitHub refuses launches on its healthy fallbackClass, if it names one;
  // with none, only a probe launches.
  if (std::optional<LaunchOutcome> held = HeldByRefusal(*cls, true)) {
    cap_.Free(**seat).IgnoreError();  // a seat left behind is freed by the next reconciliation
    return *held;
  }
  const RunnerClass* asked = cls;
  if (deps_.health) cls = &deps_.health->LaunchClass(config_, *cls);
  cls = &capacity_.Route(config_, *cls, seam.clock.Now());
  LaunchOutcome o;
  bool keep_seat = false;
  // A class the platform has no capacity or quota for falls back along its fallbackClass chain.
  for (size_t hop = 0; hop <= config_.classes.size(); ++hop) {
    auto attempt = std::make_unique<Attempt>(seam, *this, in, *cls);
    attempt->seat = **seat;
    attempt->deadline = seam.clock.Now() + config_.launch_timeout();
    attempt->times.received_ms = ToUnixMillis(in.queued_at);
    if (hop == 0 && asked->has_pool_target()) attempt->counts_for = asked;
    o = Run(*attempt);
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
  if (o.decision != LaunchDecision::kLaunched && !keep_seat) cap_.Free(**seat).IgnoreError();
  return o;
}

void Launcher::CountArrival(const RunnerClass& cls, const LaunchIntent& in) {
  // The count only sizes a pool: a failure is logged and the launch goes on.
  if (Status s = deps_.arrivals->Record(cls.label, in.queued_at); !s.ok()) {
    deps_.seam.logger.Warn("counting the job among its class's arrivals",
                           {{"job_id", in.job_id}, {"class", cls.label}, {"error", s.ToString()}});
  }
}

LaunchOutcome Launcher::Run(Attempt& a) {
  const Seam& seam = deps_.seam;
  const LaunchIntent& in = a.intent;
  LaunchOutcome out;
  // (3) The claim: one VM per job, whatever the duplicates.
  Result<RunnerTable::ClaimResult> claim = deps_.table.ClaimJob(in.repository, in.job_id);
  if (!claim.ok()) return Fail(a, claim.status());
  if (claim->outcome == RunnerTable::ClaimOutcome::kLaunched) {
    out.decision = LaunchDecision::kDuplicate;
    out.microvm_id = claim->microvm_id;
    out.detail = "the job already has MicroVM " + claim->microvm_id;
    return out;
  }
  if (claim->outcome == RunnerTable::ClaimOutcome::kBusy) {
    out.decision = LaunchDecision::kDeferred;
    out.retry_after = WaitOnClaim(claim->held_since_ms, config_.claim_takeover_after());
    out.detail = "another attempt holds the job's claim";
    deps_.metrics.AddDeferral("claimed_elsewhere");
    return out;
  }
  a.claim = RunnerTable::ClaimKey(in.repository, in.job_id);
  a.token = claim->attempt_token;
  a.times.claimed_ms = ToUnixMillis(seam.clock.Now());
  a.job_key = RunnerTable::JobKey(in.repository, in.job_id);
  deps_.metrics.Observe(a.job_key, Milestone::kClaimed, a.times.received_ms, a.times.claimed_ms);
  if (a.counts_for && deps_.arrivals && !claim->taken_over) CountArrival(*a.counts_for, in);
  if (claim->taken_over) {
    if (std::optional<LaunchOutcome> settled = SettleTakenOver(a, *claim->taken_over)) {
      return *settled;
    }
  }

  // (4)-(6) A VM with a runner for the job: a hot-pool member resumed (its runner registered
  // and connected long ago), or a warm-pool member resumed and then registered against and
  // delivered to, or a cold launch registered before the VM exists.
  Result<aws::Microvm> vm = TakeHotMember(a);
  if (!vm.ok()) return Fail(a, vm.status());
  if (!a.hot) {
    vm = TakeWarmMember(a);
    if (!vm.ok()) return Fail(a, vm.status());
    if (Status s = Register(a); !s.ok()) return Fail(a, s);
  }
  if (!a.warm) {
    vm = LaunchCold(a);
    if (!vm.ok()) return Fail(a, vm.status());
  }
  a.times.running_ms = ToUnixMillis(seam.clock.Now());
  deps_.metrics.Observe(a.job_key, Milestone::kVmRunning, a.times.received_ms, a.times.running_ms);
  if (!a.hot) {
    // A claim this old may have been taken over by another launcher, and a runner delivered now
    // would be the job's second (the delivery's retries still make one attempt past the
    // deadline, which a claimTakeoverSeconds no shorter than the launch timeout cannot cover).
    if (ToUnixMillis(seam.clock.Now()) - a.times.claimed_ms >=
        config_.claim_takeover_after().count()) {
      return Fail(a, Transient("the launch outlasted claimTakeoverSeconds before its runner was "
                               "delivered; another attempt may hold the job"));
    }
    Result<Secret> token = a.vms.ControlToken(a.microvm_id, fleet::kControlPort,
                                              fleet::kControlTokenMinutes, a.deadline);
    if (!token.ok()) return Fail(a, token.status());
    fleet::RunnerStartDelivery delivery{vm->endpoint,
                                        *token,
                                        fleet::RunnerRequestId(a.runner_id),
                                        a.microvm_id,
                                        a.jit->encoded_jit_config,
                                        a.nonce};
    if (Status s = fleet::DeliverRunnerStart(deps_.http, seam, delivery, a.deadline); !s.ok()) {
      return Fail(a, s);
    }
  }
  // A hot runner's config went in when its member was made: it counts as delivered on resume.
  a.times.delivered_ms = ToUnixMillis(seam.clock.Now());
  deps_.metrics.Observe(a.job_key, Milestone::kConfigDelivered, a.times.received_ms,
                        a.times.delivered_ms);

  // (7) The mapping row and the claim's VM id, together.
  MappingRow row;
  row.runner_name = a.runner_name;
  row.runner_id = a.runner_id;
  row.microvm_id = a.microvm_id;
  row.repository = in.repository;
  row.job_id = in.job_id;
  row.class_label = a.runner_class.label;
  row.image_version = vm->image_version;
  row.path = a.hot ? "hot" : a.warm ? "warm" : "cold";
  row.times = a.times;
  std::vector<store::WriteOp> also;
  if (a.warm) also.push_back(WarmPoolTable::RemoveMemberOp(a.microvm_id));
  // No check here that the job's `completed` was not recorded meanwhile: once the config is
  // delivered the runner may be running this job or another of its labels, and failing the
  // launch would end that job's VM. A launch that raced the job's end commits like any other;
  // its runner ran the job (the VM ends with it), takes another (the taken-job accounting), or
  // stays idle (the janitor). The job state stops a launch only before it begins.
  if (Status s = deps_.table.Commit(a.claim, a.token, row, also); !s.ok()) return Fail(a, s);
  if (deps_.watch) deps_.watch->Await(a.runner_name, a.job_key, a.times.received_ms);
  out.decision = LaunchDecision::kLaunched;
  out.microvm_id = a.microvm_id;
  out.runner_name = a.runner_name;
  return out;
}

Status Launcher::Register(Attempt& a) {
  const LaunchIntent& in = a.intent;
  a.runner_name = JobRunnerName(config_.runner_name_prefix, in.job_id, a.token.substr(0, 8));
  github::JitConfigRequest jit_request;
  jit_request.name = a.runner_name;
  jit_request.runner_group_id = config_.github.runner_group_id;
  jit_request.labels = RunnerLabels(in);
  // A longer wait for GitHub's rate limits would eat the launch's deadline: the launch is
  // deferred instead (launcher_rate.cpp), and the launcher takes the next message.
  a.runners.WaitForRateLimitsUpTo(Duration(5'000));
  Result<github::JitConfig> jit = a.runners.Register(jit_request, a.deadline);
  if (!jit.ok()) return jit.status();
  // Per-job secrets (this JIT config, the control token) are not added to the logger's redactor:
  // a long-running server would keep every one forever and scan each log line for all of them.
  // They stay in Secret, which prints ***, and no error message carries them.
  a.runner_id = jit->runner.id;
  a.jit = std::move(*jit);
  if (Status s = deps_.table.RecordRunner(a.claim, a.token, a.runner_id); !s.ok()) {
    return s.Annotate("recording the runner on the claim");
  }
  return Status::Ok();
}

Result<aws::Microvm> Launcher::LaunchCold(Attempt& a) {
  const Seam& seam = deps_.seam;
  // RunMicrovm, paced to the platform's rate, idempotent per claim attempt. The nonce is this
  // launch's, for its one delivery below; it is never stored.
  a.nonce = supervisor::NewControlNonce(seam.secure_random);
  MVR_ASSIGN_OR_RETURN(std::string payload,
                       supervisor::EncodeRunPayload(supervisor::RunPayload::Delivered(a.nonce)));
  aws::RunMicrovmRequest run;
  run.image_identifier = a.runner_class.RunImage();
  fleet::ApplyConnectors(ConnectorsOf(a.runner_class), run);
  run.image_version = a.runner_class.image_version;
  run.execution_role_arn = config_.launcher.execution_role_arn;
  run.run_hook_payload = Secret(payload);
  run.maximum_duration_in_seconds = a.runner_class.max_duration_seconds;
  run.client_token = "mvr-launch-" + a.token;
  run_pacer_.Wait();
  Result<aws::Microvm> launched = a.vms.Launch(run, a.deadline);
  if (!launched.ok()) {
    a.out_of_capacity = IsOutOfCapacity(launched.status());
    // Unless the platform refused the request, a VM may exist that no answer named: its seat
    // stays until a reconciliation settles it (cap_count.h).
    a.keep_seat = a.keep_seat || !RefusedToRun(launched.status());
    return launched.status();
  }
  const aws::Microvm& vm = *launched;
  a.microvm_id = vm.microvm_id;
  NameSeat(a);
  if (Status s = deps_.table.RecordMicrovm(a.claim, a.token, a.microvm_id); !s.ok()) {
    return s.Annotate("recording the MicroVM on the claim");
  }
  seam.logger.Info(
      "MicroVM launched",
      {{"microvm_id", a.microvm_id}, {"runner_name", a.runner_name}, {"job_id", a.intent.job_id}});
  // RUNNING, then the runner's config goes through the control port.
  return a.vms.WaitRunning(a.microvm_id, a.deadline);
}

LaunchOutcome Launcher::Fail(Attempt& a, const Status& failure) {
  const Seam& seam = deps_.seam;
  const TimePoint cleanup_deadline = std::max(a.deadline, seam.clock.Now()) + kCleanupTime;
  LaunchOutcome out;
  out.decision = LaunchDecision::kFailed;
  out.retry_after = config_.defer_delay();
  out.detail = failure.ToString();
  // The runner goes first: GitHub refuses to remove one that is running a job, and a busy
  // runner is never terminated. A resumed hot runner takes a job within a second of its thaw,
  // before the launch commits; if the commit then fails, that job is running on this VM (found
  // by the simulation: docs/simulation.md). The VM ends itself after the job; the claim stays
  // for a takeover to settle (it finds the runner busy and leaves the VM alone).
  bool runner_busy = false;
  if (a.runner_id > 0) {
    Status r = a.runners.Remove(a.runner_id, cleanup_deadline);
    runner_busy = r.code() == Code::kConflict || r.code() == Code::kInvalidArgument;
    if (!r.ok()) out.detail += "; removing runner " + a.runner_name + " failed: " + r.message();
  }
  bool vm_gone = true;
  if (!a.microvm_id.empty() && runner_busy) {
    vm_gone = false;
    out.detail += "; MicroVM " + a.microvm_id + " left running: its runner is running a job";
  } else if (!a.microvm_id.empty()) {
    Status t = a.vms.Terminate(a.microvm_id, cleanup_deadline);
    vm_gone = t.ok();
    if (vm_gone && a.warm && deps_.pool) deps_.pool->RemoveMember(a.microvm_id).IgnoreError();
    if (!t.ok()) out.detail += "; terminating MicroVM " + a.microvm_id + " failed: " + t.message();
  }
  // The claim goes only once the VM is confirmed gone; otherwise a takeover cleans up later.
  if (!a.token.empty() && vm_gone) {
    Status r = deps_.table.Release(a.claim, a.token);
    if (!r.ok()) out.detail += "; releasing the claim failed: " + r.message();
  }
  if (!vm_gone) a.keep_seat = true;  // the seat names it (NameSeat) and counts it until it ends
  if (failure.code() == Code::kUnauthorized &&
      (failure.error_type() == "AuthFailing" || failure.error_type() == "BadCredentials")) {
    // GitHub refuses the set's credentials: no launch can succeed until the secret is fixed, and
    // the GitHub client logs the outage once. Wait for its next probe; a deferral never
    // dead-letters the job, so it runs once the credentials work again.
    out.decision = LaunchDecision::kDeferred;
    out.retry_after = std::max(out.retry_after, failure.retry_after().value_or(Duration(0)));
    deps_.metrics.AddDeferral("github_auth");
    seam.logger.Debug("launch deferred: GitHub refuses the credentials",
                      {{"job_id", a.intent.job_id}, {"error", out.detail}});
    return out;
  }
  if (IsGitHubRateLimit(failure))
    return DeferForRateLimit(a.intent.job_id, failure, std::move(out));
  seam.logger.Warn(
      "launch failed",
      {{"job_id", a.intent.job_id}, {"runner_name", a.runner_name}, {"error", out.detail}});
  JobRecord record;
  record.repository = a.intent.repository;
  record.job_id = a.intent.job_id;
  record.job_name = a.intent.job_name;
  record.class_label = a.runner_class.label;
  record.path = a.hot ? "hot" : a.warm ? "warm" : "cold";
  record.runner_name = a.runner_name;
  record.times = a.times;
  record.ended_ms = ToUnixMillis(seam.clock.Now());
  record.failure = failure.ToString();
  KeepJobRecord(record);
  return out;
}

}  // namespace mvr::runnerset
