#include "runnerset/ops/reserved_github.h"

#include <cmath>

namespace mvr::runnerset {

using namespace mvr::github;  // NOLINT(build/namespaces)

Status ReservedGitHub::Admit() const {
  std::optional<RateBudgetSnapshot> budget = inner_.RateBudgetNow();
  if (!budget || !budget->primary || budget->primary->limit <= 0) return Status::Ok();
  const RateLimit& p = *budget->primary;
  const TimePoint now = clock_.Now();
  if (now >= p.reset) return Status::Ok();  // a new window: the headers are out of date
  const auto reserved =
      static_cast<int64_t>(std::ceil(static_cast<double>(p.limit) * reserved_share_));
  if (p.remaining > reserved) return Status::Ok();
  const Duration wait = std::chrono::duration_cast<Duration>(p.reset - now);
  return Throttled("GitHub read held back: " + std::to_string(p.remaining) + " of " +
                   std::to_string(p.limit) + " calls are left until the budget resets in " +
                   std::to_string((wait.count() + 999) / 1000) + " s, and the last " +
                   std::to_string(reserved) +
                   " are kept for launches (status, the runner watch and the janitor wait)")
      .WithErrorType("RateBudget")
      .WithRetryAfter(wait);
}

Result<JitConfig> ReservedGitHub::GenerateJitConfig(const RunnerScope& scope,
                                                    const JitConfigRequest& request) {
  return inner_.GenerateJitConfig(scope, request);
}

Result<std::vector<Runner>> ReservedGitHub::ListRunners(const RunnerScope& scope,
                                                        const ListRunnersOptions& options) {
  MVR_RETURN_IF_ERROR(Admit());
  return inner_.ListRunners(scope, options);
}

Result<Runner> ReservedGitHub::GetRunner(const RunnerScope& scope, int64_t runner_id) {
  MVR_RETURN_IF_ERROR(Admit());
  return inner_.GetRunner(scope, runner_id);
}

Status ReservedGitHub::DeleteRunner(const RunnerScope& scope, int64_t runner_id) {
  return inner_.DeleteRunner(scope, runner_id);
}

Status ReservedGitHub::RerunJob(const RepositoryRef& repo, int64_t job_id) {
  return inner_.RerunJob(repo, job_id);  // a write, as a launch's: never held back
}

Result<Job> ReservedGitHub::GetJob(const RepositoryRef& repo, int64_t job_id) {
  MVR_RETURN_IF_ERROR(Admit());
  return inner_.GetJob(repo, job_id);
}

Result<std::vector<Job>> ReservedGitHub::ListQueuedJobs(const RepositoryRef& repo,
                                                        const QueuedRunsFilter& filter) {
  MVR_RETURN_IF_ERROR(Admit());
  return inner_.ListQueuedJobs(repo, filter);
}

Result<std::vector<Job>> ReservedGitHub::ListInProgressJobs(const RepositoryRef& repo) {
  MVR_RETURN_IF_ERROR(Admit());
  return inner_.ListInProgressJobs(repo);
}

Result<std::vector<HookDelivery>> ReservedGitHub::ListHookDeliveries(const HookRef& hook,
                                                                     TimePoint since,
                                                                     int max_pages) {
  MVR_RETURN_IF_ERROR(Admit());
  return inner_.ListHookDeliveries(hook, since, max_pages);
}

Result<std::vector<std::string>> ReservedGitHub::ListVisibleRepositories(const RunnerScope& scope) {
  MVR_RETURN_IF_ERROR(Admit());
  return inner_.ListVisibleRepositories(scope);
}

Result<RegistrationToken> ReservedGitHub::CreateRegistrationToken(const RunnerScope& scope) {
  return inner_.CreateRegistrationToken(scope);
}

Result<RunnerRelease> ReservedGitHub::GetLatestRunnerRelease() {
  MVR_RETURN_IF_ERROR(Admit());
  return inner_.GetLatestRunnerRelease();
}

}  // namespace mvr::runnerset
