// `mvr doctor --config FILE`: checks a runner set's configuration and what it depends on, in
// order, and prints each check as PASS, FAIL (with what to do) or NOT CHECKED (with why);
// runnerset/doctor/doctor.h says what each check reads. Exit 0 when every check passed, 1 when one
// failed, 3 when none failed but some could not be checked; --json prints the same as JSON.
// The clients are wired as `mvr serve` wires them (runnerset_wiring.h), step by step so that one
// failing leaves the others' checks, and the store only once its check passed: opening an SQLite
// store creates and migrates the file, which a check must not do.
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "aws/signing/endpoints.h"
#include "base/files.h"
#include "base/json_text.h"
#include "cli/commands.h"
#include "cli/runnerset_wiring.h"
#include "http/curl_client.h"
#include "runnerset/doctor/doctor.h"
#include "runnerset/doctor/doctor_canary.h"
#include "runnerset/doctor/doctor_checks.h"
#include "runnerset/doctor/doctor_connectors.h"

namespace mvr::cli {
namespace {

// The AWS clients only the doctor uses: STS, IAM, and DynamoDB/SQS for the table's and queue's
// descriptions. Each is built only when its endpoint resolves.
struct DoctorAwsClients {
  std::unique_ptr<aws::QueryProtocolClient> sts, iam;
  std::unique_ptr<aws::DynamoDbClient> dynamodb;
  std::unique_ptr<aws::SqsClient> sqs;
};

// Resolves the set's AWS endpoints ("aws settings") and builds the doctor's own AWS clients.
DoctorAwsClients WireDoctorAws(Context& ctx, const runnerset::ServeConfig& config,
                               RunnerSetWiring& w, runnerset::DoctorClients& clients,
                               runnerset::DoctorReport& report) {
  DoctorAwsClients out;
  const aws::SharedConfig shared = aws::LoadSharedConfig(ctx.env);
  auto resolve = [&](aws::AwsService s) {
    return aws::ResolveEndpoint(s, ctx.env, shared, w.region);
  };
  Result<aws::ServiceEndpoint> microvms = resolve(aws::AwsService::kLambdaMicrovms);
  if (!microvms.ok()) {
    report.Fail("aws settings", microvms.status().message(),
                "set `region` in the configuration or AWS_REGION");
    return out;
  }
  clients.region = microvms->region;
  report.Pass("aws settings", "region " + microvms->region + ", MicroVMs at " + microvms->url +
                                  " (" + microvms->source + ")");
  if (Result<aws::ServiceEndpoint> e = resolve(aws::AwsService::kSts); e.ok()) {
    out.sts = std::make_unique<aws::QueryProtocolClient>(*e, "2011-06-15", w.http, *w.credentials,
                                                         ctx.seam());
  }
  if (Result<aws::ServiceEndpoint> e = resolve(aws::AwsService::kIam); e.ok()) {
    out.iam = std::make_unique<aws::QueryProtocolClient>(*e, "2010-05-08", w.http, *w.credentials,
                                                         ctx.seam());
  }
  if (config.store.rfind("dynamodb:", 0) == 0) {
    if (Result<aws::ServiceEndpoint> e = resolve(aws::AwsService::kDynamoDb); e.ok()) {
      out.dynamodb = std::make_unique<aws::DynamoDbClient>(*e, w.http, *w.credentials, ctx.seam());
    }
  }
  if (config.queue.uri.rfind("sqs:", 0) == 0) {
    if (Result<aws::ServiceEndpoint> e = resolve(aws::AwsService::kSqs); e.ok()) {
      out.sqs = std::make_unique<aws::SqsClient>(*e, w.http, *w.credentials, ctx.seam());
    }
  }
  clients.sts = out.sts.get();
  clients.iam = out.iam.get();
  clients.dynamodb = out.dynamodb.get();
  clients.sqs = out.sqs.get();
  return out;
}

// The secret files and the GitHub client; a failure is the check's, never the run's.
void WireDoctorGitHub(Context& ctx, const runnerset::ServeConfig& config, RunnerSetWiring& w,
                      runnerset::DoctorReport& report) {
  Result<runnerset::ServeSecrets> secrets = runnerset::LoadSecrets(config);
  if (!secrets.ok()) {
    report.Fail("secret files", secrets.status().message(),
                "create the files the configuration names (github.webhookSecretFile, and "
                "github.patFile or github.privateKeyFile), readable by mvr");
    return;
  }
  ctx.logger.redactor().Add(secrets->webhook_secret);
  if (secrets->pat) ctx.logger.redactor().Add(*secrets->pat);
  for (const Secret& key : secrets->app_private_keys) ctx.logger.redactor().Add(key);
  report.Pass("secret files",
              std::string(config.github.uses_webhook() ? "the webhook secret and " : "") + "the " +
                  (secrets->pat ? "token" : "App's private key") + " are readable (not shown)");
  if (Status s = WireGitHub(ctx, config, *secrets, w, nullptr); !s.ok()) {
    report.Fail("github credentials", s.message(),
                "fix github.apiUrl or the credential's file (docs/runner-set-config.md)");
  }
}

struct CanaryFlags {
  bool run = false;
  runnerset::CanaryOptions options;
  int timeout_seconds = 900;
};

// The canary, once every check passed or could not be checked (a failed check names a broken
// assumption already; a VM launched on it would only fail the same way).
std::optional<runnerset::CanaryResult> Canary(Context& ctx, const runnerset::ServeConfig& config,
                                              const CanaryFlags& flags,
                                              runnerset::DoctorClients& clients,
                                              runnerset::DoctorReport& report) {
  if (report.ExitCode() == runnerset::kDoctorFailed) {
    report.NotChecked("canary", "a check failed above: fix it first, then run the canary");
    return std::nullopt;
  }
  if (clients.github == nullptr || clients.microvms == nullptr) {
    report.NotChecked("canary", "it needs the GitHub and MicroVMs clients (see above)");
    return std::nullopt;
  }
  runnerset::CanaryOptions options = flags.options;
  options.timeout = Duration(static_cast<int64_t>(flags.timeout_seconds) * 1000);
  runnerset::CanaryResult r = runnerset::RunCanary(
      config, options, runnerset::CanaryDeps{ctx.seam(), *clients.github, *clients.microvms});
  if (!r.passed) {
    const std::string at = r.segments.empty() ? "start" : r.segments.back().name;
    report.Fail("canary",
                "failed at " + at + ": " + (r.segments.empty() ? "" : r.segments.back().detail),
                r.likely_cause);
  }
  return r;
}

runnerset::DoctorReport Diagnose(Context& ctx, const std::string& config_path,
                                 const CanaryFlags& canary,
                                 std::optional<runnerset::CanaryResult>& canary_out) {
  runnerset::DoctorReport report;
  Result<runnerset::ServeConfig> config = [&]() -> Result<runnerset::ServeConfig> {
    MVR_ASSIGN_OR_RETURN(std::string text, ReadFile(config_path, "--config"));
    return runnerset::ParseServeConfig(text, config_path);
  }();
  if (!config.ok()) {
    report.Fail("config", config.status().message(),
                "fix " + config_path + " (docs/runner-set-config.md lists every key)");
    report.NotChecked("everything else", "the configuration is needed first");
    return report;
  }
  report.Pass("config", config_path + ": runner set " + config->runner_set_id + ", " +
                            std::to_string(config->classes.size()) +
                            (config->classes.size() == 1 ? " class" : " classes"));
  std::unique_ptr<RunnerSetWiring> w =
      NewRunnerSetWiring(ctx, *config, std::make_unique<http::CurlHttpClient>());
  runnerset::DoctorClients clients{ctx.seam(), ""};
  WireDoctorGitHub(ctx, *config, *w, report);
  if (!w->github_clients.empty()) clients.github = w->github_clients.front().get();
  clients.scale_sets = w->scale_sets.get();
  for (size_t i = 1; i < w->github_clients.size(); ++i) {
    clients.other_apps.push_back(w->github_clients[i].get());
  }
  runnerset::CheckGitHub(*config, clients, report);
  DoctorAwsClients aws_clients = WireDoctorAws(ctx, *config, *w, clients, report);
  // The images' runner versions are read from the store, so the store is checked first; its
  // lines still print after the images', in the documented order.
  runnerset::DoctorReport state;
  runnerset::CheckStoreAndQueue(*config, clients, state);
  // An SQLite file not there yet stays so: opening the store would create it.
  const bool absent =
      config->store.rfind("sqlite:", 0) == 0 && !std::filesystem::exists(config->store.substr(7));
  if (state.Passed("store") && !absent && WireStore(ctx, *config, *w).ok()) {
    clients.store = w->store.get();
  }
  if (report.Passed("aws settings") && WireMicrovms(ctx, *config, *w).ok()) {
    clients.microvms = w->microvms.get();
    // As `mvr serve` starts: the later reads name the images by ARN ("image arns" says why not).
    ResolveRunnerClasses(ctx, *config, *w).IgnoreError();
  }
  runnerset::CheckImages(*config, clients, report);
  runnerset::CheckImageArnsAndConnectors(*config, clients, report);
  report.Append(state);
  runnerset::CheckAws(*config, clients, report);
  for (const runnerset::DoctorCheck& check : runnerset::FirstDeploymentChecks()) {
    check.run(*config, clients, report);
  }
  if (canary.run) canary_out = Canary(ctx, *config, canary, clients, report);
  return report;
}

}  // namespace

void AddDoctorCommand(CLI::App& app, Context& ctx) {
  auto* doctor = app.add_subcommand(
      "doctor",
      "Check a runner set's configuration, GitHub credentials and webhook, images, store, "
      "queue and AWS permissions; exit 0 only when every check passes");
  auto config = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  auto canary = std::make_shared<CanaryFlags>();
  doctor->add_option("--config", *config, "the configuration `mvr serve` runs with")->required();
  doctor->add_flag("--json", *as_json, "print the checks as JSON");
  doctor->add_flag("--canary", canary->run,
                   "after the checks, run one real job end to end (a MicroVM, a JIT runner and "
                   "a workflow_dispatch of the canary workflow) and time each segment; it "
                   "cleans up after itself (docs/first-deployment.md)");
  doctor->add_option("--canary-class", canary->options.class_label,
                     "the class whose image the canary runs (default: the first)");
  doctor->add_option("--canary-repository", canary->options.repository,
                     "OWNER/NAME holding the canary workflow (default: github.repository)");
  doctor->add_option("--canary-workflow", canary->options.workflow,
                     "the canary workflow's file under .github/workflows (default "
                     "mvr-canary.yml: examples/workflows/mvr-canary.yml)");
  doctor->add_option("--canary-ref", canary->options.ref,
                     "the branch the canary workflow is on (default main)");
  doctor
      ->add_option("--canary-timeout-seconds", canary->timeout_seconds,
                   "how long the canary may take before its cleanup (default 900)")
      ->check(CLI::Range(10, 3 * 3600));
  doctor->callback([&ctx, config, as_json, canary] {
    std::optional<runnerset::CanaryResult> ran;
    runnerset::DoctorReport report = Diagnose(ctx, *config, *canary, ran);
    if (*as_json) {
      nlohmann::json doc = report.Json();
      if (ran) doc["canary"] = ran->Json();
      std::cout << JsonText(doc, 2) + "\n" << std::flush;
    } else {
      std::cout << report.Text() << (ran ? ran->Text() : "") << std::flush;
    }
    ctx.exit_code = report.ExitCode();
  });
}

}  // namespace mvr::cli
