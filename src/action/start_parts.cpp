#include "action/start_parts.h"

#include "fleet/control_delivery.h"
#include "fleet/image_arn.h"
#include "fleet/network_connectors.h"
#include "github/platform_labels.h"

#include <algorithm>
#include <vector>

#include "base/retry.h"
#include "supervisor/run_payload.h"

namespace mvr::action::internal {
namespace {

// How long a stop waits for its own runner process to exit once the runner is removed from
// GitHub (it never took a job), so that the supervisor is IDLE and accepts /suspend.
constexpr Duration kRunnerExitWait{30'000};
constexpr PollPolicy kStatusPoll{Duration(500), Duration(3'000), Duration(200)};

bool RunnerProcessUp(const fleet::SupervisorStatus& s) {
  return s.state == "STARTING_DOCKER" || s.state == "STARTING_RUNNER" || s.state == "RUNNING";
}

}  // namespace

Status RefuseBusyRunner(fleet::RunnerRegistration& runners, int64_t runner_id,
                        const std::string& runner_name, const std::string& microvm_id,
                        TimePoint deadline) {
  MVR_ASSIGN_OR_RETURN(bool idle, runners.GoneOrIdle(runner_id, deadline));
  if (!idle) {
    return Conflict("runner " + runner_name + " is still running a job on MicroVM " + microvm_id +
                    "; stop refuses to suspend a busy runner");
  }
  return Status::Ok();
}

Result<fleet::SupervisorStatus> AwaitRunnerExit(const ActionDeps& deps,
                                                fleet::MicrovmLifecycle& vms,
                                                const aws::Microvm& vm, int64_t runner_id,
                                                TimePoint deadline) {
  const Seam& seam = deps.seam;
  MVR_ASSIGN_OR_RETURN(Secret token, vms.ControlToken(vm.microvm_id, fleet::kControlPort,
                                                      fleet::kControlTokenMinutes, deadline));
  if (deps.on_secret) deps.on_secret(token);
  Result<fleet::SupervisorStatus> status =
      fleet::ReadSupervisorStatus(deps.http, seam, vm.endpoint, token, deadline);
  if (!status.ok()) {
    return Status(status.status().code(),
                  "cannot tell which job MicroVM " + vm.microvm_id +
                      " serves, so it is left running: " + status.status().message());
  }
  // The runner never took a job and was just removed: give its process time to exit, or the
  // supervisor refuses /suspend and the VM is frozen with a runner mid-flight.
  const std::string ours = fleet::RunnerRequestId(runner_id);
  const TimePoint until = std::min(deadline, seam.clock.Now() + kRunnerExitWait);
  for (int poll = 0; status->current_request_id == ours && RunnerProcessUp(*status); ++poll) {
    if (!SleepBeforeNextPoll(kStatusPoll, seam, poll, until, Status::Ok())) break;
    Result<fleet::SupervisorStatus> again =
        fleet::ReadSupervisorStatus(deps.http, seam, vm.endpoint, token, until);
    if (!again.ok()) break;
    status = std::move(again);
  }
  return status;
}

Status Cleanup::Fail(const Status& failure) {
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

void Milestone(const ActionDeps& d, const std::string& name) {
  if (d.on_milestone) d.on_milestone(name, d.seam.clock.Now());
}

Result<github::RunnerScope> ScopeOf(const Endpoints& e) {
  return github::RunnerScope::Parse(e.repository);
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

aws::RunMicrovmRequest RunRequest(const StartCommand& c, std::string client_token,
                                  std::string payload, int64_t max_duration_seconds) {
  aws::RunMicrovmRequest r;
  r.image_identifier = c.image_arn.empty() ? c.image_id : c.image_arn;
  fleet::ApplyConnectors({c.ingress_connectors, c.egress_connectors}, r);
  r.image_version = c.image_version;
  r.execution_role_arn = c.execution_role_arn;
  r.log_group = c.log_group;
  r.run_hook_payload = Secret(std::move(payload));
  r.maximum_duration_in_seconds = max_duration_seconds;
  r.client_token = std::move(client_token);
  return r;
}

Result<aws::RunMicrovmRequest> LaunchRequest(const ActionDeps& deps, const StartCommand& c,
                                             std::string client_token, std::string payload,
                                             int64_t max_duration_seconds, TimePoint deadline) {
  aws::RunMicrovmRequest r =
      RunRequest(c, std::move(client_token), std::move(payload), max_duration_seconds);
  if (c.image_arn.empty()) {
    Result<std::string> arn =
        fleet::ResolveImageArn(deps.seam, deps.microvms, c.image_id, deadline);
    if (!arn.ok()) return arn.status().Annotate("input 'image-id'");
    r.image_identifier = std::move(*arn);
  }
  return r;
}

Status RequireControlKey(const ActionDeps& deps) {
  if (!deps.control_key.empty()) return Status::Ok();
  return InvalidArgument(
      "warm and pooled starts need the environment variable MVR_CONTROL_KEY: a secret (32 or more "
      "random characters) from which each warm MicroVM's control nonce is derived, the same for "
      "every job that uses the server; set it on this step from a repository secret, one per "
      "repository (env: MVR_CONTROL_KEY: ${{ secrets.MVR_CONTROL_KEY }})");
}

std::vector<Secret> ControlKeys(const ActionDeps& deps) {
  std::vector<Secret> keys{deps.control_key};
  if (!deps.previous_control_key.empty() &&
      deps.previous_control_key.Reveal() != deps.control_key.Reveal()) {
    keys.push_back(deps.previous_control_key);
  }
  return keys;
}

namespace {

Result<Secret> NonceUnder(const ActionDeps& deps, const Secret& key, const StartCommand& c,
                          const std::string& launch_token) {
  MVR_ASSIGN_OR_RETURN(Secret nonce,
                       supervisor::DeriveBoundControlNonce(
                           key, {c.identity.repository_id, c.endpoints.region}, launch_token));
  if (deps.on_secret) deps.on_secret(nonce);
  return nonce;
}

}  // namespace

Result<Secret> ControlNonce(const ActionDeps& deps, const StartCommand& c,
                            const std::string& launch_token) {
  if (launch_token.empty()) return Secret();
  MVR_RETURN_IF_ERROR(RequireControlKey(deps));
  return NonceUnder(deps, deps.control_key, c, launch_token);
}

Result<std::vector<Secret>> ControlNonces(const ActionDeps& deps, const StartCommand& c,
                                          const std::string& launch_token) {
  if (launch_token.empty()) return std::vector<Secret>{Secret()};
  MVR_RETURN_IF_ERROR(RequireControlKey(deps));
  std::vector<Secret> nonces;
  for (const Secret& key : ControlKeys(deps)) {
    MVR_ASSIGN_OR_RETURN(Secret nonce, NonceUnder(deps, key, c, launch_token));
    nonces.push_back(std::move(nonce));
  }
  return nonces;
}

Status DeliverAndAwait(const ActionDeps& deps, fleet::MicrovmLifecycle& vms,
                       fleet::RunnerRegistration& runners, const aws::Microvm& vm,
                       const github::JitConfig& jit, const std::vector<Secret>& nonces,
                       const std::string& label, TimePoint deadline) {
  MVR_ASSIGN_OR_RETURN(Secret token, vms.ControlToken(vm.microvm_id, fleet::kControlPort,
                                                      fleet::kControlTokenMinutes, deadline));
  if (deps.on_secret) deps.on_secret(token);
  Status delivered = InvalidArgument("no control nonce to deliver with");
  for (size_t i = 0; i < nonces.size(); ++i) {
    // A refused nonce is not recorded by the supervisor: the same requestId may carry the next.
    fleet::RunnerStartDelivery delivery{vm.endpoint,
                                        token,
                                        fleet::RunnerRequestId(jit.runner.id),
                                        vm.microvm_id,
                                        jit.encoded_jit_config,
                                        nonces[i]};
    delivered = fleet::DeliverRunnerStart(deps.http, deps.seam, delivery, deadline);
    if (delivered.error_type() != fleet::kWrongNonce) break;
    if (i + 1 < nonces.size()) {
      deps.seam.logger.Info("control nonce refused; trying the previous key's",
                            {{"microvm_id", vm.microvm_id}});
    }
  }
  if (delivered.error_type() == fleet::kWrongNonce) {
    delivered = Status(delivered.code(),
                       delivered.message() +
                           " (the MicroVM was launched under another control key or repository "
                           "than this step's MVR_CONTROL_KEY" +
                           (nonces.size() > 1 ? " and MVR_CONTROL_KEY_PREVIOUS" : "") + ")")
                    .WithErrorType(fleet::kWrongNonce);
  }
  MVR_RETURN_IF_ERROR(delivered);
  MVR_RETURN_IF_ERROR(runners.WaitOnline(jit.runner.id, label, deadline));
  Milestone(deps, "runner_online");
  return Status::Ok();
}

Result<github::JitConfig> StartParts::RegisterRunner(const ActionDeps& deps, const StartCommand& c,
                                                     TimePoint deadline) {
  github::JitConfigRequest r;
  r.name = id.label;
  r.runner_group_id = c.runner_group_id;
  // An ARM64 MicroVM's labels (self-hosted, linux, ARM64), never another architecture's: inputs
  // refuse runner-labels naming one (github/platform_labels.h).
  std::vector<std::string> custom{id.label};
  custom.insert(custom.end(), c.extra_labels.begin(), c.extra_labels.end());
  r.labels = github::Arm64RunnerLabels(custom);
  r.work_folder = c.work_folder;
  Result<github::JitConfig> jit = runners.Register(r, deadline);
  if (!jit.ok()) return jit;
  if (deps.on_secret) deps.on_secret(jit->encoded_jit_config);
  const int64_t runner_id = jit->runner.id;
  cleanup.Add("removed JIT runner " + id.label,
              [this, runner_id] { return runners.Remove(runner_id, CleanupDeadline(seam)); });
  Milestone(deps, "runner_registered");
  return jit;
}

void StartParts::TerminateOnFailure(const std::string& microvm_id) {
  cleanup.Add("terminated MicroVM " + microvm_id,
              [this, microvm_id] { return vms.Terminate(microvm_id, CleanupDeadline(seam)); });
}

Status CheckHandleScope(const ServerHandle& h, const std::string& repository_id,
                        const std::string& region) {
  if (!repository_id.empty() && h.repository_id != repository_id) {
    return InvalidArgument("the server handle for MicroVM " + h.microvm_id +
                           " belongs to another repository (id " + h.repository_id + ", this is " +
                           repository_id +
                           "); warm MicroVMs are never shared between repositories");
  }
  if (h.region != region) {
    return InvalidArgument("the server handle names MicroVM " + h.microvm_id + " in " + h.region +
                           ", but this step uses region " + region +
                           "; pass the same region as the start that made the handle");
  }
  return Status::Ok();
}

Result<std::unique_ptr<StartParts>> MakeStartParts(const ActionDeps& deps, const StartCommand& c) {
  MVR_ASSIGN_OR_RETURN(DerivedIdentity id, DeriveIdentity(c.identity));
  MVR_ASSIGN_OR_RETURN(github::RunnerScope scope, ScopeOf(c.endpoints));
  return std::make_unique<StartParts>(deps, std::move(id), std::move(scope));
}

}  // namespace mvr::action::internal
