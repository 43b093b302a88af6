// `mvr emulate github`: the GitHub emulator's server. Edge code: reads flags, files and the
// environment, builds the real seam objects' users, and handles SIGINT/SIGTERM.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "base/files.h"
#include "base/host_port.h"
#include "base/numbers.h"
#include "base/stop_signals.h"
#include "base/time_format.h"
#include "cli/commands.h"
#include "emulate/github/emulator.h"
#include "emulate/github/scaleset/scaleset_api.h"
#include "http/curl_client.h"
#include "process/process_runner.h"

namespace mvr::cli {
namespace {

namespace gh = mvr::emulate::github;

constexpr int64_t kHourMs = 3600LL * 1000;
constexpr int64_t kMonthSeconds = 30LL * 24 * 3600;

struct GithubFlags {
  std::string listen = "127.0.0.1:0";
  std::vector<std::string> repos;
  std::vector<std::string> orgs;
  std::string enterprise;
  std::vector<std::string> pats;
  std::string pat_file;
  // Several GitHub Apps: the k-th --app-id, --app-key-file and --installation-id go together.
  std::vector<int64_t> app_ids;
  std::vector<std::string> app_key_files;
  std::vector<int64_t> installation_ids;
  std::string webhook_url;
  std::string webhook_secret_file;
  std::string webhook_content_type = "json";
  std::vector<std::string> installation_permissions;  // NAME=LEVEL
  std::string installation_token_format = "stateless";
  int64_t rate_limit = 5000;
  int secondary_limit = 0;
  std::string rate_limits = "off";
  double rate_limit_time_scale = 1.0;
  std::vector<std::string> rate_limit_sets;  // NAME=N overrides of the secondary limits
  int64_t delay_min_ms = 0;
  int64_t delay_max_ms = 0;
  double loss = 0;
  double duplication = 0;
  double reorder = 0;
  int64_t reorder_delay_ms = 3000;
  int64_t queue_timeout_s = 24 * 3600;
  int64_t offline_after_s = 60;
  int64_t idle_expiry_s = 0;      // 0 = registrations never expire
  int64_t offline_expiry_s = 0;   // 0 = registrations never expire
  int64_t pickup_timeout_s = 60;  // 0 = a job stays with the runner it was handed to
  int64_t lost_runner_s = 600;    // 0 = a job whose runner went silent runs to its timeout
  double wedged_runners = 0;      // the runner picking up a job wedges with this probability
  int64_t tick_ms = 200;
  std::string arch = "ARM64";
  std::string record;
  double busy_lies = 0;
  std::string assignment = "oldest";
  double completed_loss = 0;
  int64_t approval_delay_s = 0;
  double foreign_deliveries = 0;
  int64_t foreign_installation_id = 999'001;
  std::string min_runner_version = gh::kGitHubMinRunnerVersion;  // GitHub refuses older runners
  std::string latest_runner_release;
  std::string latest_runner_released_at;  // RFC 3339
  std::vector<std::string> dispatch_workflows;
  gh::ScaleSetOptions scaleset;  // --scaleset-* (the runner scale-set API)
  int64_t scaleset_long_poll_ms = 50'000;
  int64_t scaleset_acquire_timeout_s = 60;
  int64_t scaleset_start_timeout_s = 300;
  int64_t scaleset_session_idle_s = 120;
  int64_t scaleset_message_delay_ms = 0;
};

Result<gh::RunnerVersionPolicy> VersionPolicy(const GithubFlags& f) {
  gh::RunnerVersionPolicy p;
  p.min_version = f.min_runner_version;
  p.latest_release = f.latest_runner_release;
  for (const std::string* v : {&p.min_version, &p.latest_release}) {
    if (!v->empty()) MVR_RETURN_IF_ERROR(gh::CheckRunnerVersion(*v));
  }
  if (!f.latest_runner_released_at.empty()) {
    MVR_ASSIGN_OR_RETURN(p.released_at, ParseRfc3339(f.latest_runner_released_at));
  }
  return p;
}

// `--rate-limit-set NAME=N`: one of GitHub's secondary limits set to N (0 turns it off).
Status ApplyLimitOverrides(const std::vector<std::string>& sets, gh::SecondaryLimits& limits) {
  const std::map<std::string, int gh::SecondaryLimits::*> names = {
      {"concurrent", &gh::SecondaryLimits::concurrent},
      {"endpoint_points_per_minute", &gh::SecondaryLimits::endpoint_points_per_minute},
      {"content_per_minute", &gh::SecondaryLimits::content_per_minute},
      {"content_per_hour", &gh::SecondaryLimits::content_per_hour},
      {"token_requests_per_hour", &gh::SecondaryLimits::token_requests_per_hour}};
  for (const std::string& set : sets) {
    const size_t eq = set.find('=');
    auto name = names.find(set.substr(0, eq));
    std::optional<int64_t> n =
        eq == std::string::npos
            ? std::nullopt
            : ParseInt64InRange(std::string_view(set).substr(eq + 1), 0, 1'000'000);
    if (name == names.end() || !n) {
      return InvalidArgument("--rate-limit-set '" + set +
                             "': want NAME=N with NAME one of concurrent, "
                             "endpoint_points_per_minute, content_per_minute, content_per_hour, "
                             "token_requests_per_hour and N from 0 (off) to 1000000");
    }
    limits.*(name->second) = static_cast<int>(*n);
  }
  return Status::Ok();
}

// The GitHub Apps: the k-th --app-id with the k-th --app-key-file and --installation-id. One App
// may leave out --installation-id (1); several must give one each.
Result<std::vector<gh::AppOptions>> Apps(const GithubFlags& f) {
  const size_t n = f.app_ids.size();
  const std::string pairing = " per --app-id, in the same order";
  if (f.app_key_files.size() < n) {
    return InvalidArgument("--app-id " + std::to_string(f.app_ids[f.app_key_files.size()]) +
                           " has no --app-key-file PEM; give one --app-key-file" + pairing);
  }
  if (f.app_key_files.size() > n) {
    return InvalidArgument("more --app-key-file than --app-id (" +
                           std::to_string(f.app_key_files.size()) + " and " + std::to_string(n) +
                           "); give one --app-key-file" + pairing);
  }
  if (n == 0 && !f.installation_ids.empty()) {
    return InvalidArgument("--installation-id names a GitHub App's installation; pass --app-id");
  }
  if (n == 1 && f.installation_ids.size() > 1) {
    return InvalidArgument("--installation-id is given " +
                           std::to_string(f.installation_ids.size()) +
                           " times for one GitHub App; an App has one installation");
  }
  if (n > 1 && f.installation_ids.size() != n) {
    return InvalidArgument(
        std::to_string(n) + " GitHub Apps but " + std::to_string(f.installation_ids.size()) +
        " --installation-id; with several Apps give one --installation-id" + pairing);
  }
  std::vector<gh::AppOptions> apps;
  for (size_t k = 0; k < n; ++k) {
    gh::AppOptions a;
    a.app_id = f.app_ids[k];
    MVR_ASSIGN_OR_RETURN(
        std::string pem,
        ReadFile(f.app_key_files[k], "--app-key-file (--app-id " + std::to_string(a.app_id) + ")"));
    a.private_key_pem = Secret(std::move(pem));
    a.installation_id = f.installation_ids.empty() ? 1 : f.installation_ids[k];
    apps.push_back(std::move(a));
  }
  return apps;
}

Result<gh::EmulatorOptions> BuildOptions(const GithubFlags& f) {
  gh::EmulatorOptions o;
  o.model.repositories = f.repos;
  o.model.organizations = f.orgs;
  if (!f.enterprise.empty() && f.orgs.empty()) {
    return InvalidArgument(
        "--enterprise: give its organisations with --org (the enterprise's "
        "runners serve their repositories)");
  }
  o.model.enterprise = f.enterprise;
  o.model.queue_timeout = Duration(f.queue_timeout_s * 1000);
  o.model.runner_offline_after = Duration(f.offline_after_s * 1000);
  o.model.registration_idle_expiry = Duration(f.idle_expiry_s * 1000);
  o.model.offline_registration_expiry = Duration(f.offline_expiry_s * 1000);
  o.model.assignment_pickup_timeout = Duration(f.pickup_timeout_s * 1000);
  o.model.scaleset = f.scaleset;
  o.model.scaleset.long_poll = Duration(f.scaleset_long_poll_ms);
  o.model.scaleset.acquire_timeout = Duration(f.scaleset_acquire_timeout_s * 1000);
  o.model.scaleset.start_timeout = Duration(f.scaleset_start_timeout_s * 1000);
  o.model.scaleset.session_idle_timeout = Duration(f.scaleset_session_idle_s * 1000);
  o.model.scaleset.message_delay = Duration(f.scaleset_message_delay_ms);
  o.model.lost_runner_fails_job_after = Duration(f.lost_runner_s * 1000);
  o.model.wedged_runners = f.wedged_runners;
  o.model.runner_arch = f.arch;
  o.model.dispatch_workflows = f.dispatch_workflows;
  o.model.runner_busy_lies = f.busy_lies;
  o.model.assignment = f.assignment;
  o.model.completed_webhook_loss = f.completed_loss;
  o.model.approval_delay = Duration(f.approval_delay_s * 1000);
  o.model.foreign_deliveries = f.foreign_deliveries;
  o.model.foreign_installation_id = f.foreign_installation_id;
  MVR_ASSIGN_OR_RETURN(o.model.runner_versions, VersionPolicy(f));
  for (const auto& p : f.pats) o.auth.pats.emplace_back(p);
  if (!f.pat_file.empty()) {
    MVR_ASSIGN_OR_RETURN(std::string text, ReadFile(f.pat_file, "--pat-file"));
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      line = std::string(TrimTrailingWhitespace(line));
      if (!line.empty()) o.auth.pats.emplace_back(line);
    }
  }
  MVR_ASSIGN_OR_RETURN(o.auth.apps, Apps(f));
  if (o.auth.pats.empty() && o.auth.apps.empty()) {
    return InvalidArgument(
        "no caller could authenticate; pass --pat/--pat-file or --app-id with --app-key-file");
  }
  for (const std::string& p : f.installation_permissions) {
    const size_t eq = p.find('=');
    if (eq == 0 || eq == std::string::npos || eq + 1 == p.size()) {
      return InvalidArgument("--installation-permission '" + p + "': want NAME=LEVEL");
    }
    o.auth.installation_permissions[p.substr(0, eq)] = p.substr(eq + 1);
  }
  MVR_ASSIGN_OR_RETURN(o.auth.installation_token_format,
                       gh::ParseInstallationTokenFormat(f.installation_token_format));
  o.model.hook_content_type = f.webhook_content_type;
  if (!f.webhook_url.empty()) {
    o.webhook_url = f.webhook_url;
    if (f.webhook_secret_file.empty()) {
      return InvalidArgument(
          "--webhook-url needs --webhook-secret-file (GitHub signs every delivery)");
    }
    MVR_ASSIGN_OR_RETURN(std::string secret,
                         ReadTrimmedFile(f.webhook_secret_file, "--webhook-secret-file"));
    o.model.webhook_secret = Secret(std::move(secret));
  }
  o.rate.limit_per_hour = f.rate_limit;
  o.rate.secondary_per_minute = f.secondary_limit;
  o.rate.github = f.rate_limits == "github";
  o.rate.time_scale = f.rate_limit_time_scale;
  MVR_RETURN_IF_ERROR(ApplyLimitOverrides(f.rate_limit_sets, o.rate.secondary));
  o.faults.delay_min = Duration(f.delay_min_ms);
  o.faults.delay_max = Duration(std::max(f.delay_min_ms, f.delay_max_ms));
  o.faults.loss = f.loss;
  o.faults.duplication = f.duplication;
  o.faults.reorder = f.reorder;
  o.faults.reorder_delay = Duration(f.reorder_delay_ms);
  o.tick_interval = Duration(f.tick_ms);
  return o;
}

int RunGithub(const GithubFlags& flags, Context& ctx) {
  auto fail = [&](const Status& s) {
    std::cerr << "mvr emulate github: " << s.message() << std::endl;
    return 2;
  };
  auto options = BuildOptions(flags);
  if (!options.ok()) return fail(options.status());
  auto listen = ParseHostPort(flags.listen, "--listen");
  if (!listen.ok()) return fail(listen.status());
  // The traffic record (for tests/contracts/github): appended to, one line per write() with a
  // buffer larger than any line, so that emulators sharing a file do not interleave lines.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> record_file(nullptr, &std::fclose);
  std::unique_ptr<StreamSink> record_sink;
  if (!flags.record.empty()) {
    record_file.reset(std::fopen(flags.record.c_str(), "a"));
    if (!record_file) {
      return fail(InvalidArgument("--record: cannot open " + flags.record +
                                  " for appending; does its directory exist?"));
    }
    std::setvbuf(record_file.get(), nullptr, _IOFBF, 8 << 20);
    record_sink = std::make_unique<StreamSink>(record_file.get());
    options->record = record_sink.get();
  }
  const Logger& logger = ctx.seam().logger;
  options->extra_routes = [&logger](http::Router& r, gh::GithubModel& m, gh::Authenticator& a) {
    return gh::AddScaleSetRoutes(r, m, a, logger);  // the runner scale-set API
  };
  StopSignals stop;  // before any thread starts
  http::CurlHttpClient client;
  auto emulator = gh::GithubEmulator::Create(std::move(*options), ctx.seam(), client);
  if (!emulator.ok()) return fail(emulator.status());
  auto url = (*emulator)->Start(listen->host, listen->port);
  if (!url.ok()) return fail(url.status());
  std::cout << "mvr emulate github listening on " << *url << std::endl;
  ctx.logger.Info("github emulator ready", {{"url", *url}});
  int sig = stop.Wait();
  ctx.logger.Info("github emulator stopping", {{"signal", sig}});
  (*emulator)->Stop();
  return 0;
}

// What breaks runner fleets in the field (issue 30): the faults GitHub's side can inject.
void AddFieldFaultFlags(CLI::App& g, GithubFlags& f) {
  g.add_option("--runner-busy-lies", f.busy_lies,
               "probability that a runner listing or GET says busy:false for a runner running a "
               "job (actions/runner #4422); a DELETE believes the same lie")
      ->check(CLI::Range(0.0, 1.0));
  g.add_option("--assignment", f.assignment,
               "which idle runner takes a queued job: oldest (the oldest matching runner, oldest "
               "job first) or random (any idle runner whose labels match, so a runner launched "
               "for one job may take another)")
      ->check(CLI::IsMember({"oldest", "random"}))
      ->capture_default_str();
  g.add_option("--completed-webhook-loss", f.completed_loss,
               "probability that a workflow_job completed delivery is dropped, never sent "
               "(actions/runner #4309)")
      ->check(CLI::Range(0.0, 1.0));
  g.add_option("--approval-delay-seconds", f.approval_delay_s,
               "a job queued with wait_for_environment is approved this long after it was queued "
               "(0: only POST /_emulator/jobs/{id}/approve approves it)")
      ->check(CLI::Range(int64_t{0}, int64_t{30} * 24 * 3600));
  g.add_option("--foreign-deliveries", f.foreign_deliveries,
               "probability that a delivery is followed by a copy as another installation's, of "
               "a repository and job this emulator does not have (RunsOn #509)")
      ->check(CLI::Range(0.0, 1.0));
  g.add_option("--foreign-installation-id", f.foreign_installation_id,
               "the installation.id those copies name")
      ->check(CLI::Range(int64_t{1}, INT64_MAX))
      ->capture_default_str();
  g.add_option("--min-runner-version", f.min_runner_version,
               "refuse runners older than this version (403 'Runner version vX is deprecated and "
               "cannot receive messages.', no job; actions/runner #4392; default 2.329.0, "
               "GitHub's own minimum; \"\" for none)");
  g.add_option("--dispatch-workflow", f.dispatch_workflows,
               "a workflow FILE every repository holds with workflow_dispatch, shaped as "
               "examples/workflows/mvr-canary.yml (input runner-label; one job runs-on "
               "[self-hosted, <runner-label>] and runs `true`): what `mvr doctor --canary` "
               "dispatches");
  g.add_option("--latest-runner-release", f.latest_runner_release,
               "the newest runner release: runners older than it get no job 30 days after "
               "--latest-runner-released-at");
  g.add_option("--latest-runner-released-at", f.latest_runner_released_at,
               "RFC 3339 time of --latest-runner-release (default: more than 30 days ago)");
}

// GitHub's secondary rate limits (issue 30, item 4).
// The runner scale-set API's limits and faults (docs/emulate-github.md, "Runner scale sets").
void AddScaleSetFlags(CLI::App& g, GithubFlags& f) {
  g.add_option("--scaleset-long-poll-ms", f.scaleset_long_poll_ms,
               "a GET of scale-set messages waits this long before answering 202")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{600'000}));
  g.add_option("--scaleset-acquire-timeout-seconds", f.scaleset_acquire_timeout_s,
               "a JobAvailable not acquired this long is offered again (a reassignment)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{86'400}));
  g.add_option("--scaleset-start-timeout-seconds", f.scaleset_start_timeout_s,
               "an acquired job no runner of the set started this long is offered again")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{86'400}));
  g.add_option("--scaleset-session-idle-seconds", f.scaleset_session_idle_s,
               "a scale-set session not polled this long ends (a new one may then be made)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{86'400}));
  g.add_option("--scaleset-lost-acknowledgements", f.scaleset.lost_acknowledgements,
               "probability a DELETE of a message answers 204 but the message stays")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  g.add_option("--scaleset-message-delay-ms", f.scaleset_message_delay_ms,
               "a scale-set message is visible only this long after it is made")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{3'600'000}));
  g.add_flag("--scaleset-replay-assigned", f.scaleset.replay_assigned_on_new_session,
             "a new session is told of the jobs its set acquired before (off: ARC #4027)");
}

void AddRateLimitFlags(CLI::App& g, GithubFlags& f) {
  g.add_option("--rate-limits", f.rate_limits,
               "github: also enforce GitHub's secondary limits (100 concurrent, 900 points a "
               "minute per endpoint, 80 content-creating requests a minute and 500 an hour, "
               "2000 installation tokens an hour)")
      ->capture_default_str()
      ->check(CLI::IsMember({"off", "github"}));
  g.add_option("--rate-limit-time-scale", f.rate_limit_time_scale,
               "every rate-limit window lasts this fraction of its length (0.01: a minute is "
               "0.6 s), for tests")
      ->capture_default_str()
      ->check(CLI::Range(0.0001, 1.0));
  g.add_option("--rate-limit-set", f.rate_limit_sets,
               "NAME=N: set one of GitHub's secondary limits (concurrent, "
               "endpoint_points_per_minute, content_per_minute, content_per_hour, "
               "token_requests_per_hour) to N, 0 for off (repeatable; with --rate-limits github)");
}

// Who may call: personal access tokens and GitHub Apps, with what their installations hold.
void AddCredentialFlags(CLI::App& g, GithubFlags& f) {
  g.add_option("--pat", f.pats, "accepted personal access token (repeatable; prefer --pat-file)");
  g.add_option("--pat-file", f.pat_file, "file with accepted personal access tokens, one a line");
  g.add_option("--app-id", f.app_ids,
               "GitHub App id whose JWTs are accepted (repeatable: several Apps, each with its "
               "own installation and rate-limit budgets)")
      ->check(CLI::PositiveNumber);
  g.add_option("--app-key-file", f.app_key_files,
               "PEM private key of that App (repeatable: the k-th goes with the k-th --app-id)");
  g.add_option("--installation-id", f.installation_ids,
               "that App's installation id (default 1 with one App; repeatable, and required "
               "for each --app-id when there are several)")
      ->check(CLI::PositiveNumber);
  g.add_option("--installation-token-format", f.installation_token_format,
               "what POST /app/installations/{id}/access_tokens issues: stateless (GitHub's "
               "~520-character ghs_ tokens with dots, since 2026-04) or classic (ghs_ + 36)")
      ->capture_default_str()
      ->check(CLI::IsMember({"stateless", "classic"}));
  g.add_option("--installation-permission", f.installation_permissions,
               "NAME=LEVEL: a permission the App's installation shows (repeatable; given, it "
               "replaces the default set: actions=read, administration=write, metadata=read, "
               "organization_self_hosted_runners=write)");
}

// Where workflow_job webhooks go and how they are signed and shaped.
void AddWebhookFlags(CLI::App& g, GithubFlags& f) {
  g.add_option("--webhook-url", f.webhook_url, "where workflow_job webhooks are delivered");
  g.add_option("--webhook-secret-file", f.webhook_secret_file, "file holding the webhook secret");
  g.add_option("--webhook-content-type", f.webhook_content_type,
               "the hook's content type: json, or form (payload=<URL-encoded JSON>)")
      ->capture_default_str()
      ->check(CLI::IsMember({"json", "form"}));
  g.add_option("--delivery-delay-min-ms", f.delay_min_ms, "minimum webhook delivery delay")
      ->check(CLI::Range(int64_t{0}, kHourMs));
  g.add_option("--delivery-delay-max-ms", f.delay_max_ms,
               "maximum webhook delivery delay (uniform in between)")
      ->check(CLI::Range(int64_t{0}, kHourMs));
  g.add_option("--delivery-loss", f.loss, "probability a webhook is never delivered")
      ->check(CLI::Range(0.0, 1.0));
  g.add_option("--delivery-duplication", f.duplication, "probability a webhook is delivered twice")
      ->check(CLI::Range(0.0, 1.0));
  g.add_option("--delivery-reorder", f.reorder,
               "probability a webhook is held back so later ones overtake it")
      ->check(CLI::Range(0.0, 1.0));
  g.add_option("--reorder-delay-ms", f.reorder_delay_ms, "how long a held-back webhook waits")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, kHourMs));
}

// The job scheduler: its period, and when queued jobs, idle runners and registrations expire.
void AddSchedulerFlags(CLI::App& g, GithubFlags& f) {
  g.add_option("--queue-timeout-seconds", f.queue_timeout_s, "jobs queued this long are cancelled")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, kMonthSeconds));
  g.add_option("--runner-offline-after-seconds", f.offline_after_s,
               "an idle runner silent this long shows offline")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, kMonthSeconds));
  g.add_option("--registration-idle-expiry-seconds", f.idle_expiry_s,
               "a runner listening (online, idle) this long without a job, or never connected "
               "this long after registering, loses its registration; 0 = never")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, kMonthSeconds));
  g.add_option("--offline-registration-expiry-seconds", f.offline_expiry_s,
               "a once-connected runner offline this long since its last contact loses its "
               "registration; 0 = never")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, kMonthSeconds));
  g.add_option("--assignment-pickup-timeout-seconds", f.pickup_timeout_s,
               "a job handed to a runner that has not picked it up this long goes back to the "
               "queue for another runner; 0 = never")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, kMonthSeconds));
  g.add_option("--tick-ms", f.tick_ms, "scheduler period")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{10}, kHourMs));
}

// Issue 55, items 4 and 5: runners lost mid-job and wedged runners (github_model_expiry.cpp).
void AddLostRunnerFlags(CLI::App& g, GithubFlags& f) {
  g.add_option("--lost-runner-fails-job-seconds", f.lost_runner_s,
               "a job in progress whose runner has made no contact this long fails (the runner "
               "lost communication: its VM failed or was terminated); 0 = never")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, kMonthSeconds));
  g.add_option("--wedged-runners", f.wedged_runners,
               "the runner picking up a job wedges with this probability: its worker never reads "
               "the job and it is heard from no more (actions/runner #4598)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
}

}  // namespace

void AddEmulateGithubCommands(CLI::App& emulate, Context& ctx) {
  auto gflags = std::make_shared<GithubFlags>();
  CLI::App* g = emulate.add_subcommand(
      "github", "Serve a local stand-in for GitHub's REST API, webhooks and job scheduler");
  g->add_option("--listen", gflags->listen, "HOST:PORT to serve on (port 0 picks one)");
  g->add_option("--repo", gflags->repos, "OWNER/NAME of a repository to serve (repeatable)")
      ->required();
  g->add_option("--org", gflags->orgs,
                "organisation whose runners serve its repositories (repeatable)");
  g->add_option("--enterprise", gflags->enterprise,
                "an enterprise (slug) holding every --org: its runners (personal access tokens "
                "only, as on GitHub) serve all their repositories");
  AddCredentialFlags(*g, *gflags);
  AddWebhookFlags(*g, *gflags);
  g->add_option("--rate-limit", gflags->rate_limit, "requests per hour per caller")
      ->capture_default_str();
  g->add_option("--secondary-limit", gflags->secondary_limit,
                "content-creating requests per minute per caller before 429 (0: off)")
      ->capture_default_str();
  AddRateLimitFlags(*g, *gflags);
  AddSchedulerFlags(*g, *gflags);
  AddLostRunnerFlags(*g, *gflags);
  g->add_option("--record", gflags->record,
                "append each REST exchange and webhook delivery to FILE as JSON lines (for "
                "tests/contracts/github; holds tokens: a test artefact, never a log)");
  AddFieldFaultFlags(*g, *gflags);
  AddScaleSetFlags(*g, *gflags);
  g->add_option("--runner-arch", gflags->arch, "architecture label JIT runners get (X64, ARM64)")
      ->capture_default_str();
  g->callback([gflags, &ctx] { ctx.exit_code = RunGithub(*gflags, ctx); });
}

}  // namespace mvr::cli
