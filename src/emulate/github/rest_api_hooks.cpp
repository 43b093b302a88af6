// RestApi: the webhook deliveries GitHub keeps (`GET …/hooks/{hook_id}/deliveries` of a
// repository and an organisation, `GET /app/hook/deliveries` with the App's JWT), their
// redelivery (`POST …/deliveries/{delivery_id}/attempts`), and the repositories an installation or
// organisation can see (`GET /installation/repositories`, `GET /orgs/{org}/repos`). Deliveries are
// paged newest first by an opaque cursor in the Link header, as GitHub documents.
#include <algorithm>

#include "base/numbers.h"
#include "base/time_format.h"
#include "emulate/github/account_json.h"
#include "emulate/github/model_json.h"
#include "emulate/github/rest_api.h"

namespace mvr::emulate::github {

using http::HttpResponse;
using http::PathParams;
using http::ServerRequest;
using nlohmann::json;

namespace {

constexpr char kCursorPrefix[] = "v1_";

int PerPage(const ServerRequest& req) {
  auto v = req.Param("per_page");
  if (!v) return 30;
  auto n = ParseId(*v);
  return n ? static_cast<int>(std::clamp<int64_t>(*n, 1, 100)) : 30;
}

// What GitHub shows of one delivery in a listing ("Simple webhook delivery").
json HookDeliveryJson(const Delivery& d, int64_t installation_id) {
  const bool ok = d.outcome == "delivered";
  json j;
  j["id"] = d.id;
  j["guid"] = d.guid;
  j["delivered_at"] = FormatRfc3339(d.delivered_at.value_or(d.created_at));
  j["redelivery"] = d.redelivery;
  j["duration"] =
      d.delivered_at ? static_cast<double>((*d.delivered_at - d.created_at).count()) / 1000.0 : 0.0;
  // A receiver that could not be reached (or never answered) gets status_code 0.
  j["status"] = ok ? "OK"
                : d.response_status > 0
                    ? "Invalid HTTP Response: " + std::to_string(d.response_status)
                    : std::string("failed to connect");
  j["status_code"] = d.response_status;
  j["event"] = d.event;
  j["action"] = d.action;
  j["installation_id"] = installation_id;
  j["repository_id"] = d.repository_id == 0 ? json(nullptr) : json(d.repository_id);
  j["throttled_at"] = nullptr;
  return j;
}

std::optional<HookFilter> FilterOf(HookFilter::Kind kind, const PathParams& p) {
  HookFilter f;
  f.kind = kind;
  if (kind == HookFilter::Kind::kApp) {
    f.hook_id = GithubModel::kHookId;
    return f;
  }
  auto id = ParseId(p.at("hook_id"));
  if (!id) return std::nullopt;
  f.hook_id = *id;
  f.owner = kind == HookFilter::Kind::kOrganization ? p.at("org") : p.at("owner");
  if (kind == HookFilter::Kind::kRepository) f.repo = p.at("repo");
  return f;
}

}  // namespace

void RestApi::AddHookRoutes(http::Router& router) {
  const std::pair<const char*, HookFilter::Kind> hooks[] = {
      {"/repos/{owner}/{repo}/hooks/{hook_id}", HookFilter::Kind::kRepository},
      {"/orgs/{org}/hooks/{hook_id}", HookFilter::Kind::kOrganization},
      {"/app/hook", HookFilter::Kind::kApp}};
  for (const auto& [prefix, kind] : hooks) {
    const AuthKind auth = kind == HookFilter::Kind::kApp ? AuthKind::kApp : AuthKind::kToken;
    router.Add("GET", std::string(prefix) + "/deliveries",
               Guard(auth, false, [this, kind = kind](const ServerRequest& r, const PathParams& p) {
                 return ListHookDeliveries(FilterOf(kind, p), r);
               }));
    router.Add("POST", std::string(prefix) + "/deliveries/{delivery_id}/attempts",
               Guard(auth, true, [this, kind = kind](const ServerRequest&, const PathParams& p) {
                 std::optional<HookFilter> f = FilterOf(kind, p);
                 auto id = ParseId(p.at("delivery_id"));
                 if (!f || !id) return ErrorResponse(NotFound("Not Found"));
                 Status s = model_.RedeliverAttempt(*f, *id);
                 if (!s.ok()) return ErrorResponse(s);
                 logger_.Info("webhook redelivery requested", {{"delivery_id", *id}});
                 return JsonResponse(202, json::object());
               }));
  }
  AddHookConfigRoutes(router);
  router.Add("GET", "/installation/repositories",
             Guard(AuthKind::kToken, false, [this](const ServerRequest& r, const PathParams&) {
               // Only an installation token names an installation (GitHub: 403 for a PAT).
               auto who = auth_.AuthenticateToken(r.headers.Get("Authorization"));
               if (!who.ok() || who->kind != "installation") {
                 return JsonResponse(403, ErrorJson("You must authenticate with an installation "
                                                    "access token in order to list repositories "
                                                    "for an installation."));
               }
               return ListRepositories(r, "", true);
             }));
  router.Add("GET", "/orgs/{org}/repos",
             Guard(AuthKind::kToken, false, [this](const ServerRequest& r, const PathParams& p) {
               return ListRepositories(r, p.at("org"), false);
             }));
}

// The webhook's settings: the App's hook config (its JWT), a repository's or organisation's hook
// (a token), and the App's installation with its permissions (its JWT).
void RestApi::AddHookConfigRoutes(http::Router& router) {
  router.Add("GET", "/app/hook/config",
             Guard(AuthKind::kApp, false, [this](const ServerRequest&, const PathParams&) {
               const GithubModelOptions& o = model_.options();
               return JsonResponse(200, json{{"url", o.hook_url},
                                             {"content_type", o.hook_content_type},
                                             {"insecure_ssl", "0"},
                                             {"secret", "********"}});
             }));
  for (const auto& [path, kind] :
       {std::pair<const char*, HookFilter::Kind>{"/repos/{owner}/{repo}/hooks/{hook_id}",
                                                 HookFilter::Kind::kRepository},
        {"/orgs/{org}/hooks/{hook_id}", HookFilter::Kind::kOrganization}}) {
    router.Add("GET", path,
               Guard(AuthKind::kToken, false,
                     [this, kind = kind](const ServerRequest& r, const PathParams& p) {
                       std::optional<HookFilter> f = FilterOf(kind, p);
                       if (!f) return ErrorResponse(NotFound("Not Found"));
                       if (Status s = model_.CheckHook(*f); !s.ok()) return ErrorResponse(s);
                       const GithubModelOptions& o = model_.options();
                       return JsonResponse(
                           200, HookJson(f->hook_id, r.path, o.hook_url, o.hook_content_type,
                                         o.base_url, FromUnixSeconds(1577836800)));
                     }));
  }
  router.Add("GET", "/app/installations/{installation_id}",
             Guard(AuthKind::kApp, false, [this](const ServerRequest& r, const PathParams& p) {
               // Guard has verified the JWT; this names the App. Another App's installation is
               // 404, as on GitHub.
               Result<Identity> app = auth_.AuthenticateApp(r.headers.Get("Authorization"));
               if (!app.ok()) return ErrorResponse(app.status());
               auto id = ParseId(p.at("installation_id"));
               const std::vector<Repository> repos = model_.ListRepositories("");
               if (!id || *id != app->installation_id || repos.empty()) {
                 return ErrorResponse(NotFound("Not Found"));
               }
               return JsonResponse(
                   200,
                   InstallationJson(*id, app->app_id, repos.front(), model_.options().base_url,
                                    repos.front().created_at, auth_.installation_permissions()));
             }));
}

HttpResponse RestApi::ListHookDeliveries(const std::optional<HookFilter>& filter,
                                         const ServerRequest& req) {
  if (!filter) return ErrorResponse(NotFound("Not Found"));
  std::optional<int64_t> cursor;
  if (auto c = req.Param("cursor"); c && !c->empty()) {
    auto id = c->rfind(kCursorPrefix, 0) == 0 ? ParseId(c->substr(3)) : std::nullopt;
    if (!id) return JsonResponse(400, ErrorJson("Invalid cursor"));
    cursor = *id;
  }
  const int per_page = PerPage(req);
  Result<HookDeliveryPage> page = model_.ListHookDeliveries(*filter, cursor, per_page);
  if (!page.ok()) return ErrorResponse(page.status());
  const std::optional<std::string> status = req.Param("status");
  json list = json::array();
  for (const Delivery& d : page->deliveries) {
    // GitHub's filter reads status_code: success 200-399, failure 400-599.
    const bool success = d.response_status >= 200 && d.response_status < 400;
    const bool failure = d.response_status >= 400 && d.response_status < 600;
    if (status == "success" && !success) continue;
    if (status == "failure" && !failure) continue;
    // The installation the deliveries' payloads name (the first App's).
    list.push_back(HookDeliveryJson(d, model_.options().installation_id));
  }
  HttpResponse out = JsonResponse(200, list);
  if (page->next) {
    std::vector<std::pair<std::string, std::string>> q;
    q.emplace_back("per_page", std::to_string(per_page));
    if (status) q.emplace_back("status", *status);
    q.emplace_back("cursor", kCursorPrefix + std::to_string(*page->next));
    out.headers.Set("Link", "<" + model_.options().base_url + req.path + "?" + http::BuildQuery(q) +
                                ">; rel=\"next\"");
  }
  return out;
}

HttpResponse RestApi::ListRepositories(const ServerRequest& req, const std::string& org,
                                       bool installation) {
  const std::vector<Repository> repos = model_.ListRepositories(org);
  if (!installation && repos.empty()) return ErrorResponse(NotFound("Not Found"));
  const int per_page = PerPage(req);
  const int page = static_cast<int>(
      std::clamp<int64_t>(ParseId(req.Param("page").value_or("1")).value_or(1), 1, 1'000'000));
  const int total = static_cast<int>(repos.size());
  json list = json::array();
  for (int i = (page - 1) * per_page; i < std::min(total, page * per_page); ++i) {
    list.push_back(RepositoryJson(repos[static_cast<size_t>(i)], model_.options().base_url));
  }
  json body = list;
  if (installation) {
    body = json{{"total_count", total}, {"repositories", list}, {"repository_selection", "all"}};
  }
  HttpResponse out = JsonResponse(200, body);
  if (page * per_page < total) {
    std::vector<std::pair<std::string, std::string>> q;
    q.emplace_back("per_page", std::to_string(per_page));
    q.emplace_back("page", std::to_string(page + 1));
    out.headers.Set("Link", "<" + model_.options().base_url + req.path + "?" + http::BuildQuery(q) +
                                ">; rel=\"next\"");
  }
  return out;
}

}  // namespace mvr::emulate::github
