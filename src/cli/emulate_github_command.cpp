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
#include "cli/emulate_github_flags.h"
#include "emulate/github/emulator.h"
#include "emulate/github/scaleset/scaleset_api.h"
#include "http/curl_client.h"
#include "process/process_runner.h"

namespace mvr::cli {
namespace {

namespace gh = mvr::emulate::github;

using github_flags::GithubFlags;
using github_flags::kHourMs;
using github_flags::kMonthSeconds;

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
  github_flags::AddCredentialFlags(*g, *gflags);
  github_flags::AddWebhookFlags(*g, *gflags);
  g->add_option("--rate-limit", gflags->rate_limit, "requests per hour per caller")
      ->capture_default_str();
  g->add_option("--secondary-limit", gflags->secondary_limit,
                "content-creating requests per minute per caller before 429 (0: off)")
      ->capture_default_str();
  github_flags::AddRateLimitFlags(*g, *gflags);
  github_flags::AddSchedulerFlags(*g, *gflags);
  github_flags::AddLostRunnerFlags(*g, *gflags);
  g->add_option("--record", gflags->record,
                "append each REST exchange and webhook delivery to FILE as JSON lines (for "
                "tests/contracts/github; holds tokens: a test artefact, never a log)");
  github_flags::AddFieldFaultFlags(*g, *gflags);
  github_flags::AddScaleSetFlags(*g, *gflags);
  g->add_option("--runner-arch", gflags->arch, "architecture label JIT runners get (X64, ARM64)")
      ->capture_default_str();
  g->callback([gflags, &ctx] { ctx.exit_code = RunGithub(*gflags, ctx); });
}

}  // namespace mvr::cli
