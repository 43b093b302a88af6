// `mvr serve --config FILE`: one runner set on this machine (webhook → queue → launcher →
// MicroVM → terminate). The MicroVMs endpoint, region and credentials come from the usual AWS
// settings (AWS_ENDPOINT_URL_LAMBDA_MICROVMS, AWS_REGION, profiles), as for `mvr start`; secrets
// only from the files the configuration names. Prints "mvr serve listening on URL" once it
// serves; SIGTERM/SIGINT stop it cleanly (intents not finished stay on the queue).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "aws/credentials_chain.h"
#include "aws/credentials_profile.h"
#include "aws/endpoints.h"
#include "aws/microvms_client.h"
#include "base/files.h"
#include "base/stop_signals.h"
#include "cli/commands.h"
#include "github/github_client.h"
#include "http/curl_client.h"
#include "queue/open_queue.h"
#include "runnerset/service.h"
#include "store/open_store.h"

namespace mvr::cli {
namespace {

struct Wiring {
  http::CurlHttpClient http;
  std::unique_ptr<aws::DefaultCredentialsChain> credentials;
  std::unique_ptr<aws::MicrovmsClient> microvms;
  std::unique_ptr<github::GitHubClient> github;
  std::unique_ptr<store::Store> store;
  std::unique_ptr<queue::Queue> queue;
};

Result<std::unique_ptr<Wiring>> Wire(Context& ctx, const runnerset::ServeConfig& config,
                                     const runnerset::ServeSecrets& secrets) {
  auto w = std::make_unique<Wiring>();
  aws::SharedConfig shared = aws::LoadSharedConfig(ctx.env);
  std::optional<std::string> region;
  if (!config.region.empty()) region = config.region;
  w->credentials = std::make_unique<aws::DefaultCredentialsChain>(ctx.env, w->http, ctx.clock);
  MVR_ASSIGN_OR_RETURN(
      aws::ServiceEndpoint endpoint,
      aws::ResolveEndpoint(aws::AwsService::kLambdaMicrovms, ctx.env, shared, region));
  aws::MicrovmsClientOptions mo;
  mo.endpoint = endpoint;
  w->microvms = std::make_unique<aws::MicrovmsClient>(
      mo, aws::MicrovmsClientDeps{w->http, *w->credentials, ctx.seam()});

  github::GitHubAuth auth;
  if (secrets.pat) {
    auth = github::GitHubAuth::Token(*secrets.pat);
  } else {
    github::AppCredentials app;
    app.app_id = config.github.app_id;
    app.installation_id = config.github.installation_id;
    app.private_key_pem = *secrets.app_private_key;
    auth = github::GitHubAuth::App(std::move(app));
  }
  github::GitHubClientOptions go;
  go.rest.base_url = config.github.api_url;
  MVR_ASSIGN_OR_RETURN(w->github,
                       github::GitHubClient::Create(w->http, ctx.clock, auth, go, &ctx.logger));

  store::OpenDeps deps{ctx.seam(), ctx.env, w->http, *w->credentials, region};
  Result<std::unique_ptr<store::Store>> st = store::OpenStore(config.store, deps);
  if (!st.ok()) return st.status().Annotate("store");
  w->store = std::move(*st);
  queue::LocalQueueSettings qs;
  qs.max_receive_count = config.queue.max_receive_count;
  Result<std::unique_ptr<queue::Queue>> q = queue::OpenQueue(config.queue.uri, deps, qs);
  if (!q.ok()) return q.status().Annotate("queue");
  w->queue = std::move(*q);
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
  // Before any thread starts, so that only Wait below sees the stop signals.
  StopSignals stop;
  Result<std::unique_ptr<Wiring>> w = Wire(ctx, *config, *secrets);
  if (!w.ok()) return fail(w.status());
  runnerset::ServiceDeps deps{ctx.seam(),    (*w)->http,   *(*w)->microvms,
                              *(*w)->github, *(*w)->store, *(*w)->queue};
  auto service = std::make_unique<runnerset::Service>(*config, secrets->webhook_secret, deps);
  Result<int> port = service->Start();
  if (!port.ok()) return fail(port.status().Annotate("listen"));
  std::cout << "mvr serve listening on " << service->url() << std::endl;
  ctx.logger.Info("runner set serving",
                  {{"url", service->url()}, {"runner_set_id", config->runner_set_id}});
  const int sig = stop.Wait();
  ctx.logger.Info("mvr serve stopping", {{"signal", sig}});
  if (!service->Stop()) {
    // Launches still running: their messages come back from the queue after the visibility
    // timeout, and their claims are taken over once old enough. Leave without unwinding them.
    ctx.logger.Warn("stopping with launches still running; the queue will redeliver them");
    std::fflush(nullptr);
    std::_Exit(0);
  }
  return 0;
}

}  // namespace

void AddServeCommand(CLI::App& app, Context& ctx) {
  auto* serve = app.add_subcommand(
      "serve", "Run a runner set on this machine: webhook → queue → launcher → MicroVM");
  auto config = std::make_shared<std::string>();
  serve->add_option("--config", *config, "the runner set's JSON configuration (docs/runner-set.md)")
      ->required();
  serve->callback([&ctx, config] { ctx.exit_code = RunServe(ctx, *config); });
}

}  // namespace mvr::cli
