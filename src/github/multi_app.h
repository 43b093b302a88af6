// MultiAppGitHub: one GitHub seam over several GitHub Apps installed on the same scope
// (`github.apps`, docs/runner-set-github.md "Several GitHub Apps"). GitHub's rate limits are per
// App installation: 5,000 requests an hour, and the secondary limits, of which 500 content-creating
// requests an hour (JIT configs) bind a burst first. Each App here is a GitHubClient with its own
// token and its own RateBudget, and each call goes to the App with the most room for it:
//  - a JIT config or a registration token (content-creating): the App whose budget admits one
//    soonest, then the one with the most left this hour and this minute;
//  - any other call: the App with the most of its hourly budget left;
//  - ties go round the Apps in turn, so registrations spread evenly;
//  - an App whose credentials GitHub refuses goes last.
// A call the chosen App refuses for its rate limits (Throttled: nothing was sent, or GitHub
// answered 403/429 and created nothing) or for its credentials (Unauthorized) is tried on the
// next App; any other answer is the answer (a JIT config that failed in flight may exist, and
// its caller lists it by name before retrying). Only the first App's webhook delivers the jobs,
// so hook deliveries are read through it alone.
// The snapshot for pacing and the status adds up the Apps' budgets: the set may spend what any
// of them has left, and waits only when none has room.
// Thread-safety: safe to share; the Apps must be, and must outlive it.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "github/github.h"

namespace mvr::github {

class MultiAppGitHub final : public GitHub {
 public:
  // REQUIRES: at least one App. `apps` are not owned.
  explicit MultiAppGitHub(std::vector<GitHub*> apps, const Clock& clock);

  Result<JitConfig> GenerateJitConfig(const RunnerScope& scope,
                                      const JitConfigRequest& request) override;
  Result<std::vector<Runner>> ListRunners(const RunnerScope& scope,
                                          const ListRunnersOptions& options) override;
  Result<Runner> GetRunner(const RunnerScope& scope, int64_t runner_id) override;
  Status DeleteRunner(const RunnerScope& scope, int64_t runner_id) override;
  Result<Job> GetJob(const RepositoryRef& repo, int64_t job_id) override;
  Status RerunJob(const RepositoryRef& repo, int64_t job_id) override;
  Result<std::vector<Job>> ListQueuedJobs(const RepositoryRef& repo,
                                          const QueuedRunsFilter& filter) override;
  Result<std::vector<Job>> ListInProgressJobs(const RepositoryRef& repo) override;
  Result<std::vector<HookDelivery>> ListHookDeliveries(const HookRef& hook, TimePoint since,
                                                       int max_pages) override;
  Result<std::vector<std::string>> ListVisibleRepositories(const RunnerScope& scope) override;
  Result<RegistrationToken> CreateRegistrationToken(const RunnerScope& scope) override;
  Result<RunnerRelease> GetLatestRunnerRelease() override;
  // The earliest of the Apps whose credentials GitHub refuses now: one failing App shows, though
  // the others carry the calls.
  std::optional<TimePoint> AuthFailingSince() const override;
  std::optional<RateBudgetSnapshot> RateBudgetNow() const override;

 private:
  // The Apps in the order a call should try them.
  std::vector<size_t> Order(bool content_creating) const;
  // Tries `call(app)` on each App in Order until one answers other than Throttled/Unauthorized.
  template <typename Call>
  std::invoke_result_t<Call, GitHub&> Route(bool content_creating, Call call);

  std::vector<GitHub*> apps_;
  const Clock& clock_;
  mutable std::atomic<size_t> turn_{0};
};

// The snapshots of several Apps as one (MultiAppGitHub::RateBudgetNow): the limits and what is
// left add up, the waits are the shortest (a call waits only when no App has room), and an App
// without a snapshot is left out. nullopt when none has one.
std::optional<RateBudgetSnapshot> CombineRateBudgets(
    const std::vector<std::optional<RateBudgetSnapshot>>& apps, TimePoint now);

}  // namespace mvr::github
