// The config file's `github` member: where the set's runners register (a repository, an
// organisation or an enterprise), with a token or one or more GitHub Apps, and its webhook.
#include <set>

#include "github/types.h"
#include "runnerset/config/config_reader.h"

namespace mvr::runnerset::config_internal {
namespace {

std::string AppIdOf(const json& v) {
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_string()) return v.get<std::string>();
  return "";
}

// github.apps: [{"appId", "privateKeyFile", "installationId"}, ...], each App installed on the
// set's repository, organisation or enterprise; the first's fields fill github.appId and the
// rest (its webhook delivers the jobs).
Status ParseGitHubApps(const json& v, GitHubSettings& g) {
  if (!g.app_id.empty() || !g.private_key_file.empty() || g.installation_id != 0) {
    return InvalidArgument(
        "github.apps: give the Apps in github.apps alone, without github.appId, privateKeyFile "
        "and installationId beside it");
  }
  if (!v.is_array() || v.empty() || v.size() > 20) {
    return InvalidArgument(
        "github.apps: expected a list of 1 to 20 Apps, each {\"appId\", \"privateKeyFile\", "
        "\"installationId\"}");
  }
  std::set<std::string> ids;
  std::set<int64_t> installations;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string key = "github.apps[" + std::to_string(i) + "]";
    MVR_RETURN_IF_ERROR(ObjectAt(&v[i], key));
    Strict a(v[i], key);
    GitHubSettings::App app;
    if (const json* id = a.Find("appId")) app.app_id = AppIdOf(*id);
    MVR_RETURN_IF_ERROR(a.String("privateKeyFile", app.private_key_file));
    MVR_RETURN_IF_ERROR(a.Integer("installationId", app.installation_id, 1, INT64_MAX));
    MVR_RETURN_IF_ERROR(a.NoOthers());
    if (app.app_id.empty() || app.private_key_file.empty() || app.installation_id == 0) {
      return InvalidArgument(key +
                             ": each App needs appId (a number or a string), privateKeyFile and "
                             "installationId");
    }
    if (!ids.insert(app.app_id).second) {
      return InvalidArgument(key + ": the App " + app.app_id +
                             " is listed twice; each App has its own rate limits once");
    }
    if (!installations.insert(app.installation_id).second) {
      return InvalidArgument(key + ": the installation " + std::to_string(app.installation_id) +
                             " is listed twice; each App has an installation of its own");
    }
    g.apps.push_back(std::move(app));
  }
  g.app_id = g.apps[0].app_id;
  g.private_key_file = g.apps[0].private_key_file;
  g.installation_id = g.apps[0].installation_id;
  return Status::Ok();
}

}  // namespace

Status ParseGitHubSettings(const json& j, GitHubSettings& g) {
  Strict s(j, "github");
  MVR_RETURN_IF_ERROR(s.String("apiUrl", g.api_url));
  MVR_RETURN_IF_ERROR(s.PathOrPem("caBundle", g.ca_bundle));
  MVR_RETURN_IF_ERROR(s.String("repository", g.repository));
  MVR_RETURN_IF_ERROR(s.String("organization", g.organization));
  MVR_RETURN_IF_ERROR(s.String("enterprise", g.enterprise));
  MVR_RETURN_IF_ERROR(s.Strings("organizations", g.organizations));
  MVR_RETURN_IF_ERROR(s.String("patFile", g.pat_file));
  if (const json* app = s.Find("appId")) {
    g.app_id = AppIdOf(*app);
    if (g.app_id.empty()) return InvalidArgument("github.appId: expected a number or a string");
  }
  MVR_RETURN_IF_ERROR(s.String("privateKeyFile", g.private_key_file));
  MVR_RETURN_IF_ERROR(s.Integer("installationId", g.installation_id, 1, INT64_MAX));
  if (const json* apps = s.Find("apps")) MVR_RETURN_IF_ERROR(ParseGitHubApps(*apps, g));
  std::string source = JobSourceName(g.source);
  MVR_RETURN_IF_ERROR(s.String("source", source));
  const std::optional<JobSource> parsed = ParseJobSource(source);
  if (!parsed) {
    return InvalidArgument("github.source: \"" + source +
                           "\" is not a job source; expected \"webhook\" (workflow_job webhooks, "
                           "the default), \"scaleset\" (the runner scale-set API) or \"both\"");
  }
  g.source = *parsed;
  // A set fed by its scale sets alone has no webhook to verify.
  MVR_RETURN_IF_ERROR(s.String("webhookSecretFile", g.webhook_secret_file, g.uses_webhook()));
  MVR_RETURN_IF_ERROR(s.Integer("runnerGroupId", g.runner_group_id, 1, INT64_MAX));
  MVR_RETURN_IF_ERROR(s.Integer("hookId", g.hook_id, 1, INT64_MAX));
  MVR_RETURN_IF_ERROR(s.String("webhookUrl", g.webhook_url));
  MVR_RETURN_IF_ERROR(s.Strings("allowedRepositories", g.allowed_repositories));
  MVR_RETURN_IF_ERROR(s.NoOthers());
  if (g.api_url.rfind("http://", 0) != 0 && g.api_url.rfind("https://", 0) != 0) {
    return InvalidArgument("github.apiUrl: expected an http(s) URL, got \"" + g.api_url + "\"");
  }
  while (!g.api_url.empty() && g.api_url.back() == '/') g.api_url.pop_back();
  if (!g.ca_bundle.empty() && g.api_url.rfind("https://", 0) != 0) {
    return InvalidArgument("github.caBundle: only for an https apiUrl, got \"" + g.api_url + "\"");
  }
  if (!g.webhook_url.empty() && g.webhook_url.rfind("http://", 0) != 0 &&
      g.webhook_url.rfind("https://", 0) != 0) {
    return InvalidArgument("github.webhookUrl: expected an http(s) URL, got \"" + g.webhook_url +
                           "\"");
  }
  if (!g.repository.empty() + !g.organization.empty() + !g.enterprise.empty() != 1) {
    return InvalidArgument(
        "github.repository / github.organization / github.enterprise: give exactly one");
  }
  if (!g.repository.empty() && !github::RepositoryRef::Parse(g.repository).ok()) {
    return InvalidArgument("github.repository: expected \"owner/name\", got \"" + g.repository +
                           "\"");
  }
  const bool app = !g.app_id.empty() || !g.private_key_file.empty() || g.installation_id != 0;
  if (g.pat_file.empty() == !app) {
    return InvalidArgument(
        "github.patFile / github.appId: give a patFile, or appId with privateKeyFile and "
        "installationId");
  }
  if (app && (g.app_id.empty() || g.private_key_file.empty() || g.installation_id == 0)) {
    return InvalidArgument(
        "github.appId: a GitHub App needs appId, privateKeyFile and installationId together");
  }
  if (app && g.apps.empty()) g.apps.push_back({g.app_id, g.private_key_file, g.installation_id});
  return CheckEnterprise(g);
}

}  // namespace mvr::runnerset::config_internal
