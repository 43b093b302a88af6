// `mvr start`, `mvr stop` and `mvr sweep`: the Action's modes as commands. Inputs come from flags
// or from the INPUT_* variables the Actions runtime sets; the GitHub token only ever from the
// environment or a file, never from an argument (argument lists are world-readable).
#include <cstdio>
#include <map>
#include <memory>

#include "action/flags.h"
#include "action/github_output.h"
#include "action/inputs.h"
#include "action/start_stop.h"
#include "action/sweep.h"
#include "aws/microvms/microvms_client.h"
#include "aws/signing/credentials_chain.h"
#include "aws/signing/credentials_profile.h"
#include "aws/signing/endpoints.h"
#include "base/files.h"
#include "base/time_format.h"
#include "cli/commands.h"
#include "github/github_client.h"
#include "http/curl_client.h"
#include "store/open_store.h"

namespace mvr::cli {
namespace {

using FlagMap = std::map<std::string, std::string>;

// The clients a start or stop talks through, built from the environment like the AWS SDKs and
// the GitHub CLI do.
struct Clients {
  http::CurlHttpClient http;
  std::unique_ptr<aws::DefaultCredentialsChain> credentials;
  std::unique_ptr<aws::MicrovmsClient> microvms;
  std::unique_ptr<github::GitHubClient> github;
  std::unique_ptr<store::Store> pool_store;  // server pools (state-table) only
};

// `state_table`: the server pools' store URI, or "" for none.
Result<std::unique_ptr<Clients>> BuildClients(Context& ctx, const action::Endpoints& e,
                                              const std::string& state_table) {
  auto c = std::make_unique<Clients>();
  aws::SharedConfig config = aws::LoadSharedConfig(ctx.env);
  c->credentials = std::make_unique<aws::DefaultCredentialsChain>(ctx.env, c->http, ctx.clock);
  MVR_ASSIGN_OR_RETURN(
      aws::ServiceEndpoint endpoint,
      aws::ResolveEndpoint(aws::AwsService::kLambdaMicrovms, ctx.env, config, e.region));
  aws::MicrovmsClientOptions mo;
  mo.endpoint = endpoint;
  c->microvms = std::make_unique<aws::MicrovmsClient>(
      mo, aws::MicrovmsClientDeps{c->http, *c->credentials, ctx.seam()});
  github::GitHubClientOptions go;
  go.rest.base_url = e.github_api_url;
  MVR_ASSIGN_OR_RETURN(c->github, github::GitHubClient::Create(
                                      c->http, ctx.clock, github::GitHubAuth::Token(e.github_token),
                                      go, &ctx.logger));
  if (!state_table.empty()) {
    store::OpenDeps deps{ctx.seam(), ctx.env, c->http, *c->credentials, e.region};
    Result<std::unique_ptr<store::Store>> opened = store::OpenStore(state_table, deps);
    if (!opened.ok()) return opened.status().Annotate("input 'state-table'");
    c->pool_store = std::move(*opened);
  }
  return c;
}

// Fills the token from --github-token-file, then GITHUB_TOKEN, unless an INPUT_ gave one.
Status AddToken(Context& ctx, const std::string& token_file, FlagMap& flags) {
  if (!token_file.empty()) {
    MVR_ASSIGN_OR_RETURN(flags["github-token"], ReadTrimmedFile(token_file, "--github-token-file"));
    return Status::Ok();
  }
  action::InputReader probe(ctx.env, flags);
  if (!probe.Has("github-token")) flags["github-token"] = ctx.env.GetOr("GITHUB_TOKEN", "");
  return Status::Ok();
}

int Fail(Context& ctx, action::GitHubOutput& out, const std::string& mode, const Status& s) {
  // An annotation the Actions UI shows (escaped: a message may span lines), then the structured
  // log line.
  out.Error("mvr " + mode + " failed", ctx.logger.redactor().Redact(s.ToString()));
  ctx.logger.Error("mvr " + mode + " failed",
                   {{"error", s.message()}, {"code", CodeName(s.code())}});
  return 1;
}

// MVR_CONTROL_KEY (warm and pooled starts derive their VMs' control nonces from it) or, with
// `name` MVR_CONTROL_KEY_PREVIOUS, the key before a rotation; masked.
Secret ControlKey(Context& ctx, action::GitHubOutput& out,
                  const std::string& name = "MVR_CONTROL_KEY") {
  Secret key(ctx.env.GetOr(name, ""));
  if (!key.empty()) {
    out.Mask(key);
    ctx.logger.redactor().Add(key);
  }
  return key;
}

action::ActionDeps Deps(Context& ctx, Clients& c, action::GitHubOutput& out) {
  return action::ActionDeps{
      ctx.seam(),
      *c.microvms,
      *c.github,
      c.http,
      [&ctx, &out](const Secret& s) {
        out.Mask(s);
        ctx.logger.redactor().Add(s);
      },
      [&ctx](const std::string& milestone, TimePoint at) {
        ctx.logger.Info("milestone", {{"milestone", milestone}, {"at", FormatRfc3339Millis(at)}});
      },
      c.pool_store.get(),
      ControlKey(ctx, out),
      ControlKey(ctx, out, "MVR_CONTROL_KEY_PREVIOUS")};
}

int RunStart(Context& ctx, FlagMap flags, const std::string& token_file) {
  action::GitHubOutput out(stdout, ctx.env.GetOr("GITHUB_OUTPUT", ""), ctx.secure_random);
  if (Status s = AddToken(ctx, token_file, flags); !s.ok()) return Fail(ctx, out, "start", s);
  action::InputReader in(ctx.env, flags);
  out.Mask(Secret(in.Get("github-token")));
  ctx.logger.redactor().Add(in.Get("github-token"));
  std::string event_json;
  if (auto path = ctx.env.Get("GITHUB_EVENT_PATH"); path && !path->empty() && in.Has("server")) {
    event_json = ReadFile(*path, "GITHUB_EVENT_PATH").value_or("");
  }
  Result<action::StartCommand> cmd = action::ParseStart(in, event_json);
  if (!cmd.ok()) return Fail(ctx, out, "start", cmd.status());
  Result<std::unique_ptr<Clients>> clients = BuildClients(ctx, cmd->endpoints, cmd->state_table);
  if (!clients.ok()) return Fail(ctx, out, "start", clients.status());
  action::StartFlow flow(Deps(ctx, **clients, out));
  Result<action::StartResult> r = flow.Run(*cmd);
  if (!r.ok()) return Fail(ctx, out, "start", r.status());
  out.Set("label", r->label);
  out.Set("runner-name", r->runner_name);
  out.Set("runner-id", std::to_string(r->runner_id));
  out.Set("microvm-id", r->microvm_id);
  out.Set("image-version", r->image_version);
  if (!r->server.empty()) {
    out.Set("server", r->server);
    out.Set("warm-hit", r->warm_hit ? "true" : "false");
    out.Set("warm-expires-at", FormatRfc3339(r->lifetime->platform_expires_at));
    out.Set("reuse-deadline", FormatRfc3339(r->lifetime->reuse_deadline));
  }
  if (Status s = out.Flush(); !s.ok()) return Fail(ctx, out, "start", s);
  ctx.logger.Info("runner online", {{"label", r->label},
                                    {"microvm_id", r->microvm_id},
                                    {"runner_id", r->runner_id},
                                    {"warm_hit", r->warm_hit}});
  return 0;
}

int RunStop(Context& ctx, FlagMap flags, const std::string& token_file) {
  action::GitHubOutput out(stdout, ctx.env.GetOr("GITHUB_OUTPUT", ""), ctx.secure_random);
  if (Status s = AddToken(ctx, token_file, flags); !s.ok()) return Fail(ctx, out, "stop", s);
  action::InputReader in(ctx.env, flags);
  out.Mask(Secret(in.Get("github-token")));
  ctx.logger.redactor().Add(in.Get("github-token"));
  Result<action::StopCommand> cmd = action::ParseStop(in);
  if (!cmd.ok()) return Fail(ctx, out, "stop", cmd.status());
  if (cmd->empty()) {
    ctx.logger.Info(
        "nothing to stop: no microvm-id or server was given (was start cancelled "
        "before it produced outputs?)");
    return 0;
  }
  Result<std::unique_ptr<Clients>> clients = BuildClients(ctx, cmd->endpoints, cmd->state_table);
  if (!clients.ok()) return Fail(ctx, out, "stop", clients.status());
  action::StopFlow flow(Deps(ctx, **clients, out));
  Result<action::StopResult> r = flow.Run(*cmd);
  if (!r.ok()) return Fail(ctx, out, "stop", r.status());
  ctx.logger.Info("stopped", {{"microvm_id", r->microvm_id}, {"outcome", r->outcome}});
  return 0;
}

int RunSweep(Context& ctx, FlagMap flags, const std::string& token_file) {
  action::GitHubOutput out(stdout, ctx.env.GetOr("GITHUB_OUTPUT", ""), ctx.secure_random);
  if (Status s = AddToken(ctx, token_file, flags); !s.ok()) return Fail(ctx, out, "sweep", s);
  action::InputReader in(ctx.env, flags);
  out.Mask(Secret(in.Get("github-token")));
  ctx.logger.redactor().Add(in.Get("github-token"));
  Result<action::SweepCommand> cmd = action::ParseSweep(in);
  if (!cmd.ok()) return Fail(ctx, out, "sweep", cmd.status());
  Result<std::unique_ptr<Clients>> clients = BuildClients(ctx, cmd->endpoints, cmd->state_table);
  if (!clients.ok()) return Fail(ctx, out, "sweep", clients.status());
  action::SweepFlow flow(Deps(ctx, **clients, out));
  Result<action::SweepReport> r = flow.Run(*cmd);
  if (!r.ok()) return Fail(ctx, out, "sweep", r.status());
  out.Set("terminated", std::to_string(r->terminated));
  out.Set("kept", std::to_string(r->kept));
  if (Status s = out.Flush(); !s.ok()) return Fail(ctx, out, "sweep", s);
  ctx.logger.Info("swept", {{"records", r->records.size()},
                            {"terminated", r->terminated},
                            {"forgotten", r->forgotten},
                            {"kept", r->kept},
                            {"failed", r->failed},
                            {"dry_run", cmd->dry_run}});
  if (r->failed > 0) {
    return Fail(ctx, out, "sweep",
                Transient(std::to_string(r->failed) +
                          " record(s) could not be swept (see the log lines above); the next "
                          "sweep tries them again"));
  }
  return 0;
}

std::shared_ptr<FlagMap> AddFlags(CLI::App* cmd, const std::vector<action::FlagDoc>& flags) {
  auto values = std::make_shared<FlagMap>();
  for (const auto& f : flags) cmd->add_option("--" + f.name, (*values)[f.name], f.help);
  return values;
}

}  // namespace

void AddStartStopCommands(CLI::App& app, Context& ctx) {
  auto* start = app.add_subcommand(
      "start", "Start a MicroVM with a single-use GitHub JIT runner (the Action's mode: start)");
  auto start_flags = AddFlags(start, action::StartFlags());
  auto start_token = std::make_shared<std::string>();
  start->add_option("--github-token-file", *start_token,
                    "file holding the GitHub token (default: INPUT_GITHUB_TOKEN or GITHUB_TOKEN)");
  start->callback([&ctx, start_flags, start_token] {
    ctx.exit_code = RunStart(ctx, *start_flags, *start_token);
  });

  auto* stop =
      app.add_subcommand("stop", "Stop what `mvr start` started (the Action's mode: stop)");
  auto stop_flags = AddFlags(stop, action::StopFlags());
  auto stop_token = std::make_shared<std::string>();
  stop->add_option("--github-token-file", *stop_token,
                   "file holding the GitHub token (default: INPUT_GITHUB_TOKEN or GITHUB_TOKEN)");
  stop->callback(
      [&ctx, stop_flags, stop_token] { ctx.exit_code = RunStop(ctx, *stop_flags, *stop_token); });

  auto* sweep = app.add_subcommand(
      "sweep",
      "End the ephemeral MicroVMs mvr start recorded in a state table whose runner has finished "
      "(the stop step never ran), and forget the records of VMs already gone");
  auto sweep_flags = AddFlags(sweep, action::SweepFlags());
  auto sweep_token = std::make_shared<std::string>();
  sweep->add_option("--github-token-file", *sweep_token,
                    "file holding the GitHub token (default: INPUT_GITHUB_TOKEN or GITHUB_TOKEN)");
  sweep->callback([&ctx, sweep_flags, sweep_token] {
    ctx.exit_code = RunSweep(ctx, *sweep_flags, *sweep_token);
  });
}

}  // namespace mvr::cli
