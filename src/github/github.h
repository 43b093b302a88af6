// GitHub: the seam interface for everything mvr asks of GitHub (JIT runners, runners, jobs).
// GitHubClient (github_client.h) implements it over REST for github.com, GHES and the emulator;
// tests and the simulation may implement it over the emulator's model. Errors are values:
// NotFound, Conflict, Throttled (with retry_after), Transient, Unauthorized, InvalidArgument,
// Internal (a malformed answer). Nothing here retries; wrap calls in mvr::Retry, which honours
// retry_after.
// Thread-safety: implementations must be safe to call from many threads at once.
#pragma once

#include <optional>
#include <vector>

#include "base/clock.h"

#include "base/status.h"
#include "github/hook_deliveries.h"
#include "github/rate_budget.h"
#include "github/types.h"

namespace mvr::github {

struct ListRunnersOptions {
  std::string name;  // exact runner name filter; empty lists every runner
};

// Which queued workflow runs ListQueuedJobs reads the jobs of.
struct QueuedRunsFilter {
  // The jobs of at most this many runs, the longest waiting first; 0: every run.
  int max_runs = 0;
  // When set, told how many runs let through were left unread for max_runs.
  int* runs_unread = nullptr;
};

class GitHub {
 public:
  virtual ~GitHub() = default;

  // POST .../actions/runners/generate-jitconfig. A runner of that name already in the scope is
  // Conflict. Not idempotent: on Transient the runner may exist; list it by name before retrying.
  virtual Result<JitConfig> GenerateJitConfig(const RunnerScope& scope,
                                              const JitConfigRequest& request) = 0;

  // Every runner of the scope (all pages).
  virtual Result<std::vector<Runner>> ListRunners(const RunnerScope& scope,
                                                  const ListRunnersOptions& options) = 0;

  // NotFound when the runner is gone (a JIT runner deregisters itself after its job).
  virtual Result<Runner> GetRunner(const RunnerScope& scope, int64_t runner_id) = 0;

  // NotFound when already gone. A runner that is running a job cannot be removed: Conflict.
  virtual Status DeleteRunner(const RunnerScope& scope, int64_t runner_id) = 0;

  virtual Result<Job> GetJob(const RepositoryRef& repo, int64_t job_id) = 0;

  // POST /repos/{o}/{r}/actions/jobs/{job_id}/rerun (needs `actions: write`): GitHub queues the
  // job again in a new attempt of its run. GitHub's refusal (403: the run is not complete, or the
  // credentials lack the permission) is Unauthorized with error type "Forbidden".
  virtual Status RerunJob(const RepositoryRef& repo, int64_t job_id) {
    (void)repo;
    (void)job_id;
    return Internal("re-running a job is not implemented by this GitHub client");
  }

  // Jobs with status queued in the repository's queued workflow runs (latest attempt of each),
  // of the runs `filter` lets through: each run's jobs cost a GET.
  virtual Result<std::vector<Job>> ListQueuedJobs(const RepositoryRef& repo,
                                                  const QueuedRunsFilter& filter) = 0;

  // Jobs with status in_progress in the repository's in-progress workflow runs: which runner
  // runs what, from the jobs API rather than a runner's `busy` flag.
  virtual Result<std::vector<Job>> ListInProgressJobs(const RepositoryRef& repo) = 0;

  // Deliveries of `hook`, newest first, following the Link header's cursor until a delivery made
  // before `since` or `max_pages` pages, whichever comes first (a bounded read each sweep).
  virtual Result<std::vector<HookDelivery>> ListHookDeliveries(const HookRef& hook, TimePoint since,
                                                               int max_pages) = 0;

  // "owner/name" of every repository whose jobs the set may serve: for a repository scope the
  // repository itself; for an organisation, those the App's installation can see (GET
  // /installation/repositories) or, with a token, the organisation's (GET /orgs/{org}/repos).
  virtual Result<std::vector<std::string>> ListVisibleRepositories(const RunnerScope& scope) = 0;

  // POST .../actions/runners/registration-token (a token for config.sh, valid one hour).
  virtual Result<RegistrationToken> CreateRegistrationToken(const RunnerScope& scope) = 0;

  // The runner's newest release; NotFound when none is known (or the implementation does not
  // ask).
  virtual Result<RunnerRelease> GetLatestRunnerRelease() {
    return NotFound("the runner's releases are not read here");
  }

  // When GitHub began refusing the credentials (401 Bad credentials), while it still does;
  // nullopt when it accepts them, or when the implementation does not track it.
  virtual std::optional<TimePoint> AuthFailingSince() const { return std::nullopt; }

  // What is left of GitHub's rate limits as the implementation counts them (rate_budget.h);
  // nullopt when it does not.
  virtual std::optional<RateBudgetSnapshot> RateBudgetNow() const { return std::nullopt; }
};

}  // namespace mvr::github
