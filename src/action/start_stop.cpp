#include "action/start_stop.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "action/control_delivery.h"
#include "action/identity.h"
#include "action/microvm_lifecycle.h"
#include "action/runner_registration.h"
#include "action/server_handle.h"
#include "action/trust.h"
#include "supervisor/run_payload.h"

namespace mvr::action {
namespace {

// Time kept back from the startup deadline for cleaning up after a failure.
constexpr Duration kCleanupReserve{60'000};
// Auth tokens for the control port live as short as the service allows.
constexpr int kAuthTokenMinutes = 5;

// Records what a failing start must undo, undoes it in reverse order, and says what it did.
class Cleanup {
 public:
  explicit Cleanup(const Seam& seam) : seam_(seam) {}
  void Add(std::string what, std::function<Status()> undo) {
    steps_.push_back({std::move(what), std::move(undo)});
  }
  void Forget() { steps_.clear(); }
  // Runs every step; returns `failure` annotated with what was cleaned and what could not be.
  Status Fail(const Status& failure) {
    std::string cleaned, not_cleaned;
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
      Status s = it->undo();
      if (s.ok()) {
        cleaned += (cleaned.empty() ? "" : ", ") + it->what;
      } else {
        not_cleaned += (not_cleaned.empty() ? "" : "; ") + it->what + " (" + s.message() + ")";
        seam_.logger.Error("cleanup step failed", {{"step", it->what}, {"error", s.message()}});
      }
    }
    steps_.clear();
    std::string note;
    if (!cleaned.empty()) note += "; cleaned up: " + cleaned;
    if (!not_cleaned.empty()) note += "; NOT cleaned up: " + not_cleaned;
    if (cleaned.empty() && not_cleaned.empty()) note = "; nothing needed cleaning up";
    return Status(failure.code(), failure.message() + note).WithErrorType(failure.error_type());
  }

 private:
  struct Step {
    std::string what;
    std::function<Status()> undo;
  };
  const Seam& seam_;
  std::vector<Step> steps_;
};

TimePoint CleanupDeadline(const Seam& seam) { return seam.clock.Now() + kCleanupReserve; }

github::JitConfigRequest JitRequest(const StartCommand& c, const std::string& label) {
  github::JitConfigRequest r;
  r.name = label;
  r.runner_group_id = c.runner_group_id;
  r.labels.push_back(label);
  for (const auto& l : c.extra_labels) r.labels.push_back(l);
  r.work_folder = c.work_folder;
  return r;
}

aws::RunMicrovmRequest RunRequest(const StartCommand& c, const DerivedIdentity& id,
                                  std::string payload) {
  aws::RunMicrovmRequest r;
  r.image_identifier = c.image_id;
  r.image_version = c.image_version;
  r.execution_role_arn = c.execution_role_arn;
  r.log_group = c.log_group;
  r.run_hook_payload = Secret(std::move(payload));
  r.maximum_duration_in_seconds = c.lifetime.max_lifetime_seconds;
  r.client_token = id.client_token;
  return r;
}

Result<github::RunnerScope> ScopeOf(const Endpoints& e) {
  return github::RunnerScope::Parse(e.repository);
}

void Milestone(const ActionDeps& d, const std::string& name) {
  if (d.on_milestone) d.on_milestone(name, d.seam.clock.Now());
}

StartResult Outputs(const std::string& label, const github::Runner& runner,
                    const aws::Microvm& vm) {
  StartResult out;
  out.label = label;
  out.runner_name = runner.name;
  out.runner_id = runner.id;
  out.microvm_id = vm.microvm_id;
  out.image_version = vm.image_version;
  return out;
}

// Warm: a short-lived token for the control port only, the JIT config delivered to the
// supervisor, then the exact runner awaited online.
Status DeliverAndAwait(const ActionDeps& deps, MicrovmLifecycle& vms, RunnerRegistration& runners,
                       const aws::Microvm& vm, const github::JitConfig& jit,
                       const std::string& label, TimePoint deadline) {
  MVR_ASSIGN_OR_RETURN(Secret token,
                       vms.ControlToken(vm.microvm_id, kControlPort, kAuthTokenMinutes, deadline));
  if (deps.on_secret) deps.on_secret(token);
  RunnerStartDelivery delivery{vm.endpoint, token, deps.seam.secure_random.Hex(16), vm.microvm_id,
                               jit.encoded_jit_config};
  MVR_RETURN_IF_ERROR(DeliverRunnerStart(deps.http, deps.seam, delivery, deadline));
  MVR_RETURN_IF_ERROR(runners.WaitOnline(jit.runner.id, label, deadline));
  Milestone(deps, "runner_online");
  return Status::Ok();
}

// What every start flow works with for one job: its identity, the runner and MicroVM helpers and
// the cleanup list. Kept in one place on the heap: cleanup steps hold references to the helpers.
struct StartParts {
  StartParts(const ActionDeps& d, DerivedIdentity identity, github::RunnerScope scope)
      : seam(d.seam),
        id(std::move(identity)),
        runners(d.seam, d.github, std::move(scope)),
        vms(d.seam, d.microvms),
        cleanup(d.seam) {}

  // Registers the job's JIT runner, masks its config at once, and adds its removal to the
  // cleanup. A failure here leaves the cleanup list as it was.
  Result<github::JitConfig> RegisterRunner(const ActionDeps& deps, const StartCommand& c,
                                           TimePoint deadline) {
    Result<github::JitConfig> jit = runners.Register(JitRequest(c, id.label), deadline);
    if (!jit.ok()) return jit;
    if (deps.on_secret) deps.on_secret(jit->encoded_jit_config);
    const int64_t runner_id = jit->runner.id;
    cleanup.Add("removed JIT runner " + id.label,
                [this, runner_id] { return runners.Remove(runner_id, CleanupDeadline(seam)); });
    Milestone(deps, "runner_registered");
    return jit;
  }

  const Seam& seam;
  DerivedIdentity id;
  RunnerRegistration runners;
  MicrovmLifecycle vms;
  Cleanup cleanup;
};

Result<std::unique_ptr<StartParts>> MakeStartParts(const ActionDeps& deps, const StartCommand& c) {
  MVR_ASSIGN_OR_RETURN(DerivedIdentity id, DeriveIdentity(c.identity));
  MVR_ASSIGN_OR_RETURN(github::RunnerScope scope, ScopeOf(c.endpoints));
  return std::make_unique<StartParts>(deps, std::move(id), std::move(scope));
}

}  // namespace

Result<StartResult> StartFlow::Run(const StartCommand& c) {
  TimePoint deadline = deps_.seam.clock.Now() + c.startup_timeout;
  if (!c.warm()) return Ephemeral(c, deadline);
  MVR_RETURN_IF_ERROR(CheckWarmTrust(c.event_name, c.event_json));
  if (IsServerHandle(c.server)) return WarmResume(c, deadline);
  return WarmNew(c, deadline);
}

Result<StartResult> StartFlow::Ephemeral(const StartCommand& c, TimePoint deadline) {
  MVR_ASSIGN_OR_RETURN(std::unique_ptr<StartParts> parts, MakeStartParts(deps_, c));
  auto& [seam, id, runners, vms, cleanup] = *parts;

  MVR_ASSIGN_OR_RETURN(github::JitConfig jit, parts->RegisterRunner(deps_, c, deadline));
  const int64_t runner_id = jit.runner.id;

  Result<std::string> payload =
      supervisor::EncodeRunPayload(supervisor::RunPayload::Ephemeral(jit.encoded_jit_config));
  if (!payload.ok())
    return cleanup.Fail(payload.status().Annotate("building the run-hook payload"));

  Result<aws::Microvm> vm = vms.Launch(RunRequest(c, id, std::move(*payload)), deadline);
  if (!vm.ok()) return cleanup.Fail(vm.status());
  const std::string microvm_id = vm->microvm_id;
  cleanup.Add("terminated MicroVM " + microvm_id,
              [&, microvm_id] { return vms.Terminate(microvm_id, CleanupDeadline(seam)); });
  seam.logger.Info("MicroVM launched", {{"microvm_id", microvm_id}, {"label", id.label}});

  vm = vms.WaitRunning(microvm_id, deadline);
  if (!vm.ok()) return cleanup.Fail(vm.status());
  Milestone(deps_, "vm_running");

  Status online = runners.WaitOnline(runner_id, id.label, deadline);
  if (!online.ok()) return cleanup.Fail(online);
  Milestone(deps_, "runner_online");

  cleanup.Forget();
  return Outputs(id.label, jit.runner, *vm);
}

Result<StartResult> StartFlow::WarmNew(const StartCommand& c, TimePoint deadline) {
  MVR_ASSIGN_OR_RETURN(std::unique_ptr<StartParts> parts, MakeStartParts(deps_, c));
  auto& [seam, id, runners, vms, cleanup] = *parts;

  MVR_ASSIGN_OR_RETURN(std::string payload,
                       supervisor::EncodeRunPayload(supervisor::RunPayload::Warm()));
  // Recorded before RunMicrovm: if the service gives no startedAt, the cache expires early
  // rather than late.
  const TimePoint launch_time = seam.clock.Now();
  Result<aws::Microvm> vm = vms.Launch(RunRequest(c, id, std::move(payload)), deadline);
  if (!vm.ok()) return vm.status();
  const std::string microvm_id = vm->microvm_id;
  cleanup.Add("terminated MicroVM " + microvm_id,
              [&, microvm_id] { return vms.Terminate(microvm_id, CleanupDeadline(seam)); });
  vm = vms.WaitRunning(microvm_id, deadline);
  if (!vm.ok()) return cleanup.Fail(vm.status());
  Milestone(deps_, "vm_running");

  Result<github::JitConfig> jit = parts->RegisterRunner(deps_, c, deadline);
  if (!jit.ok()) return cleanup.Fail(jit.status());
  const int64_t runner_id = jit->runner.id;

  Status ready = DeliverAndAwait(deps_, vms, runners, *vm, *jit, id.label, deadline);
  if (!ready.ok()) return cleanup.Fail(ready);
  cleanup.Forget();

  Lifetime life = ComputeLifetime(vm->started_at.value_or(launch_time), c.lifetime);
  ServerHandle h;
  h.microvm_id = microvm_id;
  h.region = c.endpoints.region;
  h.repository_id = c.identity.repository_id;
  h.server_name = c.server;
  h.started_at = life.started_at;
  h.max_lifetime_seconds = c.lifetime.max_lifetime_seconds;
  h.reuse_deadline = life.reuse_deadline;
  h.runner_id = runner_id;
  h.runner_name = jit->runner.name;

  StartResult out = Outputs(id.label, jit->runner, *vm);
  out.server = EncodeServerHandle(h);
  out.warm_hit = false;
  out.lifetime = life;
  return out;
}

Result<StartResult> StartFlow::WarmResume(const StartCommand& c, TimePoint deadline) {
  MVR_ASSIGN_OR_RETURN(ServerHandle h, DecodeServerHandle(c.server));
  if (h.repository_id != c.identity.repository_id) {
    return InvalidArgument(
        "the server handle belongs to another repository; warm MicroVMs are "
        "never shared between repositories");
  }
  if (h.region != c.endpoints.region) {
    return InvalidArgument("the server handle names a MicroVM in " + h.region +
                           ", but this start uses region " + c.endpoints.region);
  }
  Lifetime life{h.started_at, h.started_at + std::chrono::seconds(h.max_lifetime_seconds),
                h.reuse_deadline};
  if (!life.ReusableAt(deps_.seam.clock.Now())) {
    return InvalidArgument("server handle for MicroVM " + h.microvm_id +
                           " is at or past its reuse deadline; start a new warm server by "
                           "name (the old one is terminated by its stop or by the platform)");
  }
  MVR_ASSIGN_OR_RETURN(std::unique_ptr<StartParts> parts, MakeStartParts(deps_, c));
  auto& [seam, id, runners, vms, cleanup] = *parts;

  // Is the VM still there? A read, not a lifecycle call: a stale handle fails here cleanly.
  MVR_ASSIGN_OR_RETURN(aws::Microvm current, vms.Get(h.microvm_id, deadline));
  if (current.state == aws::MicrovmState::kTerminating ||
      current.state == aws::MicrovmState::kTerminated) {
    return NotFound("the warm MicroVM " + h.microvm_id + " is " +
                    aws::MicrovmStateName(current.state) +
                    (current.state_reason.empty() ? "" : " (" + current.state_reason + ")") +
                    "; start a new warm server by name");
  }

  // Register first: if GitHub fails, the cached VM is not touched.
  MVR_ASSIGN_OR_RETURN(github::JitConfig jit, parts->RegisterRunner(deps_, c, deadline));
  const int64_t runner_id = jit.runner.id;

  Result<aws::Microvm> vm = vms.Resume(h.microvm_id, deadline);
  if (!vm.ok()) {
    // Keep the cache if the VM is still healthy and suspended; otherwise it is of no use.
    Result<aws::Microvm> seen = vms.Get(h.microvm_id, CleanupDeadline(seam));
    if (!seen.ok() || seen->state != aws::MicrovmState::kSuspended) {
      cleanup.Add("terminated MicroVM " + h.microvm_id,
                  [&] { return vms.Terminate(h.microvm_id, CleanupDeadline(seam)); });
    }
    return cleanup.Fail(vm.status());
  }
  Milestone(deps_, "vm_running");
  // From here a failure puts the VM back to sleep, keeping its cache.
  cleanup.Add("suspended MicroVM " + h.microvm_id, [&] {
    Result<aws::Microvm> s = vms.Suspend(h.microvm_id, CleanupDeadline(seam));
    if (s.ok()) return Status::Ok();
    Status t = vms.Terminate(h.microvm_id, CleanupDeadline(seam));
    return t.ok() ? Status::Ok() : s.status();
  });

  Status ready = DeliverAndAwait(deps_, vms, runners, *vm, jit, id.label, deadline);
  if (!ready.ok()) return cleanup.Fail(ready);
  cleanup.Forget();

  h.runner_id = runner_id;
  h.runner_name = jit.runner.name;
  StartResult out = Outputs(id.label, jit.runner, *vm);
  out.server = EncodeServerHandle(h);
  out.warm_hit = true;
  out.lifetime = life;
  return out;
}

Result<StopResult> StopFlow::Run(const StopCommand& c) {
  if (c.empty()) {
    StopResult r;
    r.outcome = "nothing to stop";
    return r;
  }
  TimePoint deadline = deps_.seam.clock.Now() + c.stop_timeout;
  if (!c.server.empty()) return Warm(c, deadline);
  return Ephemeral(c, deadline);
}

Result<StopResult> StopFlow::Ephemeral(const StopCommand& c, TimePoint deadline) {
  const Seam& seam = deps_.seam;
  MicrovmLifecycle vms(seam, deps_.microvms);
  MVR_RETURN_IF_ERROR(vms.Terminate(c.microvm_id, deadline));
  if (c.runner_id > 0) {
    MVR_ASSIGN_OR_RETURN(github::RunnerScope scope, ScopeOf(c.endpoints));
    RunnerRegistration runners(seam, deps_.github, scope);
    Status removed = runners.Remove(c.runner_id, deadline);
    if (!removed.ok() && removed.code() != Code::kConflict) return removed;
  }
  StopResult r;
  r.microvm_id = c.microvm_id;
  r.outcome = "terminated";
  return r;
}

Result<StopResult> StopFlow::Warm(const StopCommand& c, TimePoint deadline) {
  const Seam& seam = deps_.seam;
  MVR_ASSIGN_OR_RETURN(ServerHandle h, DecodeServerHandle(c.server));
  MVR_ASSIGN_OR_RETURN(github::RunnerScope scope, ScopeOf(c.endpoints));
  RunnerRegistration runners(seam, deps_.github, scope);
  MicrovmLifecycle vms(seam, deps_.microvms);
  StopResult r;
  r.microvm_id = h.microvm_id;

  MVR_ASSIGN_OR_RETURN(bool idle, runners.GoneOrIdle(h.runner_id, deadline));
  if (!idle) {
    return Conflict("runner " + h.runner_name + " is still running a job on MicroVM " +
                    h.microvm_id + "; stop refuses to suspend a busy runner");
  }
  // A runner that never took its job would otherwise stay registered.
  MVR_RETURN_IF_ERROR(runners.Remove(h.runner_id, deadline));

  Lifetime life{h.started_at, h.started_at + std::chrono::seconds(h.max_lifetime_seconds),
                h.reuse_deadline};
  if (!life.ReusableAt(deps_.seam.clock.Now())) {
    MVR_RETURN_IF_ERROR(vms.Terminate(h.microvm_id, deadline));
    r.outcome = "terminated (at or past its reuse deadline)";
    return r;
  }
  Result<aws::Microvm> suspended = vms.Suspend(h.microvm_id, deadline);
  if (suspended.ok()) {
    r.outcome = "suspended";
    return r;
  }
  if (suspended.status().code() == Code::kNotFound) {
    r.outcome = "already gone";
    return r;
  }
  // A VM that cannot be suspended is not left running: terminate it and say so.
  Status t = vms.Terminate(h.microvm_id, deadline);
  return Status(suspended.status().code(),
                suspended.status().message() +
                    (t.ok() ? "; terminated the MicroVM instead (its cache is lost)"
                            : "; terminating it failed too: " + t.message()));
}

}  // namespace mvr::action
