// Internal to the start and stop flows: the cleanup list a failing start unwinds, what every start
// works with (identity, runner and MicroVM helpers), and the request builders they share.
// Thread-safety: one per command; not shared.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "action/identity.h"
#include "action/inputs.h"
#include "action/server_handle.h"
#include "action/start_stop.h"
#include "base/seam.h"
#include "fleet/control_delivery.h"
#include "fleet/microvm_lifecycle.h"
#include "fleet/runner_registration.h"

namespace mvr::action::internal {

// Time kept back from the startup deadline for cleaning up after a failure.
inline constexpr Duration kCleanupReserve{60'000};

inline TimePoint CleanupDeadline(const Seam& seam) { return seam.clock.Now() + kCleanupReserve; }

// Records what a failing start must undo, undoes it in reverse order, and says what it did.
class Cleanup {
 public:
  explicit Cleanup(const Seam& seam) : seam_(seam) {}
  void Add(std::string what, std::function<Status()> undo) {
    steps_.push_back({std::move(what), std::move(undo)});
  }
  void Forget() { steps_.clear(); }
  // Undoes the last Add: what it would undo turned out not to be this start's.
  void DropLast() {
    if (!steps_.empty()) steps_.pop_back();
  }
  // Runs every step; returns `failure` annotated with what was cleaned and what could not be.
  Status Fail(const Status& failure);

 private:
  struct Step {
    std::string what;
    std::function<Status()> undo;
  };
  Seam seam_;
  std::vector<Step> steps_;
};

void Milestone(const ActionDeps& d, const std::string& name);
Result<github::RunnerScope> ScopeOf(const Endpoints& e);
StartResult Outputs(const std::string& label, const github::Runner& runner, const aws::Microvm& vm);
aws::RunMicrovmRequest RunRequest(const StartCommand& c, std::string client_token,
                                  std::string payload, int64_t max_duration_seconds);
// RunRequest naming the image by its ARN: c.image_arn when set, else image-id resolved now
// (GetMicrovmImage; an ARN as it is). Called just before RunMicrovm, so a start that fails
// earlier makes no MicroVMs call.
Result<aws::RunMicrovmRequest> LaunchRequest(const ActionDeps& deps, const StartCommand& c,
                                             std::string client_token, std::string payload,
                                             int64_t max_duration_seconds, TimePoint deadline);

// Warm and pooled starts need MVR_CONTROL_KEY: InvalidArgument saying how to set it otherwise.
Status RequireControlKey(const ActionDeps& deps);
// The keys a handle's seal and a VM's nonce are checked against: deps.control_key, then
// deps.previous_control_key when set.
std::vector<Secret> ControlKeys(const ActionDeps& deps);
// The control nonce a launch with clientToken `launch_token` gets (empty token: none, for a VM
// launched before nonces): derived under deps.control_key, bound to the start's repository id and
// region (supervisor::DeriveBoundControlNonce), handed to deps.on_secret.
Result<Secret> ControlNonce(const ActionDeps& deps, const StartCommand& c,
                            const std::string& launch_token);
// The nonces a delivery to that launch may carry, in the order to try them: under the current
// key, then under the previous one (a VM launched before the rotation). Each goes to on_secret.
Result<std::vector<Secret>> ControlNonces(const ActionDeps& deps, const StartCommand& c,
                                          const std::string& launch_token);

// Warm: a short-lived token for the control port only, the JIT config delivered to the
// supervisor with the VM's control nonce (each of `nonces` in turn while the supervisor answers
// wrong_nonce; the last refusal has error type fleet::kWrongNonce), then the exact runner awaited
// online.
Status DeliverAndAwait(const ActionDeps& deps, fleet::MicrovmLifecycle& vms,
                       fleet::RunnerRegistration& runners, const aws::Microvm& vm,
                       const github::JitConfig& jit, const std::vector<Secret>& nonces,
                       const std::string& label, TimePoint deadline);

// Conflict unless runner `runner_id` is gone from GitHub or idle: a stop never suspends a VM whose
// runner is running a job.
Status RefuseBusyRunner(fleet::RunnerRegistration& runners, int64_t runner_id,
                        const std::string& runner_name, const std::string& microvm_id,
                        TimePoint deadline);

// Reads which request the VM's supervisor serves, after giving runner `runner_id`'s process (just
// removed from GitHub, never took a job) up to 30 s to exit so that /suspend is accepted. An
// unreadable status is an error saying the VM is left running.
Result<fleet::SupervisorStatus> AwaitRunnerExit(const ActionDeps& deps,
                                                fleet::MicrovmLifecycle& vms,
                                                const aws::Microvm& vm, int64_t runner_id,
                                                TimePoint deadline);

// What every start flow works with for one job: its identity, the runner and MicroVM helpers and
// the cleanup list. Kept in one place on the heap: cleanup steps hold references to the helpers.
// A cleanup step captures the parts (or their members by init-capture), never a flow's structured
// binding of them: capturing a structured binding is C++20 that clang 14 (the fuzz build) rejects.
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
                                           TimePoint deadline);
  // Adds "terminate MicroVM `microvm_id`" to the cleanup.
  void TerminateOnFailure(const std::string& microvm_id);

  Seam seam;
  DerivedIdentity id;
  fleet::RunnerRegistration runners;
  fleet::MicrovmLifecycle vms;
  Cleanup cleanup;
};

// A warm handle is used only in the repository and region it was made in; InvalidArgument naming
// the mismatch otherwise. An empty `repository_id` (outside Actions, not given) is not checked.
Status CheckHandleScope(const ServerHandle& h, const std::string& repository_id,
                        const std::string& region);

Result<std::unique_ptr<StartParts>> MakeStartParts(const ActionDeps& deps, const StartCommand& c);

}  // namespace mvr::action::internal
