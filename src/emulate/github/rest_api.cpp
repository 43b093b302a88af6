#include "emulate/github/rest_api.h"

#include <algorithm>
#include <functional>
#include <set>

#include "base/json_text.h"
#include "base/numbers.h"
#include "base/time_format.h"
#include "emulate/github/model_json.h"

namespace mvr::emulate::github {

using http::HttpResponse;
using http::PathParams;
using http::ServerRequest;
using nlohmann::json;

namespace {

int IntParam(const ServerRequest& req, const char* name, int fallback, int lo, int hi) {
  auto v = req.Param(name);
  if (!v) return fallback;
  auto n = ParseId(*v);
  if (!n) return fallback;
  return static_cast<int>(std::clamp<int64_t>(*n, lo, hi));
}

Scope RepoScope(const PathParams& p) { return Scope::Repo(p.at("owner"), p.at("repo")); }

// One page of a list GitHub pages by `per_page` (default 30, at most 100) and `page`: the page's
// items under `key`, `total_count`, and the Link header GitHub sends (prev, next, last, first),
// each link keeping the request's other query parameters.
// The Link header of page `page` of `total` items, `per_page` a page.
void AddPageLinks(const ServerRequest& req, const std::string& base_url, int total, int per_page,
                  int page, HttpResponse& out) {
  const int last = std::max(1, (total + per_page - 1) / per_page);
  auto link = [&](int n, const char* rel) {
    std::vector<std::pair<std::string, std::string>> q;
    for (const auto& [name, value] : req.params) {
      if (name != "per_page" && name != "page") q.emplace_back(name, value);
    }
    q.emplace_back("per_page", std::to_string(per_page));
    q.emplace_back("page", std::to_string(n));
    return "<" + base_url + req.path + "?" + http::BuildQuery(q) + ">; rel=\"" + rel + "\"";
  };
  std::vector<std::string> links;
  if (page > 1) links.push_back(link(page - 1, "prev"));
  if (page < last) links.push_back(link(page + 1, "next"));
  if (page < last) links.push_back(link(last, "last"));
  if (page > 1) links.push_back(link(1, "first"));
  if (!links.empty()) {
    std::string header;
    for (const auto& l : links) header += (header.empty() ? "" : ", ") + l;
    out.headers.Set("Link", header);
  }
}

HttpResponse PagedList(const ServerRequest& req, const std::string& base_url, const char* key,
                       int total, const std::function<json(int)>& item) {
  const int per_page = IntParam(req, "per_page", 30, 1, 100);
  const int page = IntParam(req, "page", 1, 1, 1'000'000);
  json list = json::array();
  for (int i = (page - 1) * per_page; i < std::min(total, page * per_page); ++i) {
    list.push_back(item(i));
  }
  json j;
  j["total_count"] = total;
  j[key] = std::move(list);
  HttpResponse out = JsonResponse(200, j);
  AddPageLinks(req, base_url, total, per_page, page, out);
  return out;
}

// PagedList with each item's JSON text made by `item_text`: the same bytes as PagedList's
// (nlohmann orders an object's keys, and "total_count" sorts before every `key` used here).
HttpResponse PagedTextList(const ServerRequest& req, const std::string& base_url, const char* key,
                           int total, const std::function<std::string(int)>& item_text) {
  const int per_page = IntParam(req, "per_page", 30, 1, 100);
  const int page = IntParam(req, "page", 1, 1, 1'000'000);
  std::string body = "{\"total_count\":" + std::to_string(total) + ",\"" + key + "\":[";
  for (int i = (page - 1) * per_page; i < std::min(total, page * per_page); ++i) {
    if (i != (page - 1) * per_page) body += ',';
    body += item_text(i);
  }
  body += "]}";
  HttpResponse out = HttpResponse::Json(200, std::move(body));
  AddPageLinks(req, base_url, total, per_page, page, out);
  return out;
}

Scope OrgScope(const PathParams& p) { return Scope::Org(p.at("org")); }

// GitHub answers a secondary limit with 403 or 429 and Retry-After; the emulator answers 429 for
// the content-creation, token and per-minute mutation limits and 403 for the concurrency and
// per-endpoint points limits, so clients meet both.
HttpResponse SecondaryLimitResponse(const RateState& rs) {
  const bool forbidden =
      rs.refusal == RateRefusal::kConcurrent || rs.refusal == RateRefusal::kEndpointPoints;
  HttpResponse out = JsonResponse(
      forbidden ? 403 : 429,
      ErrorJson("You have exceeded a secondary rate limit. Please wait a "
                "few minutes before you try again.",
                "/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"));
  out.headers.Set("Retry-After", std::to_string(rs.retry_after_seconds));
  return out;
}

// The request as the rate limits see it: its endpoint is its method and path with each numeric
// segment (a runner, job or run id) made generic, so every GET of a runner is one endpoint.
RateRequest RateRequestOf(const ServerRequest& req, bool mutating) {
  RateRequest r;
  r.method = req.method;
  r.mutating = mutating;
  std::string endpoint = req.method + " ";
  size_t start = 0;
  while (start < req.path.size()) {
    size_t end = req.path.find('/', start + 1);
    if (end == std::string::npos) end = req.path.size();
    std::string segment = req.path.substr(start, end - start);
    const bool numeric =
        segment.size() > 1 && segment.find_first_not_of("0123456789", 1) == std::string::npos;
    endpoint += numeric ? "/{id}" : segment;
    start = end;
  }
  r.endpoint = endpoint;
  auto ends_with = [&](const std::string& tail) {
    return req.path.size() >= tail.size() &&
           req.path.compare(req.path.size() - tail.size(), tail.size(), tail) == 0;
  };
  // Undocumented whether a JIT config (or a registration token) is content: modelled as one.
  r.content_creating = req.method == "POST" &&
                       (ends_with("/generate-jitconfig") || ends_with("/registration-token"));
  r.token_request = req.method == "POST" && req.path.rfind("/app/installations/", 0) == 0 &&
                    ends_with("/access_tokens");
  return r;
}

}  // namespace

HttpResponse JsonResponse(int status, const json& body) {
  // Never throws: text that is not UTF-8 (a path segment echoed in a message) becomes U+FFFD.
  return HttpResponse::Json(status, JsonText(body));
}

HttpResponse ErrorResponse(const Status& status) {
  int code = 500;
  switch (status.code()) {
    case Code::kNotFound:
      code = 404;
      break;
    case Code::kConflict:
      code = 409;
      break;
    case Code::kInvalidArgument:
      code = 422;
      break;
    case Code::kUnauthorized:
      code = 401;
      break;
    case Code::kThrottled:
      code = 403;
      break;
    case Code::kQuotaExceeded:
      code = 403;
      break;
    default:
      code = 500;
      break;
  }
  return JsonResponse(code, ErrorJson(status.message()));
}

http::RouteHandler RestApi::Guard(AuthKind kind, bool mutating, Inner inner) {
  return [this, kind, mutating, inner = std::move(inner)](const ServerRequest& req,
                                                          const PathParams& params) {
    auto header = req.headers.Get("Authorization");
    Result<Identity> who =
        kind == AuthKind::kApp ? auth_.AuthenticateApp(header) : auth_.AuthenticateToken(header);
    if (!who.ok()) {
      logger_.Info("github request refused", {{"method", req.method},
                                              {"path", req.path},
                                              {"status", 401},
                                              {"reason", who.status().message()}});
      return JsonResponse(401, ErrorJson(who.status().message()));
    }
    RateState rs = rate_.Charge(who->bucket, RateRequestOf(req, mutating));
    HttpResponse out;
    if (rs.primary_exceeded) {
      std::string message = who->kind == "installation"
                                ? "API rate limit exceeded for installation ID " +
                                      std::to_string(who->installation_id) + "."
                                : "API rate limit exceeded for user ID 1.";
      out = JsonResponse(403, ErrorJson(message, "/rest/overview/rate-limits-for-the-rest-api"));
    } else if (rs.secondary_exceeded) {
      out = SecondaryLimitResponse(rs);
      logger_.Info("github request rate-limited", {{"method", req.method},
                                                   {"path", req.path},
                                                   {"status", out.status},
                                                   {"limit", RateRefusalName(rs.refusal)},
                                                   {"retry_after", rs.retry_after_seconds}});
    } else if (kind == AuthKind::kPat && who->kind != "pat") {
      out = JsonResponse(403, ErrorJson("Resource not accessible by integration"));
      rate_.Done(who->bucket);
    } else {
      out = inner(req, params);
      rate_.Done(who->bucket);
    }
    out.headers.Set("X-RateLimit-Limit", std::to_string(rs.limit));
    out.headers.Set("X-RateLimit-Remaining", std::to_string(rs.remaining));
    out.headers.Set("X-RateLimit-Reset", std::to_string(rs.reset_epoch_seconds));
    out.headers.Set("X-RateLimit-Used", std::to_string(rs.used));
    out.headers.Set("X-RateLimit-Resource", "core");
    out.headers.Set("X-GitHub-Api-Version-Selected", "2022-11-28");
    logger_.Debug("github request", {{"method", req.method},
                                     {"path", req.path},
                                     {"status", out.status},
                                     {"caller", who->kind}});
    return out;
  };
}

// Guard's `write` argument, by name.
constexpr bool kRead = false;
constexpr bool kWrite = true;

void RestApi::AddRoutes(http::Router& router) {
  AddRepositoryRoutes(router);
  AddTokenRoutes(router);
  AddRunnerRoutes(router);
  AddJobRoutes(router);
  AddHookRoutes(router);
  AddDispatchRoutes(router);
  // The runner's latest release (the 30-day update rule counts from it): a public repository's,
  // readable with any token, or with none (as GitHub answers anonymous readers of a public
  // repository; `mvr image build` may ask without one).
  auto release = [this](const ServerRequest&, const PathParams&) {
    const RunnerVersionPolicy policy = model_.runner_version_policy();
    if (policy.latest_release.empty()) return ErrorResponse(NotFound("Not Found"));
    // Without a date the release is older than GitHub's 30-day deadline.
    const TimePoint published =
        policy.released_at.value_or(FromUnixSeconds(1577836800));  // 2020-01-01
    return JsonResponse(
        200, RunnerReleaseJson(policy.latest_release, published, model_.options().base_url));
  };
  router.Add("GET", "/repos/actions/runner/releases/latest",
             [guarded = Guard(AuthKind::kToken, kRead, release), release](
                 const ServerRequest& req, const PathParams& params) {
               if (req.headers.Get("Authorization")) return guarded(req, params);
               return release(req, params);
             });
}

// The repository and the App's installation on it.
void RestApi::AddRepositoryRoutes(http::Router& router) {
  router.Add("GET", "/repos/{owner}/{repo}",
             Guard(AuthKind::kToken, kRead, [this](const ServerRequest&, const PathParams& p) {
               auto repo = model_.GetRepository(p.at("owner"), p.at("repo"));
               if (!repo.ok()) return ErrorResponse(repo.status());
               return JsonResponse(200, RepositoryJson(*repo, model_.options().base_url));
             }));
  router.Add("GET", "/repos/{owner}/{repo}/installation",
             Guard(AuthKind::kApp, kRead, [this](const ServerRequest& r, const PathParams& p) {
               // The calling App's installation (Guard has verified the JWT; this names the App).
               Result<Identity> app = auth_.AuthenticateApp(r.headers.Get("Authorization"));
               if (!app.ok()) return ErrorResponse(app.status());
               auto repo = model_.GetRepository(p.at("owner"), p.at("repo"));
               if (!repo.ok()) return ErrorResponse(repo.status());
               return JsonResponse(200,
                                   InstallationJson(app->installation_id, app->app_id, *repo,
                                                    model_.options().base_url, repo->created_at,
                                                    auth_.installation_permissions()));
             }));
}

// Installation tokens for the App, and the rate limit of the caller's bucket.
void RestApi::AddTokenRoutes(http::Router& router) {
  router.Add("POST", "/app/installations/{id}/access_tokens",
             Guard(AuthKind::kApp, kWrite, [this](const ServerRequest& r, const PathParams& p) {
               Result<Identity> app = auth_.AuthenticateApp(r.headers.Get("Authorization"));
               if (!app.ok()) return ErrorResponse(app.status());
               auto id = ParseId(p.at("id"));
               if (!id) return ErrorResponse(NotFound("Not Found"));
               // Only the App's own installation: another App's is 404, as on GitHub.
               auto token = auth_.CreateInstallationToken(*app, *id);
               if (!token.ok()) return ErrorResponse(token.status());
               json j;
               j["token"] = token->token.Reveal();
               j["expires_at"] = FormatRfc3339(token->expires_at);
               j["permissions"] = InstallationPermissionsJson(auth_.installation_permissions());
               j["repository_selection"] = "all";
               return JsonResponse(201, j);
             }));
  router.Add("GET", "/rate_limit", [this](const ServerRequest& req, const PathParams&) {
    auto who = auth_.AuthenticateToken(req.headers.Get("Authorization"));
    if (!who.ok()) return JsonResponse(401, ErrorJson(who.status().message()));
    RateState rs = rate_.Peek(who->bucket);
    json core;
    core["limit"] = rs.limit;
    core["remaining"] = rs.remaining;
    core["used"] = rs.used;
    core["reset"] = rs.reset_epoch_seconds;
    json j;
    j["resources"]["core"] = core;
    // Search is not served; GitHub's description requires its budget all the same (30 a minute).
    j["resources"]["search"] = {
        {"limit", 30}, {"remaining", 30}, {"used", 0}, {"reset", rs.reset_epoch_seconds}};
    j["rate"] = core;
    return JsonResponse(200, j);
  });
}

// Self-hosted runners of a repository, an organization or an enterprise (personal access tokens
// only): JIT configs, registration tokens, list, get, delete.
void RestApi::AddRunnerRoutes(http::Router& router) {
  for (const char* prefix : {"/repos/{owner}/{repo}", "/orgs/{org}", "/enterprises/{enterprise}"}) {
    const Scope::Kind kind = prefix[1] == 'r'   ? Scope::Kind::kRepository
                             : prefix[1] == 'o' ? Scope::Kind::kOrganization
                                                : Scope::Kind::kEnterprise;
    auto scope_of = [kind](const PathParams& p) {
      if (kind == Scope::Kind::kEnterprise) return Scope::Enterprise(p.at("enterprise"));
      return kind == Scope::Kind::kOrganization ? OrgScope(p) : RepoScope(p);
    };
    const AuthKind auth = kind == Scope::Kind::kEnterprise ? AuthKind::kPat : AuthKind::kToken;
    const std::string base = std::string(prefix) + "/actions/runners";
    router.Add("POST", base + "/generate-jitconfig",
               Guard(auth, kWrite, [this, scope_of](const ServerRequest& r, const PathParams& p) {
                 return GenerateJit(scope_of(p), r);
               }));
    router.Add("POST", base + "/registration-token",
               Guard(auth, kWrite, [this, scope_of](const ServerRequest&, const PathParams& p) {
                 auto runners = model_.ListRunners(scope_of(p), "");
                 if (!runners.ok()) return ErrorResponse(runners.status());
                 InstallationToken t = auth_.CreateRegistrationToken(scope_of(p).Name());
                 json j;
                 j["token"] = t.token.Reveal();
                 j["expires_at"] = FormatRfc3339(t.expires_at);
                 return JsonResponse(201, j);
               }));
    router.Add("GET", base,
               Guard(auth, kRead, [this, scope_of](const ServerRequest& r, const PathParams& p) {
                 return ListRunners(scope_of(p), r);
               }));
    router.Add("GET", base + "/{id}",
               Guard(auth, kRead, [this, scope_of](const ServerRequest&, const PathParams& p) {
                 return GetRunner(scope_of(p), p.at("id"));
               }));
    router.Add("DELETE", base + "/{id}",
               Guard(auth, kWrite, [this, scope_of](const ServerRequest&, const PathParams& p) {
                 return DeleteRunner(scope_of(p), p.at("id"));
               }));
  }
}

// Workflow jobs and runs.
void RestApi::AddJobRoutes(http::Router& router) {
  router.Add("GET", "/repos/{owner}/{repo}/actions/jobs/{job_id}",
             Guard(AuthKind::kToken, kRead, [this](const ServerRequest&, const PathParams& p) {
               auto id = ParseId(p.at("job_id"));
               if (!id) return ErrorResponse(NotFound("Not Found"));
               auto job = model_.GetJob(p.at("owner"), p.at("repo"), *id);
               if (!job.ok()) return ErrorResponse(job.status());
               return JsonResponse(200, JobJson(*job, model_.options().base_url));
             }));
  // 201 with an empty object; GitHub documents 403 as the refusal (github_model_expiry.cpp). An
  // installation token needs `actions: write` (the installation's permissions, as
  // --installation-permission shows them): without it GitHub answers 403 "Resource not
  // accessible by integration".
  router.Add(
      "POST", "/repos/{owner}/{repo}/actions/jobs/{job_id}/rerun",
      Guard(AuthKind::kToken, kWrite, [this](const ServerRequest& r, const PathParams& p) {
        auto id = ParseId(p.at("job_id"));
        if (!id) return ErrorResponse(NotFound("Not Found"));
        Result<Identity> who = auth_.AuthenticateToken(r.headers.Get("Authorization"));
        const json granted = InstallationPermissionsJson(auth_.installation_permissions());
        if (who.ok() && who->kind == "installation" && granted.value("actions", "") != "write") {
          return JsonResponse(403, ErrorJson("Resource not accessible by integration"));
        }
        auto rerun = model_.RerunJob(p.at("owner"), p.at("repo"), *id);
        if (rerun.status().code() == Code::kConflict) {
          return JsonResponse(403, ErrorJson(rerun.status().message()));
        }
        if (!rerun.ok()) return ErrorResponse(rerun.status());
        return JsonResponse(201, json::object());
      }));
  router.Add("GET", "/repos/{owner}/{repo}/actions/runs",
             Guard(AuthKind::kToken, kRead,
                   [this](const ServerRequest& r, const PathParams& p) { return ListRuns(p, r); }));
  router.Add("GET", "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs",
             Guard(AuthKind::kToken, kRead, [this](const ServerRequest& r, const PathParams& p) {
               return ListRunJobs(p, r);
             }));
}

HttpResponse RestApi::GenerateJit(const Scope& scope, const ServerRequest& req) {
  json body = json::parse(req.body, nullptr, false);
  if (!body.is_object()) return JsonResponse(400, ErrorJson("Problems parsing JSON"));
  JitRequest jr;
  std::vector<std::string> errors;
  if (!body.contains("name") || !body["name"].is_string()) {
    return ErrorResponse(InvalidArgument("Invalid input: object is missing required key: name."));
  }
  jr.name = body["name"].get<std::string>();
  if (body.contains("runner_group_id")) {
    if (!body["runner_group_id"].is_number_integer()) {
      return ErrorResponse(InvalidArgument("Invalid input: runner_group_id is not an integer."));
    }
    jr.runner_group_id = body["runner_group_id"].get<int64_t>();
  }
  if (!body.contains("labels")) {
    return ErrorResponse(InvalidArgument("Invalid input: object is missing required key: labels."));
  }
  if (!body["labels"].is_array()) {
    return ErrorResponse(InvalidArgument("Invalid input: labels is not an array."));
  }
  for (const auto& l : body["labels"]) {
    if (!l.is_string())
      return ErrorResponse(InvalidArgument("Invalid input: a label is not a string."));
    jr.labels.push_back(l.get<std::string>());
  }
  if (body.contains("work_folder") && body["work_folder"].is_string()) {
    jr.work_folder = body["work_folder"].get<std::string>();
  }
  auto reg = model_.GenerateJitConfig(scope, jr);
  if (!reg.ok()) return ErrorResponse(reg.status());
  json j;
  j["runner"] = RunnerJson(reg->runner);
  j["encoded_jit_config"] = reg->encoded_jit_config.Reveal();
  logger_.Info(
      "jit runner registered",
      {{"runner_id", reg->runner.id}, {"runner_name", reg->runner.name}, {"scope", scope.Name()}});
  return JsonResponse(201, j);
}

HttpResponse RestApi::ListRunners(const Scope& scope, const ServerRequest& req) {
  auto runners = model_.ListRunners(scope, req.Param("name").value_or(""));
  if (!runners.ok()) return ErrorResponse(runners.status());
  return PagedList(req, model_.options().base_url, "runners", static_cast<int>(runners->size()),
                   [&](int i) { return RunnerJson((*runners)[static_cast<size_t>(i)]); });
}

HttpResponse RestApi::GetRunner(const Scope& scope, const std::string& id_text) {
  auto id = ParseId(id_text);
  if (!id) return ErrorResponse(NotFound("Not Found"));
  auto runner = model_.GetRunner(scope, *id);
  if (!runner.ok()) return ErrorResponse(runner.status());
  return JsonResponse(200, RunnerJson(*runner));
}

HttpResponse RestApi::DeleteRunner(const Scope& scope, const std::string& id_text) {
  auto id = ParseId(id_text);
  if (!id) return ErrorResponse(NotFound("Not Found"));
  Status s = model_.DeleteRunner(scope, *id);
  if (!s.ok()) return ErrorResponse(s);
  logger_.Info("runner deleted", {{"runner_id", *id}, {"scope", scope.Name()}});
  HttpResponse out;
  out.status = 204;
  return out;
}

// Newest run first. GitHub documents that a listing filtered by `status` (among others) reaches
// at most 1,000 runs; the emulator holds to that. `status` matches a run's status or, once
// completed, its conclusion.
HttpResponse RestApi::ListRuns(const PathParams& p, const ServerRequest& req) {
  constexpr size_t kFilteredReach = 1000;
  auto repo = model_.GetRepository(p.at("owner"), p.at("repo"));
  if (!repo.ok()) return ErrorResponse(repo.status());
  // Only the page's runs are copied out of the model.
  const int per_page = IntParam(req, "per_page", 30, 1, 100);
  const int page = IntParam(req, "page", 1, 1, 1'000'000);
  const size_t first = static_cast<size_t>(page - 1) * static_cast<size_t>(per_page);
  size_t total = 0;
  auto runs = model_.ListRuns(p.at("owner"), p.at("repo"), req.Param("status"), kFilteredReach,
                              first, static_cast<size_t>(per_page), &total);
  if (!runs.ok()) return ErrorResponse(runs.status());
  return PagedTextList(req, model_.options().base_url, "workflow_runs", static_cast<int>(total),
                       [&](int i) {
                         const std::vector<Job>& jobs = (*runs)[static_cast<size_t>(i) - first];
                         std::vector<const Job*> pointers;
                         for (const Job& job : jobs) pointers.push_back(&job);
                         return run_texts_.Text(pointers, *repo, model_.options().base_url);
                       });
}

HttpResponse RestApi::ListRunJobs(const PathParams& p, const ServerRequest& req) {
  auto run_id = ParseId(p.at("run_id"));
  if (!run_id) return ErrorResponse(NotFound("Not Found"));
  auto jobs = model_.ListJobs(p.at("owner"), p.at("repo"), *run_id, "");
  if (!jobs.ok()) return ErrorResponse(jobs.status());
  if (jobs->empty()) return ErrorResponse(NotFound("Not Found"));
  return PagedList(
      req, model_.options().base_url, "jobs", static_cast<int>(jobs->size()),
      [&](int i) { return JobJson((*jobs)[static_cast<size_t>(i)], model_.options().base_url); });
}

}  // namespace mvr::emulate::github
