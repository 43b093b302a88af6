#include "cli/runnerset_wiring.h"

#include "aws/signing/credentials_profile.h"
#include "aws/signing/endpoints.h"
#include "cli/http_client_factory.h"
#include "queue/open_queue.h"
#include "runnerset/classes/class_resolve.h"
#include "store/open_store.h"

namespace mvr::cli {

std::unique_ptr<RunnerSetWiring> NewRunnerSetWiring(Context& ctx,
                                                    const runnerset::ServeConfig& config,
                                                    std::unique_ptr<http::HttpClient> http) {
  auto w = std::make_unique<RunnerSetWiring>(std::move(http));
  if (!config.region.empty()) w->region = config.region;
  w->credentials = std::make_unique<aws::DefaultCredentialsChain>(ctx.env, w->http, ctx.clock);
  return w;
}

Status WireMicrovms(Context& ctx, const runnerset::ServeConfig&, RunnerSetWiring& w) {
  aws::SharedConfig shared = aws::LoadSharedConfig(ctx.env);
  MVR_ASSIGN_OR_RETURN(
      aws::ServiceEndpoint endpoint,
      aws::ResolveEndpoint(aws::AwsService::kLambdaMicrovms, ctx.env, shared, w.region));
  aws::MicrovmsClientOptions mo;
  mo.endpoint = endpoint;
  w.microvms = std::make_unique<aws::MicrovmsClient>(
      mo, aws::MicrovmsClientDeps{w.http, *w.credentials, ctx.seam()});
  w.microvms_region = endpoint.region;
  return Status::Ok();
}

Status ResolveRunnerClasses(Context& ctx, runnerset::ServeConfig& config, RunnerSetWiring& w) {
  if (!w.microvms) return Internal("the MicroVMs client is not wired");
  return runnerset::ResolveClasses(config, ctx.seam(), *w.microvms,
                                   w.region.value_or(w.microvms_region));
}

Status WireGitHub(Context& ctx, const runnerset::ServeConfig& config,
                  const runnerset::ServeSecrets& secrets, RunnerSetWiring& w,
                  std::function<Result<Secret>(size_t app)> reload) {
  std::vector<github::GitHubAuth> auths;
  if (secrets.pat) {
    auths.push_back(github::GitHubAuth::Token(*secrets.pat));
  } else {
    if (secrets.app_private_keys.size() != config.github.apps.size()) {
      return Internal("the GitHub Apps' keys were not all read");
    }
    for (size_t i = 0; i < config.github.apps.size(); ++i) {
      github::AppCredentials app;
      app.app_id = config.github.apps[i].app_id;
      app.installation_id = config.github.apps[i].installation_id;
      app.private_key_pem = secrets.app_private_keys[i];
      auths.push_back(github::GitHubAuth::App(std::move(app)));
    }
  }
  github::GitHubClientOptions go;
  go.rest.base_url = config.github.api_url;
  go.jitter = &ctx.seam().random;
  go.random = &ctx.seam().secure_random;  // jti: unique across processes and clones
  go.sleeper = &ctx.seam().sleeper;
  // A GitHub Enterprise Server signed by a private CA gets a client of its own that trusts it;
  // AWS's endpoints keep the system's CAs alone.
  MVR_ASSIGN_OR_RETURN(std::string ca_pem, runnerset::GitHubCaBundlePem(config.github));
  if (!ca_pem.empty()) w.github_http = NewHttpClient("", ca_pem);
  http::HttpClient& http = w.github_http ? *w.github_http : w.http;
  std::vector<github::GitHub*> apps;
  for (size_t i = 0; i < auths.size(); ++i) {
    if (reload) auths[i].reload = [reload, i] { return reload(i); };
    MVR_ASSIGN_OR_RETURN(
        std::unique_ptr<github::GitHubClient> client,
        github::GitHubClient::Create(http, ctx.clock, std::move(auths[i]), go, &ctx.logger));
    apps.push_back(client.get());
    w.github_clients.push_back(std::move(client));
  }
  if (apps.size() > 1) {
    w.github_router = std::make_unique<github::MultiAppGitHub>(std::move(apps), ctx.clock);
    w.github = w.github_router.get();
  } else {
    w.github = w.github_clients.front().get();
  }
  if (config.github.uses_scale_sets()) {
    github::ScaleSetClientOptions so;
    so.api_base_url = config.github.api_url;
    so.config_url = runnerset::ScaleSetConfigUrl(config.github);
    w.scale_sets = std::make_unique<github::ScaleSetClient>(http, ctx.clock, *w.github,
                                                            runnerset::RunnerScopeOf(config), so);
  }
  return Status::Ok();
}

Status WireStore(Context& ctx, const runnerset::ServeConfig& config, RunnerSetWiring& w) {
  store::OpenDeps deps{ctx.seam(), ctx.env, w.http, *w.credentials, w.region};
  Result<std::unique_ptr<store::Store>> st = store::OpenStore(config.store, deps);
  if (!st.ok()) return st.status().Annotate("store");
  w.store = std::move(*st);
  return Status::Ok();
}

Status WireQueue(Context& ctx, const runnerset::ServeConfig& config, RunnerSetWiring& w) {
  store::OpenDeps deps{ctx.seam(), ctx.env, w.http, *w.credentials, w.region};
  queue::LocalQueueSettings qs;
  qs.max_receive_count = config.queue.max_receive_count;
  Result<std::unique_ptr<queue::Queue>> q = queue::OpenQueue(config.queue.uri, deps, qs);
  if (!q.ok()) return q.status().Annotate("queue");
  w.queue = std::move(*q);
  return Status::Ok();
}

}  // namespace mvr::cli
