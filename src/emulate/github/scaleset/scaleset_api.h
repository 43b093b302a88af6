// ScaleSetApi: the runner scale-set API's HTTP endpoints (issue 54) as thin handlers over
// GithubModel: the registration-token exchange (POST /actions/runner-registration), the Actions
// service's runnerscalesets and runnergroups under /_services/pipelines (admin token), the
// message queue under /_services/broker (message queue token, long poll, X-ScaleSetMaxCapacity),
// and the test API's scale-set faults under /_emulator/scalesets. Errors use the Actions
// service's body {typeName, message}: 400, 401 (refresh), 404, 409 (a second session).
// Thread-safety: handlers run concurrently; all state lives in the model.
#pragma once

#include <memory>

#include "base/logger.h"
#include "emulate/github/app_auth.h"
#include "emulate/github/github_model.h"
#include "http/router.h"

namespace mvr::emulate::github {

class ScaleSetApi {
 public:
  ScaleSetApi(GithubModel& model, Authenticator& auth, const Logger& logger)
      : model_(model), auth_(auth), logger_(logger) {}

  void AddRoutes(http::Router& router);

 private:
  using Inner = std::function<http::HttpResponse(const Scope&, const http::ServerRequest&,
                                                 const http::PathParams&)>;
  // Checks the admin token and the api-version query parameter, then runs `inner` in the
  // token's scope.
  http::RouteHandler Admin(Inner inner);
  void AddScaleSetRoutes(http::Router& router);
  void AddRunnerRoutes(http::Router& router);
  void AddSessionRoutes(http::Router& router);
  void AddQueueRoutes(http::Router& router);
  void AddControlRoutes(http::Router& router);
  http::HttpResponse Exchange(const http::ServerRequest& req);
  http::HttpResponse GetMessage(const http::ServerRequest& req, const http::PathParams& p);
  http::HttpResponse Acquire(const http::ServerRequest& req, const http::PathParams& p);
  http::HttpResponse Faults(const http::ServerRequest& req);

  GithubModel& model_;
  Authenticator& auth_;
  const Logger& logger_;
};

// Adds the scale-set API's routes (a ScaleSetApi, returned as their owner) to `router`: what
// EmulatorOptions::extra_routes wants.
std::shared_ptr<void> AddScaleSetRoutes(http::Router& router, GithubModel& model,
                                        Authenticator& auth, const Logger& logger);

// A model error as the Actions service answers it.
http::HttpResponse ActionsErrorResponse(const Status& status);

}  // namespace mvr::emulate::github
