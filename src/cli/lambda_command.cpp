// `mvr lambda`: the runner set as AWS Lambda functions (a custom runtime for provided.al2023;
// `bootstrap` runs it). The handler comes from _HANDLER (or --handler): webhook, launcher,
// janitor or warm-pool. The runner set's configuration is the JSON of `mvr serve`, from MVR_CONFIG
// (inline) or MVR_CONFIG_FILE; its secret keys may name a file, env:NAME or ssm:/path.
// Initialisation builds only what the handler needs and resolves its secrets once; a failure there
// goes to the Runtime API's /init/error. docs/lambda.md is the reference.
#include <unistd.h>

#include <iostream>
#include <memory>

#include "aws/services/ssm.h"
#include "aws/signing/credentials_profile.h"
#include "aws/signing/endpoints.h"
#include "base/files.h"
#include "cli/commands.h"
#include "cli/http_client_factory.h"
#include "cli/runnerset_wiring.h"
#include "lambda/handlers.h"
#include "lambda/lazy_secret.h"
#include "lambda/runtime_loop.h"
#include "lambda/secret_refs.h"
#include "runnerset/classes/class_health.h"
#include "runnerset/intake/delivery_ledger.h"
#include "runnerset/intake/webhook_endpoint.h"
#include "runnerset/serve/pool_sweepers.h"
#include "runnerset/table/runner_table.h"

namespace mvr::cli {
namespace {

struct InitError {
  const char* type;
  Status status;
};

Result<runnerset::ServeConfig> LoadConfig(const Environment& env) {
  std::optional<std::string> inline_config = env.Get("MVR_CONFIG");
  if (inline_config && !inline_config->empty()) {
    return runnerset::ParseServeConfig(*inline_config, "MVR_CONFIG");
  }
  std::string path = env.GetOr("MVR_CONFIG_FILE", "");
  if (path.empty()) {
    return InvalidArgument(
        "no configuration: set MVR_CONFIG to the runner set's JSON or MVR_CONFIG_FILE to a file "
        "holding it (docs/lambda.md)");
  }
  MVR_ASSIGN_OR_RETURN(std::string text, ReadFile(path, "MVR_CONFIG_FILE"));
  return runnerset::ParseServeConfig(text, path);
}

// The configuration, refused when its jobs come from scale sets: with `both` the webhook function
// would leave the sets' jobs to a listener that is not there, and they would wait forever.
Result<runnerset::ServeConfig> LoadLambdaConfig(const Environment& env) {
  MVR_ASSIGN_OR_RETURN(runnerset::ServeConfig config, LoadConfig(env));
  MVR_RETURN_IF_ERROR(runnerset::CheckWebhookSourceOnly(config, "on Lambda"));
  return config;
}

// The CA bundle for HTTPS. Debian's libcurl and OpenSSL (bundled in the package) look for Debian's
// path; Amazon Linux keeps its bundle elsewhere. MVR_CA_FILE overrides both.
std::string CaBundle(const Environment& env) {
  std::string file = env.GetOr("MVR_CA_FILE", "");
  if (!file.empty()) return file;
  constexpr char kDebian[] = "/etc/ssl/certs/ca-certificates.crt";
  constexpr char kAmazonLinux[] = "/etc/pki/tls/certs/ca-bundle.crt";
  if (::access(kDebian, R_OK) != 0 && ::access(kAmazonLinux, R_OK) == 0) return kAmazonLinux;
  return "";
}

// What a function keeps between invocations: the clients, the secrets and the handler.
struct Function {
  runnerset::ServeConfig config;
  std::unique_ptr<RunnerSetWiring> wiring;
  std::unique_ptr<aws::SsmClient> ssm;
  std::unique_ptr<lambda::LazySecret> webhook_secret;  // the webhook: read on its first POST
  std::unique_ptr<lambda::LazyWebhookRouter> router;
  std::unique_ptr<runnerset::DeliveryLedger> ledger;
  runnerset::Metrics metrics;
  std::unique_ptr<runnerset::RunnerTable> table;
  std::unique_ptr<runnerset::ClassHealth> health;  // kept in the table, shared by the functions
  std::unique_ptr<runnerset::Launcher> launcher;
  std::unique_ptr<runnerset::Janitor> janitor;
  std::unique_ptr<runnerset::WarmPoolTable> pool;
  std::unique_ptr<runnerset::ArrivalHistory> arrivals;
  std::unique_ptr<runnerset::PoolSweeper> sweeper;  // the warm and the hot pools'
  std::unique_ptr<lambda::Handler> handler;
};

Result<Secret> FetchSsm(Context& ctx, Function& fn, const std::string& name) {
  if (!fn.ssm) {
    aws::SharedConfig shared = aws::LoadSharedConfig(ctx.env);
    MVR_ASSIGN_OR_RETURN(
        aws::ServiceEndpoint endpoint,
        aws::ResolveEndpoint(aws::AwsService::kSsm, ctx.env, shared, fn.wiring->region));
    fn.ssm = std::make_unique<aws::SsmClient>(endpoint, fn.wiring->http, *fn.wiring->credentials,
                                              ctx.seam());
  }
  return fn.ssm->GetParameter(name);
}

// The webhook function: nothing is read from SSM at initialisation. The secret is read when the
// first POST needs it, kept, refreshed at most every 15 minutes, and a failed read backs off
// (lazy_secret.h: a flood of cold starts must not spend SSM's throughput). Deliveries it turned
// into intents are remembered in the set's table for a day (issue 53, item 13).
std::optional<InitError> InitWebhook(Context& ctx, const Seam& seam, Function& fn) {
  const std::string reference = fn.config.github.webhook_secret_file;
  if (reference.empty()) {
    return InitError{lambda::kSecretError,
                     InvalidArgument("github.webhookSecretFile: no secret is configured")};
  }
  // The configuration is checked now (with a stand-in secret): a mistake there is an init error,
  // not a 503 for every delivery.
  Result<runnerset::WebhookRouter> probe = runnerset::WebhookRouter::Create(
      runnerset::WebhookRouterConfigOf(fn.config, Secret("configuration-check")));
  if (!probe.ok()) return InitError{lambda::kConfigError, probe.status()};
  fn.webhook_secret = std::make_unique<lambda::LazySecret>(
      [&ctx, &fn, reference]() -> Result<Secret> {
        lambda::SecretResolver fresh(
            ctx.env, [&](const std::string& parameter) { return FetchSsm(ctx, fn, parameter); });
        Result<Secret> got = fresh.Resolve(reference, "github.webhookSecretFile");
        if (got.ok()) ctx.logger.redactor().Add(*got);
        return got;
      },
      seam.clock);
  fn.router = std::make_unique<lambda::LazyWebhookRouter>(
      runnerset::WebhookRouterConfigOf(fn.config, Secret()), *fn.webhook_secret);
  if (Status s = WireStore(ctx, fn.config, *fn.wiring); !s.ok()) {
    return InitError{lambda::kConfigError, s};
  }
  fn.ledger = std::make_unique<runnerset::DeliveryLedger>(*fn.wiring->store, seam.clock);
  fn.handler = std::make_unique<lambda::WebhookHandler>(*fn.router, *fn.wiring->queue, seam,
                                                        fn.ledger.get());
  return std::nullopt;
}

std::optional<InitError> Init(Context& ctx, const Seam& seam, const std::string& name,
                              Function& fn) {
  if (name != "webhook" && name != "launcher" && name != "janitor" && name != "warm-pool") {
    return InitError{lambda::kConfigError,
                     InvalidArgument("_HANDLER='" + name +
                                     "' is not a handler of mvr lambda: use webhook, launcher, "
                                     "janitor or warm-pool")};
  }
  Result<runnerset::ServeConfig> config = LoadLambdaConfig(ctx.env);
  if (!config.ok()) return InitError{lambda::kConfigError, config.status()};
  fn.config = std::move(*config);
  fn.wiring = NewRunnerSetWiring(ctx, fn.config, NewHttpClient(CaBundle(ctx.env)));
  if (Status s = WireQueue(ctx, fn.config, *fn.wiring); !s.ok()) {
    return InitError{lambda::kConfigError, s};
  }
  if (name == "webhook") return InitWebhook(ctx, seam, fn);
  lambda::SecretResolver resolver(
      ctx.env, [&](const std::string& parameter) { return FetchSsm(ctx, fn, parameter); });
  Result<runnerset::ServeSecrets> secrets =
      lambda::ResolveSecrets(fn.config, lambda::SecretNeeds::kGitHubCredentials, resolver);
  if (!secrets.ok()) return InitError{lambda::kSecretError, secrets.status()};
  if (secrets->pat) ctx.logger.redactor().Add(*secrets->pat);
  for (const Secret& key : secrets->app_private_keys) ctx.logger.redactor().Add(key);
  Status wired = WireMicrovms(ctx, fn.config, *fn.wiring);
  if (wired.ok()) wired = ResolveRunnerClasses(ctx, fn.config, *fn.wiring);
  if (wired.ok()) {
    // While GitHub refuses the credential, each probe reads it again (a fresh resolver: no
    // cache), so a rotated SSM parameter or file is picked up by a warm container.
    auto reload = [&ctx, &fn](size_t app) -> Result<Secret> {
      lambda::SecretResolver fresh(
          ctx.env, [&](const std::string& parameter) { return FetchSsm(ctx, fn, parameter); });
      const runnerset::GitHubSettings& g = fn.config.github;
      if (!g.pat_file.empty()) return fresh.Resolve(g.pat_file, "github.patFile");
      if (app >= g.apps.size()) return Internal("no GitHub App " + std::to_string(app));
      return fresh.Resolve(g.apps[app].private_key_file, g.AppKeyName(app));
    };
    wired = WireGitHub(ctx, fn.config, *secrets, *fn.wiring, reload);
  }
  if (wired.ok()) wired = WireStore(ctx, fn.config, *fn.wiring);
  if (!wired.ok()) return InitError{lambda::kConfigError, wired};
  runnerset::RunnerTable::Options table_options;
  table_options.takeover_after = fn.config.claim_takeover_after();
  fn.table = std::make_unique<runnerset::RunnerTable>(*fn.wiring->store, seam, table_options);
  fn.pool = std::make_unique<runnerset::WarmPoolTable>(*fn.wiring->store, seam);
  fn.arrivals = std::make_unique<runnerset::ArrivalHistory>(*fn.wiring->store, seam);
  fn.health = std::make_unique<runnerset::ClassHealth>(seam.clock, fn.table.get());
  if (name == "warm-pool") {
    fn.sweeper = std::make_unique<runnerset::PoolSweeper>(
        fn.config, runnerset::PoolSweeperDeps{seam,
                                              *fn.wiring->microvms,
                                              *fn.pool,
                                              fn.wiring->github,
                                              &fn.wiring->http,
                                              fn.table.get(),
                                              runnerset::ControlKeyOf(*secrets),
                                              fn.health.get(),
                                              runnerset::kDefaultHotSettle,
                                              {},
                                              fn.arrivals.get()});
    runnerset::AddPoolSweepers(*fn.sweeper);
    fn.handler = std::make_unique<lambda::PoolSweepHandler>(*fn.sweeper, fn.metrics);
    return std::nullopt;
  }
  if (name == "janitor") {
    fn.janitor = std::make_unique<runnerset::Janitor>(
        fn.config, runnerset::JanitorDeps{seam, *fn.wiring->microvms, *fn.wiring->github, *fn.table,
                                          *fn.wiring->queue, fn.metrics, fn.pool.get(),
                                          &fn.wiring->http, fn.health.get()});
    fn.handler = std::make_unique<lambda::JanitorHandler>(*fn.janitor, fn.metrics);
    return std::nullopt;
  }
  fn.launcher = std::make_unique<runnerset::Launcher>(
      fn.config, runnerset::LauncherDeps{seam, *fn.wiring->microvms, *fn.wiring->github,
                                         fn.wiring->http, *fn.table, fn.metrics, nullptr,
                                         fn.pool.get(), runnerset::ControlKeyOf(*secrets),
                                         fn.health.get(), true, fn.arrivals.get()});
  fn.handler = std::make_unique<lambda::LauncherHandler>(fn.config, *fn.launcher, fn.metrics,
                                                         *fn.wiring->queue, seam);
  return std::nullopt;
}

int RunLambda(Context& ctx, std::string handler_name, int max_invocations) {
  std::optional<std::string> endpoint = ctx.env.Get("AWS_LAMBDA_RUNTIME_API");
  if (!endpoint || endpoint->empty()) {
    std::cerr << "mvr lambda: AWS_LAMBDA_RUNTIME_API is not set: this runs as a Lambda custom "
                 "runtime (provided.al2023), where Lambda sets it"
              << std::endl;
    return 2;
  }
  if (handler_name.empty()) handler_name = ctx.env.GetOr("_HANDLER", "");
  std::unique_ptr<http::HttpClient> runtime_http = NewHttpClient("");
  lambda::RuntimeApi api(*endpoint, *runtime_http);
  Seam seam = ctx.seam();
  Function fn;
  if (std::optional<InitError> failed = Init(ctx, seam, handler_name, fn)) {
    const std::string message = failed->status.message();
    ctx.logger.Error("initialisation failed", {{"error_type", failed->type}, {"error", message}});
    Status reported = api.ReportInitError(lambda::FunctionError{failed->type, message});
    if (!reported.ok()) {
      ctx.logger.Error("reporting the init error failed", {{"error", reported.ToString()}});
    }
    return 1;
  }
  StreamSink metrics_out(stdout);
  lambda::LoopOptions options{handler_name, fn.config.runner_set_id, max_invocations};
  Status ended = lambda::RunLoop(api, *fn.handler, seam, metrics_out, options);
  if (!ended.ok()) {
    ctx.logger.Error("mvr lambda stopping", {{"error", ended.ToString()}});
    return 1;
  }
  return 0;
}

}  // namespace

void AddLambdaCommand(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand(
      "lambda", "Run as an AWS Lambda function of the runner set (custom runtime; docs/lambda.md)");
  auto handler = std::make_shared<std::string>();
  auto max = std::make_shared<int>(-1);
  cmd->add_option("--handler", *handler,
                  "webhook, launcher, janitor or warm-pool (default: $_HANDLER)");
  cmd->add_option("--max-invocations", *max,
                  "stop after this many invocations (benchmarks, tests; default: never)");
  cmd->callback([&ctx, handler, max] { ctx.exit_code = RunLambda(ctx, *handler, *max); });
}

}  // namespace mvr::cli
