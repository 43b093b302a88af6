// `mvr supervisor`: the agent inside the MicroVM image. Wires the real seam (processes, clock,
// sleeper, logger, the MicroVMs API for self-termination) into Supervisor and serves the hook and
// control ports until the VM is terminated.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <thread>

#include "aws/microvms/microvms_client.h"
#include "aws/signing/credentials_chain.h"
#include "aws/signing/endpoints.h"
#include "base/stop_signals.h"
#include "base/time_format.h"
#include "cli/commands.h"
#include "http/socket_client.h"
#include "process/process_runner.h"
#include "supervisor/api_self_terminator.h"
#include "supervisor/config_sources.h"
#include "supervisor/servers.h"
#include "supervisor/supervisor.h"

namespace mvr::cli {
namespace {

// The flags' own fields, plus the log level (not part of the supervisor's configuration).
struct SupervisorFlags : supervisor::SupervisorFlags {
  std::string log_level = "info";
  bool keep_cloned_random = false;
};

// What self-termination needs: the MicroVMs client and everything it calls through. The client
// is the socket one, not libcurl: the supervisor's build then loads no libcurl dependency tree,
// and its TLS context is made on the first https request, so an idle supervisor holds neither
// (docs/supervisor.md, "Footprint"). Debian and Amazon Linux keep the CA bundle in different
// places.
http::SocketHttpClient::Options HttpOptions() {
  http::SocketHttpClient::Options options;
  for (const char* path :
       {"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"}) {
    if (::access(path, R_OK) == 0) {
      options.ca_file = path;
      break;
    }
  }
  return options;
}

// The time the MicroVMs API says it is: the Date of its answer to an unsigned GET of its root (AWS
// dates every answer, errors included).
Result<TimePoint> ApiTime(http::HttpClient& http, const std::string& endpoint_url) {
  http::HttpRequest req;
  req.method = "GET";
  req.url = endpoint_url + "/";
  req.timeout = Duration(3000);
  MVR_ASSIGN_OR_RETURN(http::HttpResponse res, http.Send(req));
  std::optional<std::string> date = res.headers.Get("Date");
  if (!date) return NotFound(endpoint_url + " answered without a Date header");
  return ParseHttpDate(*date);
}

// Sets the system's wall clock (root in the VM: CAP_SYS_TIME).
Status SetWallClock(TimePoint t) {
  const int64_t ms = t.time_since_epoch().count();
  timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>((ms % 1000) * 1'000'000)};
  if (::clock_settime(CLOCK_REALTIME, &ts) != 0) {
    return Unauthorized(std::string("clock_settime: ") + std::strerror(errno));
  }
  return Status::Ok();
}

struct ApiWiring {
  explicit ApiWiring(Context& ctx) : http(HttpOptions()), credentials(ctx.env, http, ctx.clock) {}
  http::SocketHttpClient http;
  std::string endpoint_url;  // "" when none is configured
  aws::DefaultCredentialsChain credentials;
  std::unique_ptr<aws::MicrovmsClient> client;
  std::unique_ptr<supervisor::SelfTerminator> terminator;
};

// The API terminator when a region (and so an endpoint) is configured, else power-off only.
// MVR_SELF_TERMINATE=poweroff forces power-off.
std::unique_ptr<ApiWiring> MakeApiWiring(Context& ctx, const Logger& logger) {
  auto wiring = std::make_unique<ApiWiring>(ctx);
  if (ctx.env.GetOr("MVR_SELF_TERMINATE", "api") == "poweroff") {
    wiring->terminator = std::make_unique<supervisor::NoSelfTerminator>();
    return wiring;
  }
  auto endpoint = aws::ResolveEndpoint(aws::AwsService::kLambdaMicrovms, ctx.env,
                                       aws::LoadSharedConfig(ctx.env));
  if (!endpoint.ok()) {
    logger.Info("no MicroVMs endpoint configured; an ephemeral VM will power off instead",
                {{"reason", endpoint.status().message()}});
    wiring->terminator = std::make_unique<supervisor::NoSelfTerminator>();
    return wiring;
  }
  aws::MicrovmsClientOptions options;
  options.endpoint = *endpoint;
  wiring->endpoint_url = endpoint->url;
  wiring->client = std::make_unique<aws::MicrovmsClient>(
      options, aws::MicrovmsClientDeps{wiring->http, wiring->credentials, ctx.seam()});
  wiring->terminator = std::make_unique<supervisor::ApiSelfTerminator>(
      *wiring->client, ctx.seam().WithLogger(logger));
  logger.Info("self-termination through the MicroVMs API", {{"endpoint", endpoint->url}});
  return wiring;
}

int RunSupervisor(const SupervisorFlags& flags, Context& ctx) {
  // A client that goes away mid-answer must not kill the supervisor.
  ::signal(SIGPIPE, SIG_IGN);
  // SIGTERM/SIGINT are taken by one thread (below) and become a clean Terminate; they are blocked
  // here, before any thread starts, so that every thread inherits the mask.
  StopSignals stop_signals;
  Logger base_logger(ctx.sink, ctx.clock, ParseLogLevel(flags.log_level));
  Logger logger = base_logger.With({{"component", "supervisor"}});
  auto config = supervisor::ResolveSupervisorConfig(flags, ctx.env);
  if (!config.ok()) {
    std::fprintf(stderr, "mvr supervisor: %s\n", config.status().message().c_str());
    return 2;
  }
  process::PosixProcessRunner processes;
  std::unique_ptr<ApiWiring> api = MakeApiWiring(ctx, logger);
  // ctx.random (the retry jitter) was cloned with the snapshot: /run and /resume reseed it.
  supervisor::SupervisorDeps deps{processes, *api->terminator, ctx.seam().WithLogger(logger),
                                  &ctx.random};
  deps.restore_seed = [&ctx](std::string_view unique) {
    return ctx.os_random.ReseedAfterRestore(unique);
  };
  deps.reseed = !flags.keep_cloned_random;
  if (!api->endpoint_url.empty()) {
    deps.reference_time = [&api] { return ApiTime(api->http, api->endpoint_url); };
    deps.set_wall_clock = SetWallClock;
  }
  supervisor::Supervisor sup(*config, deps);
  supervisor::HookServer hooks(sup);
  supervisor::ControlServer control(sup, config->max_control_body_bytes);
  auto hook_port = hooks.Start(config->hook_host, config->hook_port);
  if (!hook_port.ok()) {
    std::fprintf(stderr, "mvr supervisor: hook server: %s\n", hook_port.status().message().c_str());
    return 1;
  }
  auto control_port = control.Start(config->control_host, config->control_port);
  if (!control_port.ok()) {
    std::fprintf(stderr, "mvr supervisor: control server: %s\n",
                 control_port.status().message().c_str());
    hooks.Stop();
    return 1;
  }
  logger.Info("supervisor listening", {{"hook_host", config->hook_host},
                                       {"hook_port", *hook_port},
                                       {"control_host", config->control_host},
                                       {"control_port", *control_port},
                                       {"microvm_id", config->microvm_id},
                                       {"docker", config->docker.enabled}});
  std::thread signal_thread([&] {
    int sig = stop_signals.Wait();
    if (sig == 0) return;  // the supervisor finished on its own
    logger.Info("stop signal received; terminating", {{"signal", sig}});
    (void)sup.Terminate();
  });
  sup.WaitUntilFinished();
  stop_signals.Interrupt();
  signal_thread.join();
  logger.Info("supervisor finished; stopping its servers");
  control.Stop();
  hooks.Stop();
  return 0;
}

}  // namespace

void AddSupervisorCommand(CLI::App& app, Context& ctx) {
  auto flags = std::make_shared<SupervisorFlags>();
  auto* cmd = app.add_subcommand(
      "supervisor",
      "The agent inside the MicroVM image: lifecycle hooks (port 9000, MVR_HOOK_PORT), the "
      "runner control endpoint (port 8080, MVR_PORT_8080), Docker and the JIT runner");
  cmd->add_option("--config", flags->config_path, "JSON config file (see docs/supervisor.md)");
  cmd->add_option("--host", flags->host, "bind address of both servers (default 0.0.0.0)");
  cmd->add_option("--hook-host", flags->hook_host, "bind address of the hook server");
  cmd->add_option("--control-host", flags->control_host, "bind address of the control server");
  cmd->add_option("--hook-port", flags->hook_port, "hook port (overrides MVR_HOOK_PORT)");
  cmd->add_option("--control-port", flags->control_port, "control port (overrides MVR_PORT_8080)");
  cmd->add_option("--microvm-id", flags->microvm_id,
                  "this VM's id, when known before /run (also MVR_MICROVM_ID)");
  cmd->add_option("--runner-command", flags->runner_command,
                  "the runner command and its arguments (default /home/runner/run.sh)")
      ->expected(1, 64);
  cmd->add_option("--runner-user", flags->runner_user, "run the runner as this user (needs root)");
  cmd->add_option("--force-driver", flags->force_driver,
                  "use only this Docker storage driver (overlay2, fuse-overlayfs, vfs)");
  cmd->add_flag("--no-docker", flags->no_docker, "do not manage Docker (tests, emulator demos)");
  cmd->add_option("--log-level", flags->log_level, "debug, info, warn or error");
  cmd->add_flag("--keep-cloned-random", flags->keep_cloned_random,
                "tests only: do not reseed the random state cloned with the VM's snapshot on /run "
                "and /resume (every VM of an image then reports the same cloneCheck)");
  cmd->callback([flags, &ctx] { ctx.exit_code = RunSupervisor(*flags, ctx); });
}

}  // namespace mvr::cli
