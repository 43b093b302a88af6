#include "github/github_client.h"

#include "base/encoding.h"
#include "base/time_format.h"
#include "github/json_parsers.h"
#include "github/runs_page.h"
#include "http/types.h"

namespace mvr::github {
namespace {

std::string RepoPath(const RepositoryRef& repo) {
  return "/repos/" + UriEncode(repo.owner) + "/" + UriEncode(repo.name);
}

Status CheckRepo(const RepositoryRef& repo) {
  if (repo.owner.empty() || repo.name.empty()) {
    return InvalidArgument("a repository needs an owner and a name");
  }
  return Status::Ok();
}

Status CheckScope(const RunnerScope& scope) {
  if (scope.owner().empty()) return InvalidArgument("the runner scope names no owner");
  return Status::Ok();
}

Status CheckId(int64_t id, const char* what) {
  if (id <= 0) return InvalidArgument(std::string(what) + " must be a positive number");
  return Status::Ok();
}

// A 2xx answer GitHub's documentation does not allow for is a broken contract, not bad input.
Status Malformed(const std::string& method, const std::string& target, const Status& why) {
  return Internal("GitHub " + method + " " + target + " gave a malformed answer (" + why.message() +
                  "); is the API URL right? GHES uses https://HOST/api/v3");
}

template <typename T, typename Parse>
Result<T> ParseAnswer(const std::string& method, const std::string& target,
                      const http::HttpResponse& response, Parse parse) {
  Result<T> out = ParseObjectBody<T>(response.body, "the answer", parse);
  if (!out.ok()) return Malformed(method, target, out.status());
  return out;
}

}  // namespace

Result<std::unique_ptr<GitHubClient>> GitHubClient::Create(http::HttpClient& http,
                                                           const Clock& clock, GitHubAuth auth,
                                                           GitHubClientOptions options,
                                                           const Logger* logger) {
  MVR_ASSIGN_OR_RETURN(std::string base,
                       NormalizeBaseUrl(options.rest.base_url, options.rest.allow_plain_http));
  MVR_RETURN_IF_ERROR(auth.Validate());
  if (options.per_page < 1 || options.per_page > 100) {
    return InvalidArgument("per_page must be 1 to 100 (GitHub's maximum is 100)");
  }
  if (options.max_pages < 1) return InvalidArgument("max_pages must be at least 1");
  if (options.rest.timeout.count() <= 0) return InvalidArgument("the timeout must be positive");
  if (auth.app && (options.random == nullptr || options.sleeper == nullptr)) {
    return InvalidArgument(
        "GitHub App auth needs the seam's random (options.random: each JWT's jti) and sleeper "
        "(options.sleeper: token request retries)");
  }
  return std::unique_ptr<GitHubClient>(
      new GitHubClient(http, clock, std::move(base), std::move(auth), options, logger));
}

GitHubClient::GitHubClient(http::HttpClient& http, const Clock& clock, std::string base_url,
                           GitHubAuth auth, GitHubClientOptions options, const Logger* logger)
    : rest_(http, clock, std::move(base_url), options.rest),
      auth_(std::move(auth), logger,
            AuthSeam{options.random, options.sleeper, options.single_flight_tokens}),
      options_(std::move(options)),
      health_(options_.auth_backoff, options_.jitter),
      budget_(options_.rate_budget),
      logger_(logger) {}

Result<http::HttpResponse> GitHubClient::Call(const std::string& method, const std::string& target,
                                              const std::string& body) {
  MVR_ASSIGN_OR_RETURN(const bool probe, health_.Admit(rest_.clock().Now()));
  if (probe) {
    // This call is the probe: the secret may have been fixed since the last one.
    Result<bool> reloaded = auth_.Reload();
    if (logger_ != nullptr) {
      logger_->Debug("github credentials re-read",
                     {{"changed", reloaded.ok() && *reloaded},
                      {"error", reloaded.ok() ? "" : reloaded.status().message()}});
    }
  }
  const RateCall rate_call = RateCall::Of(method, target);
  if (Status admitted = budget_.Admit(rest_.clock().Now(), rate_call); !admitted.ok()) {
    // Nothing was sent: a probe that did not go out learnt nothing.
    health_.OnInconclusive(rest_.clock().Now(), probe);
    return admitted;
  }
  Result<http::HttpResponse> response = Exchange(method, target, body);
  budget_.OnAnswer(rest_.clock().Now(), rate_call, response.status(), rest_.last_rate_limit());
  Observe(response.status(), probe);
  return response;
}

std::optional<RateBudgetSnapshot> GitHubClient::RateBudgetNow() const {
  return budget_.Snapshot(rest_.clock().Now());
}

void GitHubClient::Observe(const Status& outcome, bool probe) {
  const TimePoint now = rest_.clock().Now();
  AuthHealth::Change change = AuthHealth::Change::kNone;
  if (outcome.code() == Code::kUnauthorized) {
    change = health_.OnRefused(now);
    if (change == AuthHealth::Change::kFailing && logger_ != nullptr) {
      logger_->Warn("github auth failing", {{"since", FormatRfc3339(now)},
                                            {"error", outcome.message()},
                                            {"next_try_in_ms", health_.DelayAfter(1).count()}});
    }
  } else if (outcome.code() == Code::kTransient) {
    health_.OnInconclusive(now, probe);
  } else {
    // 2xx, 404, 409, 422, a rate limit: GitHub knew who was asking.
    const std::optional<TimePoint> since = health_.failing_since();
    change = health_.OnAccepted(now, probe);
    if (change == AuthHealth::Change::kRecovered && logger_ != nullptr && since) {
      logger_->Info(
          "github auth recovered",
          {{"failing_since", FormatRfc3339(*since)},
           {"failed_for_ms", std::chrono::duration_cast<Duration>(now - *since).count()}});
    }
  }
}

Result<http::HttpResponse> GitHubClient::Exchange(const std::string& method,
                                                  const std::string& target,
                                                  const std::string& body) {
  MVR_ASSIGN_OR_RETURN(Secret token, auth_.BearerToken(rest_));
  Result<http::HttpResponse> response = rest_.Send(method, target, body, &token);
  if (!response.ok() && response.status().code() == Code::kUnauthorized &&
      response.status().error_type() == "BadCredentials" && auth_.is_app()) {
    auth_.Invalidate();
  }
  if (!response.ok() && logger_ != nullptr) {
    logger_->Debug("github call failed", {{"method", method},
                                          {"code", CodeName(response.status().code())},
                                          {"error", response.status().message()}});
  }
  return response;
}

Status GitHubClient::WalkPages(
    const std::string& target,
    const std::function<Status(const http::HttpResponse&, const std::string&)>& read) {
  std::optional<std::string> next = target;
  for (int page = 0; next; ++page) {
    if (page == options_.max_pages) {
      return Internal("GitHub GET " + target + " has more than " +
                      std::to_string(options_.max_pages) + " pages; refusing to follow further");
    }
    std::string current = *next;
    MVR_ASSIGN_OR_RETURN(http::HttpResponse response, Call("GET", current));
    MVR_RETURN_IF_ERROR(read(response, current));
    next.reset();
    if (std::optional<std::string> link = response.headers.Get("Link")) {
      next = NextPageLink(*link);
    }
  }
  return Status::Ok();
}

template <typename T, typename Parse>
Result<std::vector<T>> GitHubClient::ListAll(const std::string& target, const char* key,
                                             Parse parse) {
  std::vector<T> out;
  MVR_RETURN_IF_ERROR(
      WalkPages(target, [&](const http::HttpResponse& response, const std::string& current) {
        auto parse_page = [&](const JsonFields& o) -> Result<bool> {
          MVR_ASSIGN_OR_RETURN(const nlohmann::json* items, o.Array(key));
          for (size_t i = 0; i < items->size(); ++i) {
            std::string where = std::string(key) + "[" + std::to_string(i) + "]";
            MVR_ASSIGN_OR_RETURN(JsonFields item, JsonFields::Of((*items)[i], where));
            MVR_ASSIGN_OR_RETURN(T value, parse(item));
            out.push_back(std::move(value));
          }
          return true;
        };
        return ParseAnswer<bool>("GET", current, response, parse_page).status();
      }));
  return out;
}

Result<JitConfig> GitHubClient::GenerateJitConfig(const RunnerScope& scope,
                                                  const JitConfigRequest& request) {
  MVR_RETURN_IF_ERROR(CheckScope(scope));
  if (request.scale_set_id != 0) {
    // A REST JIT runner belongs to no set: GitHub would never give it the set's job.
    return InvalidArgument("the runner of scale set " + std::to_string(request.scale_set_id) +
                           " must come from the set's generatejitconfig, not the REST endpoint");
  }
  MVR_ASSIGN_OR_RETURN(std::string body, JitConfigRequestBody(request));
  std::string target = scope.RunnersPath() + "/generate-jitconfig";
  MVR_ASSIGN_OR_RETURN(http::HttpResponse response, Call("POST", target, body));
  // The JIT config is a secret: keep it out of any message, even a malformed-answer one.
  MVR_ASSIGN_OR_RETURN(JitConfig config,
                       ParseAnswer<JitConfig>("POST", target, response, ParseJitConfig));
  if (logger_ != nullptr) {
    logger_->Info("github jit runner registered", {{"scope", scope.ToString()},
                                                   {"runner_id", config.runner.id},
                                                   {"runner_name", config.runner.name}});
  }
  return config;
}

Result<std::vector<Runner>> GitHubClient::ListRunners(const RunnerScope& scope,
                                                      const ListRunnersOptions& options) {
  MVR_RETURN_IF_ERROR(CheckScope(scope));
  std::vector<std::pair<std::string, std::string>> query;
  if (!options.name.empty()) query.emplace_back("name", options.name);
  query.emplace_back("per_page", std::to_string(options_.per_page));
  return ListAll<Runner>(scope.RunnersPath() + "?" + http::BuildQuery(query), "runners",
                         ParseRunner);
}

Result<Runner> GitHubClient::GetRunner(const RunnerScope& scope, int64_t runner_id) {
  MVR_RETURN_IF_ERROR(CheckScope(scope));
  MVR_RETURN_IF_ERROR(CheckId(runner_id, "runner id"));
  std::string target = scope.RunnersPath() + "/" + std::to_string(runner_id);
  MVR_ASSIGN_OR_RETURN(http::HttpResponse response, Call("GET", target));
  return ParseAnswer<Runner>("GET", target, response, ParseRunner);
}

Status GitHubClient::DeleteRunner(const RunnerScope& scope, int64_t runner_id) {
  MVR_RETURN_IF_ERROR(CheckScope(scope));
  MVR_RETURN_IF_ERROR(CheckId(runner_id, "runner id"));
  Result<http::HttpResponse> response =
      Call("DELETE", scope.RunnersPath() + "/" + std::to_string(runner_id));
  if (response.ok()) return Status::Ok();
  // GitHub answers 422 for a runner that is running a job: a state conflict, not bad input.
  if (response.status().error_type() == "ValidationFailed") {
    return Conflict(response.status().message() + " (the runner is busy)")
        .WithErrorType("RunnerBusy");
  }
  return response.status();
}

Result<Job> GitHubClient::GetJob(const RepositoryRef& repo, int64_t job_id) {
  MVR_RETURN_IF_ERROR(CheckRepo(repo));
  MVR_RETURN_IF_ERROR(CheckId(job_id, "job id"));
  std::string target = RepoPath(repo) + "/actions/jobs/" + std::to_string(job_id);
  MVR_ASSIGN_OR_RETURN(http::HttpResponse response, Call("GET", target));
  return ParseAnswer<Job>("GET", target, response, ParseJob);
}

Status GitHubClient::RerunJob(const RepositoryRef& repo, int64_t job_id) {
  MVR_RETURN_IF_ERROR(CheckRepo(repo));
  MVR_RETURN_IF_ERROR(CheckId(job_id, "job id"));
  const std::string target = RepoPath(repo) + "/actions/jobs/" + std::to_string(job_id) + "/rerun";
  return Call("POST", target, "{}").status();
}

Result<RunnerRelease> GitHubClient::GetLatestRunnerRelease() {
  const std::string target = "/repos/actions/runner/releases/latest";
  MVR_ASSIGN_OR_RETURN(http::HttpResponse response, Call("GET", target));
  return ParseAnswer<RunnerRelease>(
      "GET", target, response, [](const JsonFields& o) -> Result<RunnerRelease> {
        RunnerRelease r;
        MVR_ASSIGN_OR_RETURN(std::string tag, o.String("tag_name"));
        r.version = !tag.empty() && tag[0] == 'v' ? tag.substr(1) : tag;
        MVR_ASSIGN_OR_RETURN(r.published_at, o.Time("published_at"));
        return r;
      });
}

Result<std::vector<Job>> GitHubClient::ListQueuedJobs(const RepositoryRef& repo,
                                                      const QueuedRunsFilter& filter) {
  return ListJobsOfRuns(repo, "queued", JobStatus::kQueued, filter);
}

Result<std::vector<Job>> GitHubClient::ListInProgressJobs(const RepositoryRef& repo) {
  return ListJobsOfRuns(repo, "in_progress", JobStatus::kInProgress, QueuedRunsFilter{});
}

namespace {

// The runs whose jobs are read: the longest waiting first (a run that gives no time first of
// all), at most `filter.max_runs` of them.
std::vector<int64_t> RunsToRead(std::vector<RunSeen> runs, const QueuedRunsFilter& filter) {
  std::stable_sort(runs.begin(), runs.end(), [](const RunSeen& a, const RunSeen& b) {
    return a.started.value_or(TimePoint{}) < b.started.value_or(TimePoint{});
  });
  if (filter.runs_unread) *filter.runs_unread = 0;
  if (filter.max_runs > 0 && runs.size() > static_cast<size_t>(filter.max_runs)) {
    if (filter.runs_unread) *filter.runs_unread = static_cast<int>(runs.size()) - filter.max_runs;
    runs.resize(static_cast<size_t>(filter.max_runs));
  }
  std::vector<int64_t> ids;
  ids.reserve(runs.size());
  for (const RunSeen& r : runs) ids.push_back(r.id);
  return ids;
}

}  // namespace

Result<std::vector<Job>> GitHubClient::ListJobsOfRuns(const RepositoryRef& repo,
                                                      const std::string& run_status,
                                                      JobStatus job_status,
                                                      const QueuedRunsFilter& filter) {
  MVR_RETURN_IF_ERROR(CheckRepo(repo));
  std::string per_page = std::to_string(options_.per_page);
  // Only each run's id and start are kept: ReadRunsPage skips the rest of a page (runs_page.h).
  std::vector<RunSeen> runs;
  MVR_RETURN_IF_ERROR(
      WalkPages(RepoPath(repo) + "/actions/runs?status=" + run_status + "&per_page=" + per_page,
                [&](const http::HttpResponse& response, const std::string& current) -> Status {
                  Result<std::vector<RunSeen>> page = ReadRunsPage(response.body);
                  if (!page.ok()) return Malformed("GET", current, page.status());
                  runs.insert(runs.end(), page->begin(), page->end());
                  return Status::Ok();
                }));
  std::vector<Job> kept;
  for (int64_t run_id : RunsToRead(std::move(runs), filter)) {
    Result<std::vector<Job>> jobs = ListAll<Job>(
        RepoPath(repo) + "/actions/runs/" + std::to_string(run_id) + "/jobs?per_page=" + per_page,
        "jobs", ParseJob);
    // A run deleted between the two listings has no jobs left to run.
    if (!jobs.ok() && jobs.status().code() == Code::kNotFound) continue;
    if (!jobs.ok()) return jobs.status();
    for (Job& job : *jobs) {
      if (job.status == job_status) kept.push_back(std::move(job));
    }
  }
  return kept;
}

Result<RegistrationToken> GitHubClient::CreateRegistrationToken(const RunnerScope& scope) {
  MVR_RETURN_IF_ERROR(CheckScope(scope));
  std::string target = scope.RunnersPath() + "/registration-token";
  MVR_ASSIGN_OR_RETURN(http::HttpResponse response, Call("POST", target));
  return ParseAnswer<RegistrationToken>("POST", target, response, ParseTokenAnswer);
}

}  // namespace mvr::github
