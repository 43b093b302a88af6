#include "emulate/github/scaleset/scaleset_api.h"

#include "base/encoding.h"
#include "base/json_text.h"
#include "emulate/github/model_json.h"
#include "emulate/github/rest_api.h"
#include "emulate/github/scaleset/scaleset_json.h"

namespace mvr::emulate::github {

using http::HttpResponse;
using http::PathParams;
using http::ServerRequest;
using nlohmann::json;

namespace {

const char* const kSets = "/_services/pipelines/_apis/runtime/runnerscalesets";
const char* const kQueue = "/_services/broker/scalesets/{id}/messages";

HttpResponse ActionsNoContent() {
  HttpResponse out;
  out.status = 204;
  return out;
}

Secret BearerToken(const ServerRequest& req) {
  auto v = BearerValue(req.headers.Get("Authorization"));
  return v ? Secret(*v) : Secret();
}

HttpResponse BadRequest(const std::string& message) {
  return ActionsErrorResponse(InvalidArgument(message));
}

// "https://github.com/octo/app" (any host) → the scope its path names.
Result<Scope> ScopeOfConfigUrl(const std::string& url) {
  size_t start = url.find("://");
  start = url.find('/', start == std::string::npos ? 0 : start + 3);
  std::vector<std::string> parts;
  if (start != std::string::npos) parts = http::SplitPath(url.substr(start));
  if (parts.size() == 2 && parts[0] == "enterprises") return Scope::Enterprise(parts[1]);
  if (parts.size() == 1) return Scope::Org(parts[0]);
  if (parts.size() == 2) return Scope::Repo(parts[0], parts[1]);
  return InvalidArgument("url \"" + url +
                         "\" names no repository, organization or enterprise (expected "
                         "https://github.com/OWNER/REPO, /ORG or /enterprises/SLUG)");
}

Result<int64_t> IdParam(const PathParams& p, const char* name) {
  auto id = ParseId(p.at(name));
  if (!id) return NotFound(std::string(name) + " \"" + p.at(name) + "\" was not found");
  return *id;
}

}  // namespace

HttpResponse ActionsErrorResponse(const Status& status) {
  int code = 500;
  std::string type = status.error_type();
  switch (status.code()) {
    case Code::kNotFound:
      code = 404;
      if (type.empty()) type = "GitHub.DistributedTask.WebApi.RunnerScaleSetNotFoundException";
      break;
    case Code::kConflict:
      code = 409;
      if (type.empty()) type = "GitHub.DistributedTask.WebApi.RunnerScaleSetExistsException";
      break;
    case Code::kInvalidArgument:
      code = 400;
      if (type.empty()) type = "System.ArgumentException";
      break;
    case Code::kUnauthorized:
      code = 401;
      if (type.empty()) type = "GitHub.Services.Common.VssUnauthorizedException";
      break;
    default:
      if (type.empty()) type = "GitHub.Services.WebApi.VssServiceException";
      break;
  }
  return JsonResponse(code, ActionsErrorJson(type, status.message()));
}

std::shared_ptr<void> AddScaleSetRoutes(http::Router& router, GithubModel& model,
                                        Authenticator& auth, const Logger& logger) {
  auto api = std::make_shared<ScaleSetApi>(model, auth, logger);
  api->AddRoutes(router);
  return api;
}

void ScaleSetApi::AddRoutes(http::Router& router) {
  router.Add("POST", "/actions/runner-registration",
             [this](const ServerRequest& r, const PathParams&) { return Exchange(r); });
  AddScaleSetRoutes(router);
  AddRunnerRoutes(router);
  AddSessionRoutes(router);
  AddQueueRoutes(router);
  AddControlRoutes(router);
}

// Authorization: RemoteAuth <registration token>; body {"url": config URL, "runner_event":
// "register"} → the Actions service URL and an admin token for the URL's scope.
HttpResponse ScaleSetApi::Exchange(const ServerRequest& req) {
  const std::string auth = req.headers.GetOr("Authorization", "");
  if (auth.rfind("RemoteAuth ", 0) != 0) {
    return JsonResponse(401, ErrorJson("Authorization must be RemoteAuth <registration token>"));
  }
  json body = json::parse(req.body, nullptr, false);
  if (!body.is_object() || !body.contains("url") || !body["url"].is_string()) {
    return JsonResponse(400, ErrorJson("the body must be {\"url\": <the GitHub config URL>, "
                                       "\"runner_event\": \"register\"}"));
  }
  if (!body.contains("runner_event") || body["runner_event"] != "register") {
    return JsonResponse(400, ErrorJson("runner_event must be \"register\""));
  }
  Result<Scope> scope = ScopeOfConfigUrl(body["url"].get<std::string>());
  if (!scope.ok()) return JsonResponse(400, ErrorJson(scope.status().message()));
  Status ok = auth_.CheckRegistrationToken(auth.substr(11), scope->Name());
  if (!ok.ok()) return JsonResponse(401, ErrorJson(ok.message()));
  Result<ActionsAdminConnection> conn = model_.IssueAdminConnection(*scope);
  if (!conn.ok()) return ErrorResponse(conn.status());
  logger_.Info("scale set admin token issued", {{"scope", scope->Name()}});
  return JsonResponse(
      200, json{{"url", conn->actions_service_url}, {"token", conn->admin_token.Reveal()}});
}

http::RouteHandler ScaleSetApi::Admin(Inner inner) {
  return [this, inner = std::move(inner)](const ServerRequest& req, const PathParams& p) {
    Result<Scope> scope = model_.AdminScope(BearerToken(req));
    if (!scope.ok()) return ActionsErrorResponse(scope.status());
    // The client always sends it; the stricter reading refuses a request without it.
    if (!req.Param("api-version")) {
      return BadRequest("the api-version query parameter is required (6.0-preview)");
    }
    return inner(*scope, req, p);
  };
}

void ScaleSetApi::AddScaleSetRoutes(http::Router& router) {
  const std::string sets = kSets;
  router.Add(
      "GET", sets, Admin([this](const Scope& scope, const ServerRequest& r, const PathParams&) {
        std::optional<int64_t> group;
        if (auto g = r.Param("runnerGroupId")) {
          group = ParseId(*g);
          if (!group) return BadRequest("runnerGroupId must be a whole number");
        }
        json value = json::array();
        for (const ScaleSet& s : model_.ListScaleSets(scope, group, r.Param("name").value_or(""))) {
          value.push_back(ScaleSetJson(s, model_.options().base_url));
        }
        return JsonResponse(200, json{{"count", value.size()}, {"value", value}});
      }));
  router.Add("POST", sets,
             Admin([this](const Scope& scope, const ServerRequest& r, const PathParams&) {
               Result<ScaleSetSpec> spec = ParseScaleSetSpec(r.body);
               if (!spec.ok()) return ActionsErrorResponse(spec.status());
               Result<ScaleSet> s = model_.CreateScaleSet(scope, *spec);
               if (!s.ok()) return ActionsErrorResponse(s.status());
               logger_.Info("runner scale set created", {{"id", s->id}, {"name", s->name}});
               return JsonResponse(200, ScaleSetJson(*s, model_.options().base_url));
             }));
  router.Add("GET", sets + "/{id}",
             Admin([this](const Scope& scope, const ServerRequest&, const PathParams& p) {
               Result<int64_t> id = IdParam(p, "id");
               if (!id.ok()) return ActionsErrorResponse(id.status());
               Result<ScaleSet> s = model_.GetScaleSet(scope, *id);
               if (!s.ok()) return ActionsErrorResponse(s.status());
               return JsonResponse(200, ScaleSetJson(*s, model_.options().base_url));
             }));
  router.Add("PATCH", sets + "/{id}",
             Admin([this](const Scope& scope, const ServerRequest& r, const PathParams& p) {
               Result<int64_t> id = IdParam(p, "id");
               if (!id.ok()) return ActionsErrorResponse(id.status());
               Result<ScaleSetSpec> spec = ParseScaleSetSpec(r.body);
               if (!spec.ok()) return ActionsErrorResponse(spec.status());
               Result<ScaleSet> s = model_.UpdateScaleSet(scope, *id, *spec);
               if (!s.ok()) return ActionsErrorResponse(s.status());
               return JsonResponse(200, ScaleSetJson(*s, model_.options().base_url));
             }));
  router.Add("DELETE", sets + "/{id}",
             Admin([this](const Scope& scope, const ServerRequest&, const PathParams& p) {
               Result<int64_t> id = IdParam(p, "id");
               if (!id.ok()) return ActionsErrorResponse(id.status());
               Status s = model_.DeleteScaleSet(scope, *id);
               return s.ok() ? ActionsNoContent() : ActionsErrorResponse(s);
             }));
}

// JIT runners of a set, and the runner groups (only Default, id 1).
void ScaleSetApi::AddRunnerRoutes(http::Router& router) {
  const std::string sets = kSets;
  router.Add(
      "POST", sets + "/{id}/generatejitconfig",
      Admin([this](const Scope& scope, const ServerRequest& r, const PathParams& p) {
        Result<int64_t> id = IdParam(p, "id");
        if (!id.ok()) return ActionsErrorResponse(id.status());
        json body = json::parse(r.body, nullptr, false);
        if (!body.is_object() || !body.contains("name") || !body["name"].is_string()) {
          return BadRequest("the body must be {\"name\": ..., \"workFolder\": ...}");
        }
        const std::string folder = body.value("workFolder", std::string("_work"));
        auto reg =
            model_.GenerateScaleSetJitConfig(scope, *id, body["name"].get<std::string>(), folder);
        if (!reg.ok()) return ActionsErrorResponse(reg.status());
        logger_.Info("scale set runner registered",
                     {{"runner_id", reg->runner.id}, {"scale_set_id", *id}});
        return JsonResponse(
            200,
            json{{"runner",
                  {{"id", reg->runner.id}, {"name", reg->runner.name}, {"runnerScaleSetId", *id}}},
                 {"encodedJITConfig", reg->encoded_jit_config.Reveal()}});
      }));
  router.Add("GET", "/_services/pipelines/_apis/runtime/runnergroups",
             Admin([](const Scope&, const ServerRequest& r, const PathParams&) {
               json value = json::array();
               const std::string want = AsciiLower(r.Param("groupName").value_or("default"));
               if (want == "default") {
                 value.push_back(
                     json{{"id", 1}, {"name", "Default"}, {"size", 0}, {"isDefaultGroup", true}});
               }
               return JsonResponse(200, json{{"count", value.size()}, {"value", value}});
             }));
}

void ScaleSetApi::AddSessionRoutes(http::Router& router) {
  const std::string sessions = std::string(kSets) + "/{id}/sessions";
  router.Add("POST", sessions,
             Admin([this](const Scope& scope, const ServerRequest& r, const PathParams& p) {
               Result<int64_t> id = IdParam(p, "id");
               if (!id.ok()) return ActionsErrorResponse(id.status());
               json body = json::parse(r.body, nullptr, false);
               const std::string owner =
                   body.is_object() ? body.value("ownerName", std::string()) : "";
               auto session = model_.CreateScaleSetSession(scope, *id, owner);
               if (!session.ok()) return ActionsErrorResponse(session.status());
               logger_.Info("scale set session created", {{"scale_set_id", *id}});
               return JsonResponse(200, ScaleSetSessionJson(*session, model_.options().base_url));
             }));
  router.Add("PATCH", sessions + "/{session}",
             Admin([this](const Scope& scope, const ServerRequest&, const PathParams& p) {
               Result<int64_t> id = IdParam(p, "id");
               if (!id.ok()) return ActionsErrorResponse(id.status());
               auto session = model_.RefreshScaleSetSession(scope, *id, p.at("session"));
               if (!session.ok()) return ActionsErrorResponse(session.status());
               return JsonResponse(200, ScaleSetSessionJson(*session, model_.options().base_url));
             }));
  router.Add("DELETE", sessions + "/{session}",
             Admin([this](const Scope& scope, const ServerRequest&, const PathParams& p) {
               Result<int64_t> id = IdParam(p, "id");
               if (!id.ok()) return ActionsErrorResponse(id.status());
               Status s = model_.DeleteScaleSetSession(scope, *id, p.at("session"));
               return s.ok() ? ActionsNoContent() : ActionsErrorResponse(s);
             }));
}

void ScaleSetApi::AddQueueRoutes(http::Router& router) {
  router.Add("GET", kQueue,
             [this](const ServerRequest& r, const PathParams& p) { return GetMessage(r, p); });
  router.Add("DELETE", std::string(kQueue) + "/{message}",
             [this](const ServerRequest& r, const PathParams& p) {
               Result<int64_t> id = IdParam(p, "id");
               Result<int64_t> message = IdParam(p, "message");
               if (!id.ok()) return ActionsErrorResponse(id.status());
               if (!message.ok()) return ActionsErrorResponse(message.status());
               Status s = model_.DeleteScaleSetMessage(*id, BearerToken(r), *message);
               return s.ok() ? ActionsNoContent() : ActionsErrorResponse(s);
             });
  router.Add("POST", std::string(kSets) + "/{id}/acquirejobs",
             [this](const ServerRequest& r, const PathParams& p) { return Acquire(r, p); });
}

// The long poll: 200 with a message, 202 when none came within the wait, 401 to refresh.
HttpResponse ScaleSetApi::GetMessage(const ServerRequest& req, const PathParams& p) {
  Result<int64_t> id = IdParam(p, "id");
  if (!id.ok()) return ActionsErrorResponse(id.status());
  auto capacity_text = req.headers.Get("X-ScaleSetMaxCapacity");
  auto capacity = capacity_text ? ParseId(*capacity_text) : std::nullopt;
  if (!capacity || *capacity > 100'000) {
    return BadRequest(
        "the X-ScaleSetMaxCapacity header must say how many runners the set can "
        "take (a whole number, 0 to 100000)");
  }
  int64_t last = 0;
  if (auto l = req.Param("lastMessageId")) {
    auto n = ParseId(*l);
    if (!n) return BadRequest("lastMessageId must be a whole number");
    last = *n;
  }
  auto got = model_.WaitScaleSetMessage(*id, BearerToken(req), last, static_cast<int>(*capacity));
  if (!got.ok()) return ActionsErrorResponse(got.status());
  if (!got->has_value()) {
    HttpResponse out;
    out.status = 202;
    return out;
  }
  return JsonResponse(200, ScaleSetMessageJson(**got, *id, model_.options().base_url));
}

// Body: a JSON array of runnerRequestIds → {"count", "value"}: those the set now holds.
HttpResponse ScaleSetApi::Acquire(const ServerRequest& req, const PathParams& p) {
  Result<int64_t> id = IdParam(p, "id");
  if (!id.ok()) return ActionsErrorResponse(id.status());
  json body = json::parse(req.body, nullptr, false);
  if (!body.is_array()) return BadRequest("the body must be a JSON array of runnerRequestIds");
  std::vector<int64_t> ids;
  for (const auto& v : body) {
    if (!v.is_number_integer()) return BadRequest("each runnerRequestId must be a whole number");
    ids.push_back(v.get<int64_t>());
  }
  auto acquired = model_.AcquireScaleSetJobs(*id, BearerToken(req), ids);
  if (!acquired.ok()) return ActionsErrorResponse(acquired.status());
  return JsonResponse(200, json{{"count", acquired->size()}, {"value", *acquired}});
}

}  // namespace mvr::emulate::github
