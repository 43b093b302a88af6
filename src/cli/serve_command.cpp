// `mvr serve --config FILE`: one runner set on this machine (webhook → queue → launcher →
// MicroVM → terminate). The MicroVMs endpoint, region and credentials come from the usual AWS
// settings (AWS_ENDPOINT_URL_LAMBDA_MICROVMS, AWS_REGION, profiles), as for `mvr start`; secrets
// only from the files the configuration names. Prints "mvr serve status on URL" (the status
// routes' listener) and then "mvr serve listening on URL" (the webhook's) once it serves;
// SIGTERM/SIGINT stop it cleanly (intents not finished stay on the queue).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "base/files.h"
#include "base/host_port.h"
#include "base/json_text.h"
#include "base/stop_signals.h"
#include "cli/commands.h"
#include "cli/runnerset_wiring.h"
#include "http/curl_client.h"
#include "runnerset/metrics/rate_budget_metrics.h"
#include "runnerset/ops/status.h"
#include "runnerset/ops/status_page.h"
#include "runnerset/serve/server.h"

namespace mvr::cli {
namespace {

// The set's clients: those `mvr serve` runs on, and `mvr status --html` reads.
Result<std::unique_ptr<RunnerSetWiring>> Wire(Context& ctx, runnerset::ServeConfig& config,
                                              const runnerset::ServeSecrets& secrets) {
  std::unique_ptr<RunnerSetWiring> w =
      NewRunnerSetWiring(ctx, config, std::make_unique<http::CurlHttpClient>());
  MVR_RETURN_IF_ERROR(WireMicrovms(ctx, config, *w));
  MVR_RETURN_IF_ERROR(ResolveRunnerClasses(ctx, config, *w));
  MVR_RETURN_IF_ERROR(WireGitHub(ctx, config, secrets, *w, [&config](size_t app) {
    return runnerset::ReadGitHubCredential(config, app);
  }));
  MVR_RETURN_IF_ERROR(WireStore(ctx, config, *w));
  MVR_RETURN_IF_ERROR(WireQueue(ctx, config, *w));
  return w;
}

int RunServe(Context& ctx, const std::string& config_path) {
  auto fail = [&](const Status& s) {
    std::cerr << "mvr serve: " << s.message() << std::endl;
    return 2;
  };
  Result<std::string> text = ReadFile(config_path, "--config");
  if (!text.ok()) return fail(text.status());
  Result<runnerset::ServeConfig> config = runnerset::ParseServeConfig(*text, config_path);
  if (!config.ok()) return fail(config.status());
  Result<runnerset::ServeSecrets> secrets = runnerset::LoadSecrets(*config);
  if (!secrets.ok()) return fail(secrets.status());
  ctx.logger.redactor().Add(secrets->webhook_secret);
  if (secrets->pat) ctx.logger.redactor().Add(*secrets->pat);
  for (const Secret& key : secrets->app_private_keys) ctx.logger.redactor().Add(key);
  if (secrets->status_token) ctx.logger.redactor().Add(*secrets->status_token);
  // Before any thread starts, so that only Wait below sees the stop signals.
  StopSignals stop;
  Result<std::unique_ptr<RunnerSetWiring>> w = Wire(ctx, *config, *secrets);
  if (!w.ok()) return fail(w.status());
  runnerset::ServerDeps deps{ctx.seam(),
                             (*w)->http,
                             *(*w)->microvms,
                             *(*w)->github,
                             *(*w)->store,
                             *(*w)->queue,
                             runnerset::ControlKeyOf(*secrets),
                             secrets->status_token,
                             (*w)->scale_sets.get()};
  auto server = std::make_unique<runnerset::Server>(*config, secrets->webhook_secret, deps);
  Result<int> port = server->Start();
  if (!port.ok()) return fail(port.status().Annotate("listen"));
  // The status line first: who waits for "listening" finds both.
  std::cout << "mvr serve status on " << server->status_url() << std::endl;
  std::cout << "mvr serve listening on " << server->url() << std::endl;
  ctx.logger.Info("runner set serving", {{"url", server->url()},
                                         {"status_url", server->status_url()},
                                         {"runner_set_id", config->runner_set_id}});
  const int sig = stop.Wait();
  ctx.logger.Info("mvr serve stopping", {{"signal", sig}});
  if (!server->Stop()) {
    // Launches still running: their messages come back from the queue after the visibility
    // timeout, and their claims are taken over once old enough. Leave without unwinding them.
    ctx.logger.Warn("stopping with launches still running; the queue will redeliver them");
    std::fflush(nullptr);
    std::_Exit(0);
  }
  return 0;
}

// `mvr status --html FILE`: the status page read from the set's own store, MicroVMs and GitHub
// (the same sources as `mvr serve`'s GET /), so it works where no daemon runs (the Lambda
// deployment, or a daemon that is down). The janitor's sweeps and the finished jobs come from the
// store's history; what only a running daemon knows (runners seen coming online) is absent.
int RunStatusHtml(Context& ctx, runnerset::ServeConfig config, const std::string& html) {
  auto fail = [&](const Status& s) {
    std::cerr << "mvr status: " << s.message() << std::endl;
    return 2;
  };
  Result<runnerset::ServeSecrets> secrets = runnerset::LoadSecrets(config);
  if (!secrets.ok()) return fail(secrets.status());
  ctx.logger.redactor().Add(secrets->webhook_secret);
  if (secrets->pat) ctx.logger.redactor().Add(*secrets->pat);
  for (const Secret& key : secrets->app_private_keys) ctx.logger.redactor().Add(key);
  Result<std::unique_ptr<RunnerSetWiring>> wired = Wire(ctx, config, *secrets);
  if (!wired.ok()) return fail(wired.status());
  RunnerSetWiring* w = wired->get();
  runnerset::RunnerTable table(*w->store, ctx.seam(), runnerset::RunnerTable::Options{});
  runnerset::WarmPoolTable pool(*w->store, ctx.seam());
  runnerset::ClassHealth health(ctx.seam().clock, &table);
  runnerset::ArrivalHistory arrivals(*w->store, ctx.seam());
  runnerset::StatusReportInputs in = runnerset::GatherStatusReport(
      config,
      runnerset::StatusReportSources{*w->microvms, *w->github, table, pool, &health, w->queue.get(),
                                     &arrivals},
      ctx.seam().clock.Now());
  nlohmann::json status = runnerset::BuildStatusReport(config, in);
  status["githubRateLimit"] = runnerset::RateBudgetStatusJson(w->github->RateBudgetNow());
  if (Status s = WriteFileAtomically(html, runnerset::RenderStatusPage(status, 0), "--html");
      !s.ok()) {
    return fail(s);
  }
  std::cout << "mvr status: wrote " << html << " (" << status["jobsInFlight"].size()
            << " jobs in flight, " << status["finishedJobs"].size() << " finished)" << std::endl;
  return in.errors.empty() ? 0 : 1;
}

// `mvr status`: asks the running `mvr serve` of the configuration (its statusListen address) for
// GET /status and prints it, as text or (--json) as it came.
int RunStatus(Context& ctx, const std::string& config_path, bool as_json, const std::string& html) {
  auto fail = [&](const Status& s) {
    std::cerr << "mvr status: " << s.message() << std::endl;
    return 2;
  };
  Result<std::string> text = ReadFile(config_path, "--config");
  if (!text.ok()) return fail(text.status());
  Result<runnerset::ServeConfig> config = runnerset::ParseServeConfig(*text, config_path);
  if (!config.ok()) return fail(config.status());
  if (!html.empty()) return RunStatusHtml(ctx, *config, html);
  Result<HostPort> listen = ParseHostPort(config->status_listen, "statusListen");
  if (!listen.ok()) return fail(listen.status());
  if (listen->port == 0) {
    return fail(InvalidArgument("statusListen: " + config->status_listen +
                                " lets mvr serve pick any port, so mvr status cannot find it; "
                                "set a fixed port (or use --html)"));
  }
  std::string host = listen->host;
  if (host == "0.0.0.0" || host.empty()) host = "127.0.0.1";
  if (host == "::") host = "::1";
  const bool v6 = host.find(':') != std::string::npos;
  const std::string url =
      "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(listen->port) + "/status";
  Result<std::optional<Secret>> token = runnerset::ReadStatusToken(*config);
  if (!token.ok()) return fail(token.status());
  http::CurlHttpClient client;
  http::HttpRequest req;
  req.url = url;
  if (*token) req.headers.Set("Authorization", "Bearer " + (*token)->Reveal());
  req.timeout = Duration(30'000);
  Result<http::HttpResponse> res = client.Send(req);
  if (!res.ok() || res->status != 200) {
    return fail(InvalidArgument(
        "mvr serve does not answer at " + url + " (" +
        (res.ok() ? "HTTP " + std::to_string(res->status) : res.status().message()) +
        "); is it running with this configuration?"));
  }
  nlohmann::json status = nlohmann::json::parse(res->body, nullptr, false);
  if (status.is_discarded()) return fail(Internal("GET " + url + " answered something not JSON"));
  (void)ctx;
  std::cout << (as_json ? JsonText(status, 2) + "\n" : runnerset::RenderStatusReportText(status));
  return 0;
}

}  // namespace

void AddServeCommand(CLI::App& app, Context& ctx) {
  auto* serve = app.add_subcommand(
      "serve", "Run a runner set on this machine: webhook → queue → launcher → MicroVM");
  auto config = std::make_shared<std::string>();
  serve->add_option("--config", *config, "the runner set's JSON (docs/runner-set-config.md)")
      ->required();
  serve->callback([&ctx, config] { ctx.exit_code = RunServe(ctx, *config); });

  auto* status = app.add_subcommand(
      "status", "Show a running runner set: pools, VMs, jobs in flight, the last janitor sweep");
  auto status_config = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  status->add_option("--config", *status_config, "the configuration `mvr serve` runs with")
      ->required();
  status->add_flag("--json", *as_json, "print GET /status's JSON as it is");
  auto html = std::make_shared<std::string>();
  status
      ->add_option("--html", *html,
                   "write the status page to FILE, read from the set's store, MicroVMs and "
                   "GitHub (works without a running mvr serve, and for the Lambda deployment)")
      ->excludes("--json");
  status->callback([&ctx, status_config, as_json, html] {
    ctx.exit_code = RunStatus(ctx, *status_config, *as_json, *html);
  });
}

}  // namespace mvr::cli
