// Launcher::TerminateUncommitted: the end (JobCompleted, `completed`) of a job run by a runner
// whose launch died between its delivery and its commit. The runner took a job all the same, but
// no mapping row names its VM, so the terminate intent used to do nothing and the VM held its seat
// of the cap until the janitor's unmapped-VM sweep, minutes later: long enough for a scale set's
// jobs waiting for that seat to be re-offered until GitHub stopped offering them (the
// `scaleset-chaos` simulation, where a fifth of the launches die before their commit). The claim
// of the job the runner was launched for (its name says which, and which attempt: the suffix is
// the attempt token's first 8 characters) still names the VM; a takeover of that claim ended the
// VM already and holds another token.
#include "fleet/microvm_lifecycle.h"
#include "runnerset/config/runner_name.h"
#include "runnerset/launch/launcher.h"

namespace mvr::runnerset {

std::optional<LaunchOutcome> Launcher::TerminateUncommitted(const TerminateIntent& in) {
  const RunnerNameParts parts = ParseRunnerName(config_.runner_name_prefix, in.runner_name);
  const size_t dash = in.runner_name.rfind('-');
  if (parts.kind != RunnerNameParts::Kind::kJob || in.repository.empty() ||
      dash == std::string::npos) {
    return std::nullopt;
  }
  const std::string suffix = in.runner_name.substr(dash + 1);
  Result<std::optional<Claim>> claim = deps_.table.GetClaim(in.repository, parts.job_id);
  if (!claim.ok() || !*claim) return std::nullopt;
  const Claim& c = **claim;
  // A committed claim's VM had its row: ended with it, or the row is the janitor's to mend.
  const std::string& vm = c.pending_microvm_id;
  if (!c.microvm_id.empty() || vm.empty() || suffix.empty() ||
      c.attempt_token.rfind(suffix, 0) != 0) {
    return std::nullopt;
  }
  const Seam& seam = deps_.seam;
  LaunchOutcome out;
  out.runner_name = in.runner_name;
  fleet::MicrovmLifecycle vms(seam, deps_.microvms);
  if (Status t = vms.RequestTerminate(vm, seam.clock.Now() + config_.launch_timeout()); !t.ok()) {
    out.decision = LaunchDecision::kFailed;
    out.retry_after = config_.defer_delay();
    out.detail = t.ToString();
    return out;
  }
  // The job it was launched for may still wait (its runner took another): it can be launched
  // again. A release that fails leaves the claim to a takeover, which finds the VM ended.
  if (Status r =
          deps_.table.Release(RunnerTable::ClaimKey(in.repository, parts.job_id), c.attempt_token);
      !r.ok()) {
    seam.logger.Warn("releasing the claim of a launch that died before its commit",
                     {{"job_id", parts.job_id}, {"error", r.ToString()}});
  }
  if (Status f = cap_.FreeVm(vm); !f.ok()) {
    seam.logger.Warn("freeing the MicroVM's seat of the cap",
                     {{"microvm_id", vm}, {"error", f.ToString()}});
  }
  seam.logger.Info("terminated the MicroVM of a launch that died before its commit",
                   {{"runner_name", in.runner_name}, {"microvm_id", vm}});
  out.decision = LaunchDecision::kTerminated;
  out.microvm_id = vm;
  out.detail = "the launch of its runner died before its commit";
  return out;
}

}  // namespace mvr::runnerset
