// GitHubClient: the GitHub seam over the REST API, for github.com, GitHub Enterprise Server
// (base https://HOST/api/v3) and mvr's emulator alike. Lists follow the Link header's rel="next"
// page by page; rate-limit headers are tracked (last_rate_limit) and limit answers become
// Throttled with the wait GitHub asked for. A 401 with an App installation token drops the cached
// token, so the next call fetches a new one. No call retries by itself. A 401 starts an auth
// outage (auth_health.h): calls are refused without reaching GitHub until the next probe, which
// first re-reads the secret (GitHubAuth::reload); one log line when the outage begins, one when
// it ends. Calls are paced to GitHub's rate limits (rate_budget.h): one that would break a limit,
// or that GitHub's last 403/429 asked to wait, is refused here (Throttled "RateBudget").
// Thread-safety: safe to share between threads; no lock is held across an HTTP call.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "base/clock.h"
#include "base/logger.h"
#include "github/auth.h"
#include "github/auth_health.h"
#include "github/github.h"
#include "github/rate_budget.h"
#include "github/rest_transport.h"
#include "http/client.h"

namespace mvr::github {

struct GitHubClientOptions {
  RestOptions rest;
  int per_page = 100;        // 1..100, GitHub's maximum
  int max_pages = 100;       // a listing longer than this is refused rather than followed forever
  AuthBackoff auth_backoff;  // the waits between probes while GitHub refuses the credentials
  Random* jitter = nullptr;  // the seam's random, for those waits' jitter (none: no jitter)
  // The seam's random and sleeper, required with an App: its JWTs' jti, the backoff of its token
  // requests answered 404, and the waits for another caller's token request (auth.h).
  Random* random = nullptr;
  Sleeper* sleeper = nullptr;
  // One installation token request in flight at a time (auth.h). Off only for the simulation's
  // planted bug (plant_token_race), which must be found.
  bool single_flight_tokens = true;
  RateBudgetOptions rate_budget;  // the rate limits the client paces itself to
};

class GitHubClient final : public GitHub {
 public:
  // InvalidArgument for a bad base URL, bad auth or out-of-range options. `http`, `clock` and
  // `logger` (optional) must outlive the client.
  static Result<std::unique_ptr<GitHubClient>> Create(http::HttpClient& http, const Clock& clock,
                                                      GitHubAuth auth,
                                                      GitHubClientOptions options = {},
                                                      const Logger* logger = nullptr);

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
  Result<RegistrationToken> CreateRegistrationToken(const RunnerScope& scope) override;
  Result<std::vector<HookDelivery>> ListHookDeliveries(const HookRef& hook, TimePoint since,
                                                       int max_pages) override;
  Result<std::vector<std::string>> ListVisibleRepositories(const RunnerScope& scope) override;
  Result<RunnerRelease> GetLatestRunnerRelease() override;
  std::optional<TimePoint> AuthFailingSince() const override { return health_.failing_since(); }
  std::optional<RateBudgetSnapshot> RateBudgetNow() const override;

  // --- What `mvr doctor` reads (github_client_doctor.cpp); not part of the GitHub seam, since
  // nothing else asks. ---
  // The webhook's delivery settings: the App's (GET /app/hook/config, with the App's JWT) or a
  // repository's or organisation's hook (GET …/hooks/{id}: also whether it is active and its
  // events).
  Result<HookConfig> GetHookConfig(const HookRef& hook);
  // The App's installation (GET /app/installations/{id}, with the App's JWT): its permissions.
  // InvalidArgument with token auth.
  Result<InstallationInfo> GetInstallation();
  // GET of the scope's runners (one page of one) with the configured credential: whether GitHub
  // accepts it, and a classic token's scopes (X-OAuth-Scopes; nullopt for a fine-grained token
  // or an installation token, which carry none).
  Result<CredentialProbe> ProbeCredential(const RunnerScope& scope);
  bool is_app() const { return auth_.is_app(); }
  // workflow_dispatch of `workflow` (its file name or id) at `ref` with `inputs`
  // (github_client_dispatch.cpp): what `mvr doctor --canary` queues its job with. NotFound when
  // the repository has no such workflow; InvalidArgument (422) when it has no workflow_dispatch
  // trigger or refuses the inputs.
  Status DispatchWorkflow(const RepositoryRef& repo, const std::string& workflow,
                          const std::string& ref, const std::map<std::string, std::string>& inputs);

  // The X-RateLimit-* values of the last answer that carried them.
  std::optional<RateLimit> last_rate_limit() const { return rest_.last_rate_limit(); }
  // Installation-token exchanges so far (0 with token auth).
  int token_exchanges() const { return auth_.exchanges(); }

 private:
  GitHubClient(http::HttpClient& http, const Clock& clock, std::string base_url, GitHubAuth auth,
               GitHubClientOptions options, const Logger* logger);

  // The jobs with `job_status` of the repository's runs with `run_status`.
  Result<std::vector<Job>> ListJobsOfRuns(const RepositoryRef& repo, const std::string& run_status,
                                          JobStatus job_status, const QueuedRunsFilter& filter);
  // One authenticated exchange, admitted by health_; a 401 forgets the cached installation
  // token and counts against the credentials.
  Result<http::HttpResponse> Call(const std::string& method, const std::string& target,
                                  const std::string& body = "");
  Result<http::HttpResponse> Exchange(const std::string& method, const std::string& target,
                                      const std::string& body);
  // A GET as the App itself (its JWT), for the App's own hook (github_client_hooks.cpp).
  Result<http::HttpResponse> CallAsApp(const std::string& target);
  // Tells health_ how an admitted call went, and logs a change of state.
  void Observe(const Status& outcome, bool probe);

  // GETs `target` and every rel="next" page after it, parsing each element of the array member
  // `key` with `parse`.
  template <typename T, typename Parse>
  Result<std::vector<T>> ListAll(const std::string& target, const char* key, Parse parse);
  // GETs `target` and every rel="next" page after it (at most options_.max_pages), handing each
  // 2xx answer to `read` with the page's target.
  Status WalkPages(
      const std::string& target,
      const std::function<Status(const http::HttpResponse&, const std::string&)>& read);

  RestTransport rest_;
  Authenticator auth_;
  GitHubClientOptions options_;
  AuthHealth health_;
  RateBudget budget_;
  const Logger* logger_;
};

}  // namespace mvr::github
