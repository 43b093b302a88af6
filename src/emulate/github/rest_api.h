// RestApi: the GitHub REST endpoints the emulator serves, as thin handlers over GithubModel.
// Every answer carries GitHub's rate-limit headers; errors use GitHub's body shape and codes
// (401 bad auth, 403 rate limit, 404, 409 duplicate runner, 422 invalid input, 429 secondary
// limit with Retry-After).
// Thread-safety: handlers run concurrently; all state lives in the thread-safe collaborators.
#pragma once

#include <nlohmann/json.hpp>

#include "base/logger.h"
#include "emulate/github/app_auth.h"
#include "emulate/github/github_model.h"
#include "emulate/github/model_json.h"
#include "emulate/github/rate_limiter.h"
#include "http/router.h"

namespace mvr::emulate::github {

// Maps a model error to GitHub's status code and error body.
http::HttpResponse ErrorResponse(const Status& status);
http::HttpResponse JsonResponse(int status, const nlohmann::json& body);

class RestApi {
 public:
  RestApi(GithubModel& model, Authenticator& auth, RateLimiter& rate, const Logger& logger)
      : model_(model), auth_(auth), rate_(rate), logger_(logger) {}

  void AddRoutes(http::Router& router);

 private:
  void AddRepositoryRoutes(http::Router& router);
  void AddTokenRoutes(http::Router& router);
  void AddRunnerRoutes(http::Router& router);
  void AddJobRoutes(http::Router& router);
  // Hook deliveries, their redelivery, and the repositories visible (rest_api_hooks.cpp).
  void AddHookRoutes(http::Router& router);
  // The webhook's settings and the App's installation (rest_api_hooks.cpp).
  void AddHookConfigRoutes(http::Router& router);
  // workflow_dispatch of the workflows GithubModelOptions::dispatch_workflows names
  // (rest_api_dispatch.cpp).
  void AddDispatchRoutes(http::Router& router);
  // kPat: a personal access token only; an installation token is refused with 403, as GitHub
  // refuses it on an enterprise's endpoints.
  enum class AuthKind { kToken, kApp, kPat };
  using Inner =
      std::function<http::HttpResponse(const http::ServerRequest&, const http::PathParams&)>;
  // Authenticates, charges the rate budget, runs `inner`, adds the rate-limit headers.
  http::RouteHandler Guard(AuthKind kind, bool mutating, Inner inner);

  http::HttpResponse GenerateJit(const Scope& scope, const http::ServerRequest& req);
  http::HttpResponse ListRunners(const Scope& scope, const http::ServerRequest& req);
  http::HttpResponse GetRunner(const Scope& scope, const std::string& id);
  http::HttpResponse DeleteRunner(const Scope& scope, const std::string& id);
  http::HttpResponse ListRuns(const http::PathParams& p, const http::ServerRequest& req);
  http::HttpResponse ListRunJobs(const http::PathParams& p, const http::ServerRequest& req);
  http::HttpResponse ListHookDeliveries(const std::optional<HookFilter>& filter,
                                        const http::ServerRequest& req);
  // `org` empty: every repository (an installation's, answered with total_count).
  http::HttpResponse ListRepositories(const http::ServerRequest& req, const std::string& org,
                                      bool installation);

  GithubModel& model_;
  Authenticator& auth_;
  RateLimiter& rate_;
  const Logger& logger_;
  RunTextCache run_texts_;  // ListRuns' items
};

}  // namespace mvr::emulate::github
