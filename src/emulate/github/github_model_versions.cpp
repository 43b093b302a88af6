// GithubModel: the runner versions GitHub accepts (SetRunnerVersionPolicy; runner_versions.h).
#include "emulate/github/github_model.h"

namespace mvr::emulate::github {

Status GithubModel::SetRunnerVersionPolicy(RunnerVersionPolicy policy) {
  for (const std::string* v : {&policy.min_version, &policy.latest_release}) {
    if (!v->empty()) MVR_RETURN_IF_ERROR(CheckRunnerVersion(*v));
  }
  std::lock_guard<std::mutex> lock(mu_);
  runner_versions_ = std::move(policy);
  return Status::Ok();
}

RunnerVersionPolicy GithubModel::runner_version_policy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return runner_versions_;
}

std::string GithubModel::RefuseVersionLocked(RunnerState& r) {
  if (r.runner.version.empty()) return "";  // not connected yet: nothing to refuse
  std::string why = RunnerVersionRefusal(runner_versions_, r.runner.version, seam_.clock.Now());
  if (!why.empty() && !r.version_refused) {
    // The runner's session ends: GitHub shows it offline from now on, and it gets no job.
    r.version_refused = true;
    r.runner.last_seen.reset();
  }
  return why;
}

}  // namespace mvr::emulate::github
