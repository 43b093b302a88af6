// ServeConfig: the configuration of one runner set as `mvr serve --config FILE` reads it (JSON).
// Unknown keys are refused and every error names the key it is about ("classes[1].image: ...").
// Secrets are never in the file itself, only the paths of files holding them; LoadSecrets reads
// them. docs/runner-set-config.md is the reference.
// Thread-safety: plain values and pure functions (LoadSecrets reads files).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/secret.h"
#include "base/status.h"
#include "github/types.h"
#include "runnerset/pools/pool_schedule.h"
#include "runnerset/pools/pool_target.h"

namespace mvr::runnerset {

// Which jobs a class takes, by the labels a job asks for (config_labels.cpp). "self-hosted",
// "linux" and "arm64" are offered by every class (MicroVMs are ARM64 Linux only), beside its label
// and `labels`; a job asking for another architecture or OS (github/platform_labels.h) is never
// taken, whatever the labelMatch.
//   kAny:   the job asks for the class's label (its other labels are not checked).
//   kAll:   and every label it asks for is one the class offers (the default: GitHub hands a job
//           only to a runner with all its labels, and the set registers each runner with its job's
//           labels, so a class must not take a job asking for what it does not have, a `gpu`).
//   kExact: and it asks for every label the class offers, too.
enum class LabelMatch { kAny, kAll, kExact };
std::optional<LabelMatch> ParseLabelMatch(std::string_view text);
const char* LabelMatchName(LabelMatch match);

// A runs-on label and the MicroVM image its jobs run on.
struct RunnerClass {
  std::string label{};
  std::string image{};          // image id or ARN
  std::string size{};           // informational: a VM's size is fixed by its image
  std::string image_version{};  // "" = the image's latest active version
  int max_duration_seconds = 3600;
  int warm_pool_size = 0;  // SUSPENDED VMs kept pre-booted for this class's jobs (0 = none)
  // SUSPENDED VMs whose JIT runner is already registered and connected (0 = none; opt-in:
  // docs/runner-set-pools.md, "Hot pools").
  int hot_pool_size = 0;
  // The class whose image this class's jobs launch on while this class is unhealthy (its
  // image's runner version refused by GitHub or near its deadline: class_health.h); "" = none.
  std::string fallback_class{};
  std::vector<std::string> labels{};  // other labels its runners offer (gpu, large, ...)
  // circuitBreaker (lifecycle/circuit_breaker.h): this many VM failures (lost mid-job, or failed
  // at the platform before running) within the window pause the class's launches (0: off).
  int breaker_failures = 0;
  int breaker_window_seconds = 600;
  int breaker_pause_seconds = 900;
  // "arm64" or "": the architecture its runners offer (MicroVMs are ARM64 only; anything else is
  // refused by CheckArchitecture).
  std::string architecture{};
  LabelMatch label_match = LabelMatch::kAll;
  // Scheduled sizes (pool_schedule.h): when given, warm_pool_size / hot_pool_size hold the
  // largest any window gives, and the size at a moment is the first matching window's.
  std::vector<PoolWindow> warm_pool_windows{};
  std::vector<PoolWindow> hot_pool_windows{};
  // Sizes from a start-time target (pool_target.h): when set, warm_pool_size / hot_pool_size hold
  // the target's max, and the sweeper sizes the pool from the arrivals it has seen.
  PoolTarget warm_pool_target{};
  PoolTarget hot_pool_target{};
  bool has_pool_target() const { return warm_pool_target.set() || hot_pool_target.set(); }
  // "Has a pool" at any time (the largest size).
  bool has_pool() const { return warm_pool_size > 0 || hot_pool_size > 0; }
  // The pools' sizes at `now`.
  int WarmPoolSizeAt(TimePoint now) const {
    return PoolSizeAt(warm_pool_windows, warm_pool_size, now);
  }
  int HotPoolSizeAt(TimePoint now) const {
    return PoolSizeAt(hot_pool_windows, hot_pool_size, now);
  }
  // Whether a job asking for `job_labels` runs on this class (label_match).
  bool Takes(const std::vector<std::string>& job_labels) const;
  // Whether GitHub would hand a job asking for `job_labels` to a runner registered with this
  // class's labels: each is its label, one of its `labels` or self-hosted, linux, ARM64 (the
  // job's own class label need not be this class's). What a circuit breaker's fallback asks.
  bool Offers(const std::vector<std::string>& job_labels) const;
  // RunMicrovm's ingressNetworkConnectors / egressNetworkConnectors (ingressConnectors,
  // egressConnectors): unset, AWS's managed ALL_INGRESS / INTERNET_EGRESS of the set's region
  // (ResolveClasses fills them in); an empty list sends none.
  std::optional<std::vector<std::string>> ingress_connectors{};
  std::optional<std::vector<std::string>> egress_connectors{};
  // `image`'s ARN, resolved once when the set starts (ResolveClasses); "" before.
  std::string image_arn{};
  // What RunMicrovm and ListMicrovms get: the ARN once resolved, else `image` as configured.
  const std::string& RunImage() const { return image_arn.empty() ? image : image_arn; }
};

// Where the set learns of its jobs (github.source; issue 54, docs/runner-set-scaleset.md):
//   kWebhook:  workflow_job webhooks on POST /webhook (the default);
//   kScaleSet: GitHub's runner scale-set API: each class is a scale set named by its label, whose
//              message session `mvr serve` holds; no webhook, no webhook secret, no /webhook;
//   kBoth:     both: a job asking for exactly one class label is the scale set's, every other
//              job the webhooks'.
enum class JobSource { kWebhook, kScaleSet, kBoth };
std::optional<JobSource> ParseJobSource(std::string_view text);
const char* JobSourceName(JobSource source);

struct GitHubSettings {
  std::string api_url = "https://api.github.com";
  JobSource source = JobSource::kWebhook;
  bool uses_webhook() const { return source != JobSource::kScaleSet; }
  bool uses_scale_sets() const { return source != JobSource::kWebhook; }
  // More CAs to trust for api_url (a GitHub Enterprise Server whose certificate a private CA
  // signed): a PEM file's path, or the PEM text itself (how deploy/ hands it to the functions).
  std::string ca_bundle;
  std::string repository;    // "owner/name", or
  std::string organization;  // an organisation whose repositories the set serves, or
  // an enterprise (its slug) whose runners the set registers, serving the repositories of
  // `organizations` (their webhooks deliver the jobs; the janitor scans their repositories).
  std::string enterprise;
  std::vector<std::string> organizations;
  std::string pat_file;  // a personal access token, or
  std::string app_id;    // a GitHub App ...
  std::string private_key_file;
  int64_t installation_id = 0;
  // Every GitHub App the set calls through (github/multi_app.h): the one above, or those of
  // `github.apps`, whose first the fields above repeat (its webhook delivers the jobs). Empty
  // with a patFile.
  struct App {
    std::string app_id;
    std::string private_key_file;
    int64_t installation_id = 0;
  };
  std::vector<App> apps;
  // The configuration key of apps[i]'s private key, as errors name it.
  std::string AppKeyName(size_t i) const;
  std::string webhook_secret_file;
  int64_t runner_group_id = 1;
  // The repository's or organisation's webhook whose deliveries the janitor reads for failed
  // ones (0: none; with a GitHub App, the App's own hook is read instead).
  int64_t hook_id = 0;
  // The URL GitHub delivers the set's webhooks to, as GitHub sees it (behind a proxy or tunnel);
  // "" = http://<listen>/webhook. Only `mvr doctor` reads it.
  std::string webhook_url;
  // An organisation's set serves only these repositories ("name" or "org/name", stored as
  // "org/name"); empty: every repository of the organisation.
  std::vector<std::string> allowed_repositories;
  // Whether the set serves jobs of `repository` ("owner/name"): allowed_repositories, if any.
  bool Allows(std::string_view repository) const;
  // Whether a job of `repository` is the set's: its repository, a repository of its
  // organisation (or, for an enterprise, of one of its organisations), and allowed.
  bool Serves(std::string_view repository) const;
};

// The PEM text of github.caBundle ("" without one); InvalidArgument naming the key when the file
// cannot be read or holds no certificate.
Result<std::string> GitHubCaBundlePem(const GitHubSettings& github);

struct QueueSettings {
  std::string uri;
  int max_receive_count = 5;           // receives before a message is dead-lettered
  int visibility_timeout_seconds = 0;  // 0 = launch timeout + 60 s
};

// launcher.fairShare (issue 56, item 4; docs/runner-set-fair-share.md): how the cap's seats are
// shared between the repositories whose jobs wait for one. Round robin by repository: a free seat
// goes to the waiting repository holding the fewest seats for its weight; `max` bounds one
// repository's seats (0: none).
// `runner_group_id` (runnerGroupId; 0: github.runnerGroupId) is the runner group the
// repository's launches register their runners in: at organisation or enterprise scope, one whose
// repository access is that repository alone, so that no other repository's older job takes the
// runner its seat was dealt for (docs/runner-set-fair-share.md).
struct FairShareRepository {
  double weight = 1;
  int max = 0;
  int64_t runner_group_id = 0;
};
struct FairShareSettings {
  bool enabled = true;
  std::map<std::string, FairShareRepository> repositories;  // by "owner/name"; others: weight 1
  // The runner group a launch for `repository` registers its runner in: the repository's
  // runnerGroupId (names compared case-insensitively, as GitHub does), else `fallback`.
  int64_t RunnerGroupOf(const std::string& repository, int64_t fallback) const;
};
Status ParseFairShare(const nlohmann::json& j, FairShareSettings& out);  // config_fair_share.cpp

struct LauncherSettings {
  int concurrency = 50;               // launches in flight; each holds one through its VM's boot
  int launch_timeout_seconds = 300;   // one launch, from claim to a delivered runner
  int claim_takeover_seconds = 0;     // 0 = twice the launch timeout
  int defer_seconds = 10;             // how long a deferred launch waits before it is retried
  double run_microvm_per_second = 5;  // RunMicrovm pace, set-wide (the platform's rate is 5/s)
  // JIT configs a minute, set-wide, per GitHub App (GitHub's limit seen: 166-180 a minute).
  int jit_configs_per_minute = 160;
  // How often, at most, the cap's seats are reconciled with a listing of the set's VMs, across
  // the set's processes (cap_ledger.h).
  int cap_reconcile_seconds = 60;
  std::string execution_role_arn;  // "" = no role (the default)
  FairShareSettings fair_share;
};

// The janitor (001, duty 6): a sweep on a schedule inside `mvr serve`.
struct JanitorSettings {
  int interval_seconds = 60;           // time between sweeps; 0 turns the janitor off
  int strikes = 2;                     // sweeps a VM must look stranded in before it is reaped
  int grace_seconds = 300;             // a VM younger than this is never suspect
  int keep_image_versions = 2;         // inactive image versions kept beside the active ones
  bool prune_image_versions = true;    // delete older image versions of the classes' images
  bool recover_stuck_launches = true;  // re-launch queued jobs that never got their runner
  int stuck_launch_seconds = 120;      // how long a job may wait queued before it is recovered
  // At organisation scope, the queued runs of every repository the set can see are scanned at
  // start-up, after a failed webhook delivery, and every this many sweeps (janitor_discover.cpp).
  int scan_every_sweeps = 10;
  // Issue 55, items 4 and 5 (runnerset/lifecycle, docs/runner-set-lost-jobs.md). A job whose VM
  // was lost while it ran is re-run once through GitHub (needs `actions: write`) when it had run
  // for less than rerunMaxMinutes; off by default.
  bool rerun_lost_jobs = false;
  int rerun_max_minutes = 60;
  // A runner whose supervisor says it has not begun a job this long after it started (or whose
  // process exited without one) is wedged: deregistered, its VM ended, its job launched again
  // when still queued. 0 turns it off.
  int wedged_runner_seconds = 0;
};

// The warm-pool sweeper (warm_pool_sweeper.h): keeps each class's pool of suspended VMs at its
// warmPoolSize, on its own schedule inside `mvr serve`.
struct WarmPoolSettings {
  int interval_seconds = 30;         // time between sweeps; 0 turns the sweeper off
  int replace_before_seconds = 900;  // a member this close to its maximum duration is replaced
  int boot_timeout_seconds = 300;    // a pre-boot not suspended by then is abandoned
};

// Hot pools (hotPoolSize): how long a parked runner may wait for a job. GitHub collects idle JIT
// registrations long before the day it documents for offline ephemeral runners: listening ones
// within 2-6 min, one after ~51 min (issue 55; docs/runner-set-pools.md, "Registration
// expiry"). 45 min stays under every figure reported for a registration that had connected; a
// member whose registration went sooner is recycled when a launch finds it (launcher_warm.cpp).
struct HotPoolSettings {
  int max_age_seconds = 45 * 60;  // a hot member older than this is retired
};

struct ServeConfig {
  std::string runner_set_id;
  std::string listen = "127.0.0.1:8080";
  // The status routes (GET /, /status, /timeline, /metrics) listen here, never on `listen`
  // (issue 53, item 1). Unset: 127.0.0.1 on the port after listen's (port 0 when listen's is 0).
  std::string status_listen;
  // A file holding a token the status routes (but /healthz) then ask for as
  // "Authorization: Bearer TOKEN"; "" asks for none.
  std::string status_token_file;
  std::string region;
  GitHubSettings github;
  std::vector<RunnerClass> classes;
  int max_concurrent_vms = 20;
  std::string store;
  QueueSettings queue;
  std::string runner_name_prefix;  // default "mvr-<runnerSetId>_" (runner_name.h)
  LauncherSettings launcher;
  size_t max_webhook_body_bytes = 1 << 20;
  int shutdown_grace_seconds = 30;
  // Reserved concurrency deploy/bootstrap.sh gives the Lambda functions (`lambda`; read by
  // bootstrap, unused by `mvr serve`; docs/lambda.md says why these defaults).
  int webhook_reserved_concurrency = 10;
  int launcher_reserved_concurrency = 10;
  JanitorSettings janitor;
  WarmPoolSettings warm_pool;
  HotPoolSettings hot_pool;

  // The class whose label equals `label` (case-insensitively, as GitHub compares labels).
  const RunnerClass* FindClass(std::string_view label) const;
  // The first class that takes a job asking for `job_labels` (RunnerClass::Takes); nullptr: none.
  const RunnerClass* ClassForJob(const std::vector<std::string>& job_labels) const;
  // The class whose scale set GitHub gives a job asking for `job_labels`: with a source that
  // uses scale sets, a job asking for exactly one label, a class's (GitHub routes a job to a
  // scale set when its runs-on is the set's name); nullptr otherwise. Such a job is left to the
  // set's listener by the webhook intake and the janitor (config_source.cpp).
  const RunnerClass* ScaleSetClassOf(const std::vector<std::string>& job_labels) const;
  Duration visibility_timeout() const;
  Duration claim_takeover_after() const;
  Duration launch_timeout() const { return Duration(launcher.launch_timeout_seconds * 1000LL); }
  // How long a deferred intent waits before it is tried again (launcher.deferSeconds).
  Duration defer_delay() const { return Duration(launcher.defer_seconds * 1000LL); }
  // Whether any class keeps a warm or hot pool (the sweeper runs only then).
  bool any_pool() const;
  // A hot member of `cls` is retired this long after it was created: hotPool.maxAgeSeconds, and
  // never beyond its VM's maximum duration less warmPool.replaceBeforeSeconds.
  Duration hot_member_max_age(const RunnerClass& cls) const;
};

// Every classes[].fallbackClass names another configured class, and following them never comes
// back to where it started: InvalidArgument naming the class otherwise (config_fallback.cpp).
Status CheckFallbackClasses(const ServeConfig& config);
// github.allowedRepositories: only at organisation scope, each "name" or "<org>/name"; stored as
// "<org>/name"; at enterprise scope each "<org>/name" of one of github.organizations
// (config_labels.cpp).
Status CheckAllowedRepositories(GitHubSettings& github);
// github.enterprise: a valid slug with github.organizations, a personal access token and no
// hookId; github.organizations only with it (config_labels.cpp).
Status CheckEnterprise(const GitHubSettings& github);
// classes[].architecture: "" or "arm64"; no class label or classes[].labels entry naming another
// architecture or OS (config_labels.cpp). `key`: "classes[N]".
Status CheckArchitecture(const RunnerClass& cls, const std::string& key);

// Where the set registers its runners: the repository, the organisation or the enterprise.
github::RunnerScope RunnerScopeOf(const ServeConfig& config);
// The GitHub URL of that scope, as the scale-set API's registration takes it
// (https://github.com/OWNER/REPO, .../ORG, .../enterprises/SLUG): github.com's for
// api.github.com, a GHES host's for its /api/v3, else apiUrl itself (an emulator).
std::string ScaleSetConfigUrl(const GitHubSettings& github);
// InvalidArgument naming github.source unless it is `webhook`: what a deployment with no scale-set
// listener (`where`: "on Lambda") must refuse, lest a scale set's jobs wait for none.
Status CheckWebhookSourceOnly(const ServeConfig& config, const std::string& where);

// Parses and checks a configuration file's text. `origin` names the file in messages.
Result<ServeConfig> ParseServeConfig(std::string_view text, const std::string& origin);

// The secrets the configuration points at, read from their files (trailing newlines removed).
struct ServeSecrets {
  Secret webhook_secret;
  std::optional<Secret> pat;
  std::optional<Secret> app_private_key;  // the first App's
  std::vector<Secret> app_private_keys;   // every App's, in the order of github.apps
  std::optional<Secret> status_token;     // statusTokenFile's, when set
};
Result<ServeSecrets> LoadSecrets(const ServeConfig& config);
// statusTokenFile's token (nullopt when unset): what `mvr status` sends.
Result<std::optional<Secret>> ReadStatusToken(const ServeConfig& config);
// The GitHub credential alone (the PAT, else the private key of github.apps[app]), read again
// from its file: how `mvr serve` picks up a secret fixed while GitHub refuses the old one,
// without a restart.
Result<Secret> ReadGitHubCredential(const ServeConfig& config, size_t app = 0);
// The key the set derives its pool members' control nonces from: its GitHub credential (the PAT,
// else the App's private key), the one secret every process that launches or delivers holds.
// Rotating it leaves existing pool members' nonces underivable: they are refused and replaced.
Secret ControlKeyOf(const ServeSecrets& secrets);

}  // namespace mvr::runnerset
