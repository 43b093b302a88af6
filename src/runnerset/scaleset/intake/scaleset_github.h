// ScaleSetGitHub: GitHub as the launcher sees it when the set's jobs come from runner scale sets
// (issue 54): a JIT runner asked for a scale set (JitConfigRequest::scale_set_id) is registered
// through the set's generatejitconfig, so GitHub gives it the job the set acquired; every other
// call goes to the REST GitHub unchanged. Thread-safety: as the two clients it wraps.
#pragma once

#include "github/github.h"
#include "github/scaleset_client.h"

namespace mvr::runnerset {

class ScaleSetGitHub final : public github::GitHub {
 public:
  // Both must outlive this.
  ScaleSetGitHub(github::GitHub& rest, github::ScaleSetClient& sets) : rest_(rest), sets_(sets) {}

  Result<github::JitConfig> GenerateJitConfig(const github::RunnerScope& scope,
                                              const github::JitConfigRequest& request) override {
    if (request.scale_set_id == 0) return rest_.GenerateJitConfig(scope, request);
    return sets_.GenerateJitConfig(request.scale_set_id, request.name);
  }
  Result<std::vector<github::Runner>> ListRunners(
      const github::RunnerScope& scope, const github::ListRunnersOptions& options) override {
    return rest_.ListRunners(scope, options);
  }
  Result<github::Runner> GetRunner(const github::RunnerScope& scope, int64_t runner_id) override {
    return rest_.GetRunner(scope, runner_id);
  }
  Status DeleteRunner(const github::RunnerScope& scope, int64_t runner_id) override {
    return rest_.DeleteRunner(scope, runner_id);
  }
  Result<github::Job> GetJob(const github::RepositoryRef& repo, int64_t job_id) override {
    return rest_.GetJob(repo, job_id);
  }
  Status RerunJob(const github::RepositoryRef& repo, int64_t job_id) override {
    return rest_.RerunJob(repo, job_id);
  }
  Result<std::vector<github::Job>> ListQueuedJobs(const github::RepositoryRef& repo,
                                                  const github::QueuedRunsFilter& filter) override {
    return rest_.ListQueuedJobs(repo, filter);
  }
  Result<std::vector<github::Job>> ListInProgressJobs(const github::RepositoryRef& repo) override {
    return rest_.ListInProgressJobs(repo);
  }
  Result<std::vector<github::HookDelivery>> ListHookDeliveries(const github::HookRef& hook,
                                                               TimePoint since,
                                                               int max_pages) override {
    return rest_.ListHookDeliveries(hook, since, max_pages);
  }
  Result<std::vector<std::string>> ListVisibleRepositories(
      const github::RunnerScope& scope) override {
    return rest_.ListVisibleRepositories(scope);
  }
  Result<github::RegistrationToken> CreateRegistrationToken(
      const github::RunnerScope& scope) override {
    return rest_.CreateRegistrationToken(scope);
  }
  Result<github::RunnerRelease> GetLatestRunnerRelease() override {
    return rest_.GetLatestRunnerRelease();
  }
  std::optional<TimePoint> AuthFailingSince() const override { return rest_.AuthFailingSince(); }
  std::optional<github::RateBudgetSnapshot> RateBudgetNow() const override {
    return rest_.RateBudgetNow();
  }

 private:
  github::GitHub& rest_;
  github::ScaleSetClient& sets_;
};

}  // namespace mvr::runnerset
