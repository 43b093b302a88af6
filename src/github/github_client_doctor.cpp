// GitHubClient: the reads `mvr doctor` makes of GitHub - the webhook's configuration (the App's
// own hook, or a repository's or organisation's), the App's installation and its permissions, and
// whether GitHub accepts the credential (with a classic token's scopes).
#include "base/encoding.h"
#include "github/github_client.h"
#include "github/json_parsers.h"

namespace mvr::github {
namespace {

Result<HookConfig> ParseHookConfig(const JsonFields& config) {
  HookConfig out;
  MVR_ASSIGN_OR_RETURN(out.url, config.OptionalString("url"));
  MVR_ASSIGN_OR_RETURN(out.content_type, config.OptionalString("content_type"));
  // GitHub documents insecure_ssl as a string or a number ("0" or 0).
  Result<std::string> insecure = config.OptionalString("insecure_ssl");
  if (insecure.ok()) {
    out.insecure_ssl = *insecure;
  } else {
    MVR_ASSIGN_OR_RETURN(std::optional<int64_t> n, config.OptionalInt("insecure_ssl"));
    out.insecure_ssl = n ? std::to_string(*n) : "";
  }
  return out;
}

Result<HookConfig> ParseHook(const JsonFields& hook) {
  MVR_ASSIGN_OR_RETURN(JsonFields config, hook.Object("config"));
  MVR_ASSIGN_OR_RETURN(HookConfig out, ParseHookConfig(config));
  MVR_ASSIGN_OR_RETURN(out.active, hook.Bool("active"));
  MVR_ASSIGN_OR_RETURN(out.events, hook.Strings("events"));
  return out;
}

Result<InstallationInfo> ParseInstallation(const JsonFields& o) {
  InstallationInfo out;
  MVR_ASSIGN_OR_RETURN(out.id, o.Int("id"));
  MVR_ASSIGN_OR_RETURN(std::optional<JsonFields> account, o.OptionalObject("account"));
  if (account) {
    MVR_ASSIGN_OR_RETURN(out.account, account->OptionalString("login"));
  }
  MVR_ASSIGN_OR_RETURN(out.permissions, o.StringMap("permissions"));
  MVR_ASSIGN_OR_RETURN(std::string suspended_at, o.OptionalString("suspended_at"));
  out.suspended = !suspended_at.empty();
  return out;
}

std::vector<std::string> SplitScopes(const std::string& header) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= header.size()) {
    size_t comma = header.find(',', start);
    std::string part =
        header.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!part.empty() && part.front() == ' ') part.erase(part.begin());
    while (!part.empty() && part.back() == ' ') part.pop_back();
    if (!part.empty()) out.push_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

Result<HookConfig> GitHubClient::GetHookConfig(const HookRef& hook) {
  if (hook.kind == HookRef::Kind::kApp) {
    MVR_ASSIGN_OR_RETURN(http::HttpResponse response, CallAsApp("/app/hook/config"));
    return ParseObjectBody<HookConfig>(response.body, "the App's hook config", ParseHookConfig);
  }
  if (hook.id <= 0) return InvalidArgument("a hook id must be a positive number");
  const std::string target =
      hook.kind == HookRef::Kind::kOrganization
          ? "/orgs/" + UriEncode(hook.owner) + "/hooks/" + std::to_string(hook.id)
          : "/repos/" + UriEncode(hook.owner) + "/" + UriEncode(hook.repo) + "/hooks/" +
                std::to_string(hook.id);
  MVR_ASSIGN_OR_RETURN(http::HttpResponse response, Call("GET", target));
  return ParseObjectBody<HookConfig>(response.body, "the hook", ParseHook);
}

Result<InstallationInfo> GitHubClient::GetInstallation() {
  if (!auth_.is_app()) return InvalidArgument("a token has no installation");
  MVR_ASSIGN_OR_RETURN(http::HttpResponse response,
                       CallAsApp("/app/installations/" + std::to_string(auth_.installation_id())));
  return ParseObjectBody<InstallationInfo>(response.body, "the installation", ParseInstallation);
}

Result<CredentialProbe> GitHubClient::ProbeCredential(const RunnerScope& scope) {
  MVR_ASSIGN_OR_RETURN(http::HttpResponse response,
                       Call("GET", scope.RunnersPath() + "?per_page=1"));
  CredentialProbe out;
  if (std::optional<std::string> scopes = response.headers.Get("X-OAuth-Scopes")) {
    out.oauth_scopes = SplitScopes(*scopes);
  }
  return out;
}

}  // namespace mvr::github
