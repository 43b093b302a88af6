// The warm start flows: a new warm MicroVM by server name, and the resume of an lmvm1_ handle.
#include <memory>
#include <string>
#include <vector>

#include "action/start_parts.h"
#include "action/start_stop.h"
#include "fleet/control_delivery.h"
#include "supervisor/run_payload.h"

namespace mvr::action {
namespace {

using internal::CleanupDeadline;

// Launches a warm identity may try: each gets its own clientToken, and one whose VM is already
// ending (an earlier attempt that failed and was cleaned up) is passed over for the next.
constexpr int kWarmLaunchesPerIdentity = 4;

bool Held(aws::MicrovmState s) {
  return s == aws::MicrovmState::kRunning || s == aws::MicrovmState::kPending;
}

// Why the VM of handle `h`, seen as `current`, cannot take this job (Ok when it can): it is
// ending (NotFound), at or past its reuse deadline (InvalidArgument; a free one is terminated on
// the way, as 000 "Lifetime" asks of whoever meets it), or held by another job (server busy).
Status RefuseUnusable(internal::StartParts& parts, const ServerHandle& h,
                      const aws::Microvm& current, const Lifetime& life, TimePoint deadline) {
  const std::string described =
      "the warm MicroVM " + h.microvm_id + " is " + aws::MicrovmStateName(current.state) +
      (current.state_reason.empty() ? "" : " (" + current.state_reason + ")");
  if (fleet::Ending(current.state))
    return NotFound(described + "; start a new warm server by name");

  if (!life.ReusableAt(parts.seam.clock.Now())) {
    // A VM at or past its reuse deadline never takes another job. One still RUNNING serves the
    // job that took it before the deadline; that job's stop terminates it.
    const std::string past = "server handle for MicroVM " + h.microvm_id +
                             " is at or past its reuse deadline; start a new warm server by name";
    if (Held(current.state)) {
      return InvalidArgument(past + " (" + described +
                             ": the job holding it terminates it when it stops)");
    }
    Status t = parts.vms.Terminate(h.microvm_id, deadline);
    if (!t.ok()) return Status(t.code(), past + "; terminating it failed: " + t.message());
    return InvalidArgument(past + " (terminated MicroVM " + h.microvm_id + ")");
  }
  if (Held(current.state)) {
    return Conflict("server busy: " + described +
                    ", so another job holds it; nothing was changed. Wait for that job's stop, "
                    "or start a new warm server by name")
        .WithErrorType(fleet::kServerBusy);
  }
  return Status::Ok();
}

}  // namespace

Result<StartResult> StartFlow::WarmNew(const StartCommand& c, TimePoint deadline) {
  MVR_ASSIGN_OR_RETURN(std::unique_ptr<internal::StartParts> parts,
                       internal::MakeStartParts(deps_, c));
  auto& [seam, id, runners, vms, cleanup] = *parts;

  // The warm payload carries no JIT, and its nonce is derived from the launch token: a launch's
  // parameters follow from the identity alone, so a retried start finds the VM an earlier
  // attempt launched (and reuses it) through the token.
  // Recorded before RunMicrovm: if the service gives no startedAt, the cache expires early
  // rather than late.
  const TimePoint launch_time = seam.clock.Now();
  Result<aws::Microvm> vm = Internal("no launch tried");
  std::string launch_token;
  Secret nonce;
  for (int n = 0; n < kWarmLaunchesPerIdentity; ++n) {
    launch_token = LaunchClientToken(id, "warm:" + std::to_string(n));
    MVR_ASSIGN_OR_RETURN(nonce, internal::ControlNonce(deps_, c, launch_token));
    MVR_ASSIGN_OR_RETURN(std::string payload,
                         supervisor::EncodeRunPayload(supervisor::RunPayload::Warm(nonce)));
    MVR_ASSIGN_OR_RETURN(aws::RunMicrovmRequest run,
                         internal::LaunchRequest(deps_, c, launch_token, std::move(payload),
                                                 c.lifetime.max_lifetime_seconds, deadline));
    vm = vms.Launch(run, deadline);
    if (!vm.ok()) return vm.status();
    if (!fleet::Ending(vm->state)) break;
    vm = Conflict("every MicroVM launched for this start's identity has ended (last: " +
                  vm->microvm_id + " is " + aws::MicrovmStateName(vm->state) +
                  "); re-run the job or give it its own idempotency-key");
  }
  if (!vm.ok()) return vm.status();
  const std::string microvm_id = vm->microvm_id;
  parts->TerminateOnFailure(microvm_id);
  vm = vms.WaitRunning(microvm_id, deadline);
  if (!vm.ok()) return cleanup.Fail(vm.status());
  internal::Milestone(deps_, "vm_running");

  Result<github::JitConfig> jit = parts->RegisterRunner(deps_, c, deadline);
  if (!jit.ok()) return cleanup.Fail(jit.status());
  const int64_t runner_id = jit->runner.id;

  Status ready =
      internal::DeliverAndAwait(deps_, vms, runners, *vm, *jit, {nonce}, id.label, deadline);
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
  h.launch_token = launch_token;

  StartResult out = internal::Outputs(id.label, jit->runner, *vm);
  out.server = EncodeServerHandle(h, deps_.control_key);
  out.warm_hit = false;
  out.lifetime = life;
  return out;
}

Result<StartResult> StartFlow::WarmResume(const StartCommand& c, TimePoint deadline) {
  MVR_ASSIGN_OR_RETURN(ServerHandle h, DecodeServerHandle(c.server, internal::ControlKeys(deps_)));
  MVR_RETURN_IF_ERROR(internal::CheckHandleScope(h, c.identity.repository_id, c.endpoints.region));
  Lifetime life{h.started_at, h.started_at + std::chrono::seconds(h.max_lifetime_seconds),
                h.reuse_deadline};
  MVR_ASSIGN_OR_RETURN(std::unique_ptr<internal::StartParts> parts,
                       internal::MakeStartParts(deps_, c));
  auto& [seam, id, runners, vms, cleanup] = *parts;

  // Is the VM still there, and free? A read, not a lifecycle call.
  MVR_ASSIGN_OR_RETURN(aws::Microvm current, vms.Get(h.microvm_id, deadline));
  MVR_RETURN_IF_ERROR(RefuseUnusable(*parts, h, current, life, deadline));

  // A handle from before nonces has no launch token: its VM takes no nonce. The nonce is bound to
  // this step's repository and region, never the handle's: another repository's start cannot
  // derive what this repository's VM was launched with.
  MVR_ASSIGN_OR_RETURN(std::vector<Secret> nonces,
                       internal::ControlNonces(deps_, c, h.launch_token));
  // Register first: if GitHub fails, the cached VM is not touched.
  MVR_ASSIGN_OR_RETURN(github::JitConfig jit, parts->RegisterRunner(deps_, c, deadline));
  const int64_t runner_id = jit.runner.id;

  Result<aws::Microvm> vm = vms.Resume(h.microvm_id, deadline);
  if (!vm.ok()) {
    // Another job got there first: its VM is not ours to suspend or terminate.
    if (vm.status().error_type() == fleet::kServerBusy) return cleanup.Fail(vm.status());
    // Keep the cache if the VM is still healthy and suspended; otherwise it is of no use.
    Result<aws::Microvm> seen = vms.Get(h.microvm_id, CleanupDeadline(seam));
    if (!seen.ok() || seen->state != aws::MicrovmState::kSuspended) {
      parts->TerminateOnFailure(h.microvm_id);
    }
    return cleanup.Fail(vm.status());
  }
  internal::Milestone(deps_, "vm_running");
  // From here a failure puts the VM back to sleep, keeping its cache.
  cleanup.Add("suspended MicroVM " + h.microvm_id, [&p = *parts, vm_id = h.microvm_id] {
    Result<aws::Microvm> s = p.vms.Suspend(vm_id, CleanupDeadline(p.seam));
    if (s.ok()) return Status::Ok();
    Status t = p.vms.Terminate(vm_id, CleanupDeadline(p.seam));
    return t.ok() ? Status::Ok() : s.status();
  });

  Status ready =
      internal::DeliverAndAwait(deps_, vms, runners, *vm, jit, nonces, id.label, deadline);
  if (!ready.ok()) {
    // A concurrent start resumed it too and its runner won: leave the VM to that job.
    if (ready.error_type() == fleet::kServerBusy) cleanup.DropLast();
    return cleanup.Fail(ready);
  }
  cleanup.Forget();

  h.runner_id = runner_id;
  h.runner_name = jit.runner.name;
  StartResult out = internal::Outputs(id.label, jit.runner, *vm);
  // Sealed again under the current key: after a rotation the next start needs no previous key
  // for the handle (the VM's nonce still follows the key it was launched under).
  out.server = EncodeServerHandle(h, deps_.control_key);
  out.warm_hit = true;
  out.lifetime = life;
  return out;
}

}  // namespace mvr::action
