// GitHubClient: the evidence of work that arrived while the runner set was down - GitHub's record
// of its webhook deliveries (paged newest first by an opaque cursor in the Link header) and the
// repositories whose queued runs the set scans.
#include "base/encoding.h"
#include "base/time_format.h"
#include "github/github_client.h"
#include "github/json_parsers.h"

namespace mvr::github {
namespace {

Result<HookDelivery> ParseHookDelivery(const JsonFields& o) {
  HookDelivery d;
  MVR_ASSIGN_OR_RETURN(d.id, o.Int("id"));
  MVR_ASSIGN_OR_RETURN(d.guid, o.String("guid"));
  MVR_ASSIGN_OR_RETURN(d.delivered_at, o.OptionalTime("delivered_at"));
  MVR_ASSIGN_OR_RETURN(int64_t code, o.Int("status_code"));
  d.status_code = static_cast<int>(code);
  MVR_ASSIGN_OR_RETURN(d.event, o.String("event"));
  MVR_ASSIGN_OR_RETURN(d.action, o.OptionalString("action"));
  MVR_ASSIGN_OR_RETURN(d.repository_id, o.OptionalInt("repository_id"));
  MVR_ASSIGN_OR_RETURN(d.redelivery, o.OptionalBool("redelivery", false));
  return d;
}

Result<std::string> DeliveriesPath(const HookRef& hook) {
  if (hook.kind == HookRef::Kind::kApp) return std::string("/app/hook/deliveries");
  if (hook.id <= 0) return InvalidArgument("a hook id must be a positive number");
  if (hook.owner.empty()) return InvalidArgument("the hook names no owner");
  if (hook.kind == HookRef::Kind::kOrganization) {
    return "/orgs/" + UriEncode(hook.owner) + "/hooks/" + std::to_string(hook.id) + "/deliveries";
  }
  if (hook.repo.empty()) return InvalidArgument("the hook names no repository");
  return "/repos/" + UriEncode(hook.owner) + "/" + UriEncode(hook.repo) + "/hooks/" +
         std::to_string(hook.id) + "/deliveries";
}

}  // namespace

Result<http::HttpResponse> GitHubClient::CallAsApp(const std::string& target) {
  MVR_ASSIGN_OR_RETURN(const bool probe, health_.Admit(rest_.clock().Now()));
  if (probe) (void)auth_.Reload();
  Result<http::HttpResponse> response = [&]() -> Result<http::HttpResponse> {
    MVR_ASSIGN_OR_RETURN(Secret jwt, auth_.AppJwt(rest_.clock().Now()));
    return rest_.Send("GET", target, "", &jwt);
  }();
  Observe(response.status(), probe);
  return response;
}

Result<std::vector<HookDelivery>> GitHubClient::ListHookDeliveries(const HookRef& hook,
                                                                   TimePoint since, int max_pages) {
  MVR_ASSIGN_OR_RETURN(std::string path, DeliveriesPath(hook));
  std::vector<HookDelivery> out;
  std::optional<std::string> next = path + "?per_page=" + std::to_string(options_.per_page);
  for (int page = 0; next && page < max_pages; ++page) {
    const std::string target = *next;
    Result<http::HttpResponse> response =
        hook.kind == HookRef::Kind::kApp ? CallAsApp(target) : Call("GET", target);
    MVR_RETURN_IF_ERROR(response.status());
    Result<nlohmann::json> doc = ParseJsonDocument(response->body, "the deliveries");
    if (!doc.ok() || !doc->is_array()) {
      return Internal("GitHub GET " + target + " gave a malformed answer (not an array)");
    }
    bool older = false;
    for (size_t i = 0; i < doc->size(); ++i) {
      Result<JsonFields> fields = JsonFields::Of((*doc)[i], "[" + std::to_string(i) + "]");
      Result<HookDelivery> d = fields.ok() ? ParseHookDelivery(*fields) : fields.status();
      if (!d.ok()) return Internal("GitHub GET " + target + ": " + d.status().message());
      if (d->delivered_at && *d->delivered_at < since) older = true;
      out.push_back(*std::move(d));
    }
    next.reset();
    if (older) break;  // newest first: the rest is older still
    if (std::optional<std::string> link = response->headers.Get("Link")) next = NextPageLink(*link);
  }
  return out;
}

Result<std::vector<std::string>> GitHubClient::ListVisibleRepositories(const RunnerScope& scope) {
  if (!scope.serves_many_repositories()) {
    return std::vector<std::string>{scope.owner() + "/" + scope.repo()};
  }
  // An installation's answer is {"repositories": [...]}; an organisation's a bare array. An
  // enterprise's set reads each of its organisations.
  const bool app = auth_.is_app();
  std::vector<std::string> firsts;
  if (app) {
    firsts.push_back("/installation/repositories");
  } else {
    for (const std::string& org : scope.organizations()) {
      firsts.push_back("/orgs/" + UriEncode(org) + "/repos");
    }
  }
  std::vector<std::string> out;
  for (const std::string& first : firsts) {
    std::optional<std::string> next = first + "?per_page=" + std::to_string(options_.per_page);
    for (int page = 0; next; ++page) {
      const std::string target = *next;
      if (page == options_.max_pages) return Internal("GitHub GET " + target + ": too many pages");
      MVR_ASSIGN_OR_RETURN(http::HttpResponse response, Call("GET", target));
      Result<nlohmann::json> doc = ParseJsonDocument(response.body, "the repositories");
      const nlohmann::json* list = nullptr;
      if (doc.ok() && app && doc->is_object() && doc->contains("repositories"))
        list = &(*doc)["repositories"];
      if (doc.ok() && !app) list = &*doc;
      if (list == nullptr || !list->is_array()) {
        return Internal("GitHub GET " + target + " gave a malformed answer (no repository list)");
      }
      for (size_t i = 0; i < list->size(); ++i) {
        MVR_ASSIGN_OR_RETURN(JsonFields repo,
                             JsonFields::Of((*list)[i], "[" + std::to_string(i) + "]"));
        MVR_ASSIGN_OR_RETURN(std::string name, repo.String("full_name"));
        out.push_back(std::move(name));
      }
      next.reset();
      if (std::optional<std::string> link = response.headers.Get("Link")) {
        next = NextPageLink(*link);
      }
    }
  }
  return out;
}

}  // namespace mvr::github
