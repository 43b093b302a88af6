// ReservedGitHub: GitHub as `mvr serve`'s background readers see it - the status routes, the
// runner watch and the janitor (issue 53, item 1). Their reads stop while what is left of GitHub's
// primary budget (X-RateLimit-Remaining, as the client last read it) is at or below a reserved
// share of the limit: that share is kept for launches (JIT configs and the launcher's own reads,
// which go to GitHub directly), so a page left open or a client polling the status routes cannot
// make launches wait for the next hour. A held-back read is Throttled "RateBudget" with the wait
// until the budget's reset; nothing is sent. Writes (deleting a runner, JIT configs, registration
// tokens) pass through. Thread-safety: as the GitHub it wraps.
#pragma once

#include "base/clock.h"
#include "github/github.h"

namespace mvr::runnerset {

// The share of the primary budget background reads never spend (docs/runner-set-operations.md).
inline constexpr double kLaunchReservedShare = 0.2;

class ReservedGitHub final : public github::GitHub {
 public:
  // `inner` must outlive this.
  ReservedGitHub(github::GitHub& inner, const Clock& clock,
                 double reserved_share = kLaunchReservedShare)
      : inner_(inner), clock_(clock), reserved_share_(reserved_share) {}

  // Ok, or the Throttled status a background read gets now.
  Status Admit() const;

  Result<github::JitConfig> GenerateJitConfig(const github::RunnerScope& scope,
                                              const github::JitConfigRequest& request) override;
  Result<std::vector<github::Runner>> ListRunners(
      const github::RunnerScope& scope, const github::ListRunnersOptions& options) override;
  Result<github::Runner> GetRunner(const github::RunnerScope& scope, int64_t runner_id) override;
  Status DeleteRunner(const github::RunnerScope& scope, int64_t runner_id) override;
  Result<github::Job> GetJob(const github::RepositoryRef& repo, int64_t job_id) override;
  Status RerunJob(const github::RepositoryRef& repo, int64_t job_id) override;
  Result<std::vector<github::Job>> ListQueuedJobs(const github::RepositoryRef& repo,
                                                  const github::QueuedRunsFilter& filter) override;
  Result<std::vector<github::Job>> ListInProgressJobs(const github::RepositoryRef& repo) override;
  Result<std::vector<github::HookDelivery>> ListHookDeliveries(const github::HookRef& hook,
                                                               TimePoint since,
                                                               int max_pages) override;
  Result<std::vector<std::string>> ListVisibleRepositories(
      const github::RunnerScope& scope) override;
  Result<github::RegistrationToken> CreateRegistrationToken(
      const github::RunnerScope& scope) override;
  Result<github::RunnerRelease> GetLatestRunnerRelease() override;
  std::optional<TimePoint> AuthFailingSince() const override { return inner_.AuthFailingSince(); }
  std::optional<github::RateBudgetSnapshot> RateBudgetNow() const override {
    return inner_.RateBudgetNow();
  }

 private:
  github::GitHub& inner_;
  const Clock& clock_;
  const double reserved_share_;
};

}  // namespace mvr::runnerset
