// `mvr doctor`: GitHub - whether it accepts the credential, whether the credential holds the
// permissions the set needs, and the webhook: where it delivers, its content type, whether its
// recent deliveries were taken.
#include <algorithm>
#include <map>
#include <set>

#include "base/time_format.h"
#include "runnerset/doctor/doctor.h"

namespace mvr::runnerset {
namespace {

constexpr char kDoctorCredentials[] = "github credentials";
constexpr char kDoctorPermissions[] = "github permissions";
constexpr Duration kDoctorDeliveryWindow{24LL * 3600 * 1000};

std::string DoctorCredentialFix(const ServeConfig& config) {
  if (!config.github.pat_file.empty()) {
    return "put a valid token in " + config.github.pat_file + " (github.patFile)";
  }
  return "check github.appId and the key in " + config.github.private_key_file +
         " (the App's settings, \"Private keys\"), and github.installationId (the App's "
         "installation on " +
         (config.github.organization.empty() ? config.github.repository
                                             : config.github.organization) +
         ")";
}

// Says what a refused call means; `what` names the call.
void DoctorCallFailed(const ServeConfig& config, const std::string& name, const std::string& what,
                      const Status& s, const std::string& permission_fix, DoctorReport& report) {
  if (s.code() == Code::kUnauthorized && s.error_type() == "BadCredentials") {
    report.Fail(name, "GitHub refuses the credential (401 Bad credentials) at " + what,
                DoctorCredentialFix(config));
  } else if (s.code() == Code::kUnauthorized || s.code() == Code::kNotFound) {
    report.Fail(name, what + ": " + s.message(), permission_fix);
  } else {
    report.Fail(name, what + ": " + s.message(),
                "check github.apiUrl (" + config.github.api_url + ") and that GitHub is reachable");
  }
}

int DoctorLevel(const std::string& level) {
  if (level == "admin") return 3;
  if (level == "write") return 2;
  return level == "read" ? 1 : 0;
}

// The App permissions the set needs, name → lowest level.
std::map<std::string, std::string> DoctorAppNeeds(const ServeConfig& config) {
  const bool org = !config.github.organization.empty();
  std::map<std::string, std::string> needs = {{"actions", "read"}, {"metadata", "read"}};
  needs[org ? "organization_self_hosted_runners" : "administration"] = "write";
  if (config.github.hook_id > 0) needs[org ? "organization_hooks" : "repository_hooks"] = "read";
  // Re-running a job lost with its VM (janitor.rerunLostJobs, issue 55, item 4).
  if (config.janitor.rerun_lost_jobs) needs["actions"] = "write";
  return needs;
}

void DoctorAppPermissions(const ServeConfig& config, github::GitHubClient& gh,
                          DoctorReport& report) {
  Result<github::InstallationInfo> inst = gh.GetInstallation();
  if (!inst.ok()) {
    DoctorCallFailed(config, kDoctorPermissions, "GET /app/installations/{id}", inst.status(),
                     "check github.installationId", report);
    return;
  }
  std::string missing;
  for (const auto& [name, level] : DoctorAppNeeds(config)) {
    auto it = inst->permissions.find(name);
    const std::string has = it == inst->permissions.end() ? "none" : it->second;
    if (DoctorLevel(has) < DoctorLevel(level)) {
      missing += (missing.empty() ? "" : ", ") + name + ": " + level + " (has " + has + ")";
    }
  }
  if (inst->suspended) {
    report.Fail(kDoctorPermissions, "the installation is suspended",
                "unsuspend the App's installation on " + inst->account);
  } else if (!missing.empty()) {
    report.Fail(kDoctorPermissions, "the App's installation lacks " + missing,
                "grant them in the App's settings (\"Permissions & events\"), then accept the "
                "new permissions in the installation on " +
                    inst->account);
  } else {
    report.Pass(kDoctorPermissions, "installation " + std::to_string(inst->id) + " on " +
                                        inst->account + " has every permission the set needs");
  }
}

// A classic token's scopes against the set's needs.
void DoctorClassicScopes(const ServeConfig& config, const std::vector<std::string>& scopes,
                         DoctorReport& report) {
  const std::set<std::string> has(scopes.begin(), scopes.end());
  const bool org = !config.github.organization.empty();
  std::vector<std::vector<std::string>> needs = {{"repo"}};
  if (org) needs.push_back({"admin:org"});
  // An enterprise's runners: manage_runners:enterprise, or admin:enterprise, which holds it.
  if (!config.github.enterprise.empty()) {
    needs.push_back({"manage_runners:enterprise", "admin:enterprise"});
  }
  if (config.github.hook_id > 0) {
    needs.push_back(org ? std::vector<std::string>{"admin:org_hook"}
                        : std::vector<std::string>{"admin:repo_hook", "read:repo_hook"});
  }
  std::string missing;
  for (const auto& any_of : needs) {
    if (std::none_of(any_of.begin(), any_of.end(), [&](const auto& s) { return has.count(s); })) {
      missing += (missing.empty() ? "" : ", ") + any_of.front();
    }
  }
  if (missing.empty()) {
    report.Pass(kDoctorPermissions, "classic token with the scopes the set needs");
  } else {
    report.Fail(kDoctorPermissions, "the classic token lacks the scope " + missing,
                "make a token with " + missing + " (or a fine-grained token) and put it in " +
                    config.github.pat_file);
  }
}

// A fine-grained (or installation) token shows no scopes: the calls the set makes, tried.
void DoctorProbePermissions(const ServeConfig& config, github::GitHubClient& gh,
                            DoctorReport& report) {
  const github::RunnerScope scope = RunnerScopeOf(config);
  const std::string admin = config.github.organization.empty()
                                ? "Administration: read and write"
                                : "Self-hosted runners: read and write";
  const std::string fix =
      scope.is_enterprise()
          ? "a fine-grained token cannot manage an enterprise's runners: put a classic token "
            "with the scopes manage_runners:enterprise and repo in " +
                config.github.pat_file
          : "give the token \"" + admin + "\" and \"Actions: read\"" +
                (config.github.hook_id > 0 ? " and \"Webhooks: read\"" : "") + " on " +
                scope.ToString();
  if (Result<std::vector<github::Runner>> r = gh.ListRunners(scope, {}); !r.ok()) {
    return DoctorCallFailed(config, kDoctorPermissions, "listing runners", r.status(), fix, report);
  }
  if (Result<github::RegistrationToken> t = gh.CreateRegistrationToken(scope); !t.ok()) {
    return DoctorCallFailed(config, kDoctorPermissions, "creating a registration token", t.status(),
                            fix, report);
  }
  if (!scope.serves_many_repositories()) {
    Result<github::RepositoryRef> repo = github::RepositoryRef::Parse(config.github.repository);
    if (repo.ok()) {
      if (auto jobs = gh.ListQueuedJobs(*repo, github::QueuedRunsFilter{}); !jobs.ok()) {
        return DoctorCallFailed(config, kDoctorPermissions, "listing queued jobs", jobs.status(),
                                fix, report);
      }
    }
  }
  report.Pass(kDoctorPermissions,
              "the token lists runners, may register them (a one-hour registration token was "
              "issued and not used)" +
                  std::string(scope.serves_many_repositories() ? "" : " and reads the jobs"));
}

std::optional<github::HookRef> DoctorHookRef(const ServeConfig& config) {
  github::HookRef hook;
  if (config.github.hook_id <= 0) {
    if (config.github.pat_file.empty()) return hook;  // the App's own hook
    return std::nullopt;
  }
  hook.id = config.github.hook_id;
  if (!config.github.organization.empty()) {
    hook.kind = github::HookRef::Kind::kOrganization;
    hook.owner = config.github.organization;
  } else {
    hook.kind = github::HookRef::Kind::kRepository;
    Result<github::RepositoryRef> repo = github::RepositoryRef::Parse(config.github.repository);
    if (repo.ok()) {
      hook.owner = repo->owner;
      hook.repo = repo->name;
    }
  }
  return hook;
}

bool DoctorUrlMatches(const std::string& expected, const std::string& actual) {
  // Without a host (a wildcard listen address) only the port and path are compared.
  if (expected.rfind("http://:", 0) == 0) {
    const std::string tail = expected.substr(7);
    return actual.size() > tail.size() &&
           actual.compare(actual.size() - tail.size(), tail.size(), tail) == 0;
  }
  return expected == actual;
}

void DoctorHookSettings(const ServeConfig& config, const github::HookConfig& hook,
                        const std::string& where, DoctorReport& report) {
  const std::string expected = ExpectedWebhookUrl(config);
  if (DoctorUrlMatches(expected, hook.url)) {
    report.Pass("webhook url", where + " delivers to " + hook.url);
  } else {
    report.Fail("webhook url", where + " delivers to " + hook.url + ", not " + expected,
                "set the webhook's payload URL to " + expected +
                    " (or github.webhookUrl to the URL GitHub reaches the set at)");
  }
  std::string problem;
  if (hook.content_type != "json") problem = "content type " + hook.content_type;
  if (hook.insecure_ssl == "1") problem = "TLS certificate verification is off (insecure_ssl)";
  if (hook.active && !*hook.active) problem = "the hook is inactive";
  if (hook.events &&
      std::find(hook.events->begin(), hook.events->end(), "workflow_job") == hook.events->end()) {
    problem = "the hook does not send workflow_job events";
  }
  if (problem.empty()) {
    report.Pass(
        "webhook settings",
        "content type json" + std::string(hook.active ? ", active, sends workflow_job" : ""));
  } else {
    report.Fail("webhook settings", problem,
                "edit the webhook: content type application/json, SSL verification on, active, "
                "event \"Workflow jobs\"");
  }
}

void DoctorDeliveries(const ServeConfig& config, DoctorClients& clients,
                      const github::HookRef& hook, DoctorReport& report) {
  const TimePoint since = clients.seam.clock.Now() - kDoctorDeliveryWindow;
  Result<std::vector<github::HookDelivery>> list =
      clients.github->ListHookDeliveries(hook, since, 1);
  if (!list.ok()) {
    return DoctorCallFailed(config, "webhook deliveries", "listing the hook's deliveries",
                            list.status(), "give the credential \"Webhooks: read\"", report);
  }
  // A failed delivery is settled by a later successful one with the same GUID (a redelivery).
  std::set<std::string> taken;
  int failed = 0, recent = 0;
  const github::HookDelivery* newest_failed = nullptr;
  for (const github::HookDelivery& d : *list) {  // newest first
    if (d.delivered_at && *d.delivered_at < since) continue;
    ++recent;
    if (!d.failed()) {
      taken.insert(d.guid);
    } else if (!taken.count(d.guid)) {
      ++failed;
      if (newest_failed == nullptr) newest_failed = &d;
    }
  }
  if (failed == 0) {
    report.Pass("webhook deliveries",
                std::to_string(recent) + " in the last 24 h (newest page), none failed");
    return;
  }
  const std::string code = newest_failed->status_code == 0
                               ? std::string("no answer")
                               : "HTTP " + std::to_string(newest_failed->status_code);
  report.Fail("webhook deliveries",
              std::to_string(failed) + " of " + std::to_string(recent) +
                  " in the last 24 h failed; the newest (" + newest_failed->guid + ", " +
                  (newest_failed->delivered_at ? FormatRfc3339(*newest_failed->delivered_at)
                                               : std::string("?")) +
                  ") got " + code,
              "make the set reachable at the webhook's URL with the secret of "
              "github.webhookSecretFile (401: the secrets differ), then redeliver the failed "
              "deliveries from the hook's \"Recent Deliveries\" (the janitor also recovers jobs "
              "still queued)");
}

void DoctorWebhook(const ServeConfig& config, DoctorClients& clients, DoctorReport& report) {
  std::optional<github::HookRef> hook = DoctorHookRef(config);
  if (!hook) {
    for (const char* name : {"webhook url", "webhook settings", "webhook deliveries"}) {
      report.NotChecked(name, config.github.enterprise.empty()
                                  ? "with a token the set cannot find its webhook: set "
                                    "github.hookId"
                                  : "an enterprise's set has a webhook in each organisation; "
                                    "check each one's \"Recent Deliveries\"");
    }
    return;
  }
  const std::string where = hook->kind == github::HookRef::Kind::kApp
                                ? "the App's webhook"
                                : "hook " + std::to_string(hook->id);
  Result<github::HookConfig> settings = clients.github->GetHookConfig(*hook);
  if (!settings.ok()) {
    DoctorCallFailed(config, "webhook url", "reading " + where, settings.status(),
                     "check github.hookId (the hook's id is in its settings page's URL) and that "
                     "the credential may read webhooks",
                     report);
    report.NotChecked("webhook settings", "the webhook could not be read");
  } else {
    DoctorHookSettings(config, *settings, where, report);
  }
  DoctorDeliveries(config, clients, *hook, report);
}

}  // namespace

void CheckGitHub(const ServeConfig& config, DoctorClients& clients, DoctorReport& report) {
  std::vector<std::string> later = {kDoctorPermissions};
  if (config.github.uses_webhook()) {
    later.insert(later.end(), {"webhook url", "webhook settings", "webhook deliveries"});
  }
  for (const RunnerClass& cls : config.classes) {
    if (!config.github.uses_scale_sets()) break;
    later.insert(later.end(), {"scale set " + cls.label, "scale set session " + cls.label});
  }
  if (clients.github == nullptr) {
    report.NotChecked(kDoctorCredentials, "no GitHub client: the configuration or secrets failed");
    for (const std::string& name : later) report.NotChecked(name, "no GitHub credentials");
    return;
  }
  github::GitHubClient& gh = *clients.github;
  Result<github::CredentialProbe> probe = gh.ProbeCredential(RunnerScopeOf(config));
  if (!probe.ok()) {
    DoctorCallFailed(config, kDoctorCredentials,
                     "listing the runners of " + RunnerScopeOf(config).ToString(), probe.status(),
                     "check github.repository/organization/enterprise and that the credential "
                     "may manage its self-hosted runners",
                     report);
    for (const std::string& name : later) {
      report.NotChecked(name, "GitHub did not accept the credential");
    }
    return;
  }
  report.Pass(kDoctorCredentials,
              std::string(gh.is_app() ? "the App's installation token" : "the token") +
                  " is accepted for " + RunnerScopeOf(config).ToString());
  for (size_t i = 0; i < clients.other_apps.size(); ++i) {
    const std::string name = "github app " + config.github.apps[i + 1].app_id;
    Result<github::CredentialProbe> other =
        clients.other_apps[i]->ProbeCredential(RunnerScopeOf(config));
    if (!other.ok()) {
      DoctorCallFailed(config, name, "listing the runners of " + RunnerScopeOf(config).ToString(),
                       other.status(),
                       "install the App on " + RunnerScopeOf(config).ToString() +
                           " with the permissions of the first (docs/runner-set-github.md)",
                       report);
    } else {
      report.Pass(name,
                  "its installation token is accepted for " + RunnerScopeOf(config).ToString());
    }
  }
  if (gh.is_app()) {
    DoctorAppPermissions(config, gh, report);
  } else if (probe->oauth_scopes) {
    DoctorClassicScopes(config, *probe->oauth_scopes, report);
  } else {
    DoctorProbePermissions(config, gh, report);
  }
  if (config.github.uses_webhook()) DoctorWebhook(config, clients, report);
  if (config.github.uses_scale_sets()) CheckScaleSets(config, clients.scale_sets, report);
}

}  // namespace mvr::runnerset
