// `mvr supervisor`: the agent inside the MicroVM image. Wires the real seam (processes, clock,
// sleeper, logger, the MicroVMs API for self-termination) into Supervisor and serves the hook and
// control ports until the VM is terminated.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "aws/credentials_chain.h"
#include "aws/endpoints.h"
#include "aws/microvms_client.h"
#include "cli/commands.h"
#include "http/curl_client.h"
#include "process/process_runner.h"
#include "supervisor/api_self_terminator.h"
#include "supervisor/config.h"
#include "supervisor/servers.h"
#include "supervisor/supervisor.h"

namespace mvr::cli {
namespace {

struct SupervisorFlags {
  std::string config_path;
  std::string host;
  std::string hook_host;
  std::string control_host;
  int hook_port = -1;
  int control_port = -1;
  std::string microvm_id;
  std::vector<std::string> runner_command;
  std::string runner_user;
  std::string force_driver;
  bool no_docker = false;
  std::string log_level = "info";
};

Result<int> PortFromEnv(const Environment& env, const char* name) {
  auto v = env.Get(name);
  if (!v || v->empty()) return -1;
  try {
    size_t used = 0;
    int port = std::stoi(*v, &used);
    if (used == v->size() && port >= 0 && port <= 65535) return port;
  } catch (const std::exception&) {
  }
  return InvalidArgument(std::string(name) + "='" + *v + "' is not a port number");
}

Result<supervisor::SupervisorConfig> BuildConfig(const SupervisorFlags& f, const Environment& env) {
  supervisor::SupervisorConfig config;
  if (!f.config_path.empty()) {
    std::ifstream in(f.config_path);
    if (!in) return InvalidArgument("cannot read supervisor config file " + f.config_path);
    std::stringstream text;
    text << in.rdbuf();
    MVR_ASSIGN_OR_RETURN(config, supervisor::ParseSupervisorConfig(text.str()));
  }
  // The emulator (and anything else hosting several supervisors) passes ports by environment.
  MVR_ASSIGN_OR_RETURN(int env_hook, PortFromEnv(env, "MVR_HOOK_PORT"));
  MVR_ASSIGN_OR_RETURN(int env_control, PortFromEnv(env, "MVR_PORT_8080"));
  if (env_hook >= 0) config.hook_port = env_hook;
  if (env_control >= 0) config.control_port = env_control;
  if (f.hook_port >= 0) config.hook_port = f.hook_port;
  if (f.control_port >= 0) config.control_port = f.control_port;
  if (!f.host.empty()) config.hook_host = config.control_host = f.host;
  if (!f.hook_host.empty()) config.hook_host = f.hook_host;
  if (!f.control_host.empty()) config.control_host = f.control_host;
  if (!f.microvm_id.empty()) config.microvm_id = f.microvm_id;
  if (config.microvm_id.empty()) config.microvm_id = env.GetOr("MVR_MICROVM_ID", "");
  if (!f.runner_command.empty()) config.runner.command = f.runner_command;
  if (!f.runner_user.empty()) config.runner.user = f.runner_user;
  if (f.no_docker) config.docker.enabled = false;
  if (!f.force_driver.empty()) config.docker.force_driver = f.force_driver;
  if (auto path = env.Get("PATH"); path && !path->empty()) config.command_env["PATH"] = *path;
  MVR_RETURN_IF_ERROR(supervisor::ValidateSupervisorConfig(config));
  return config;
}

// What self-termination needs: the MicroVMs client and everything it calls through.
// libcurl looks for Debian's CA bundle path; Amazon Linux keeps it elsewhere.
http::CurlHttpClient::Options HttpOptions() {
  http::CurlHttpClient::Options options;
  for (const char* path :
       {"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"}) {
    if (::access(path, R_OK) == 0) {
      options.ca_file = path;
      break;
    }
  }
  return options;
}

struct ApiWiring {
  explicit ApiWiring(Context& ctx) : http(HttpOptions()), credentials(ctx.env, http, ctx.clock) {}
  http::CurlHttpClient http;
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
  wiring->client = std::make_unique<aws::MicrovmsClient>(
      options,
      aws::MicrovmsClientDeps{wiring->http, wiring->credentials, ctx.clock, ctx.secure_random});
  wiring->terminator = std::make_unique<supervisor::ApiSelfTerminator>(
      *wiring->client, RetryDeps{ctx.clock, ctx.sleeper, ctx.random}, logger);
  logger.Info("self-termination through the MicroVMs API", {{"endpoint", endpoint->url}});
  return wiring;
}

int RunSupervisor(const SupervisorFlags& flags, Context& ctx) {
  // A client that goes away mid-answer must not kill the supervisor.
  ::signal(SIGPIPE, SIG_IGN);
  // SIGTERM/SIGINT are taken by one thread (below) and become a clean Terminate; they are blocked
  // here, before any thread starts, so that every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  Logger base_logger(ctx.sink, ctx.clock, ParseLogLevel(flags.log_level));
  Logger logger = base_logger.With({{"component", "supervisor"}});
  auto config = BuildConfig(flags, ctx.env);
  if (!config.ok()) {
    std::fprintf(stderr, "mvr supervisor: %s\n", config.status().message().c_str());
    return 2;
  }
  process::PosixProcessRunner processes;
  std::unique_ptr<ApiWiring> api = MakeApiWiring(ctx, logger);
  // ctx.random (the retry jitter) was cloned with the snapshot: /run and /resume reseed it.
  supervisor::Supervisor sup(
      *config, supervisor::SupervisorDeps{processes, *api->terminator, ctx.clock, ctx.sleeper,
                                          logger, &ctx.random, &ctx.os_random});
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
  std::atomic<bool> finished{false};
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    if (finished.load()) return;
    logger.Info("stop signal received; terminating", {{"signal", sig}});
    (void)sup.Terminate();
  });
  sup.WaitUntilFinished();
  finished.store(true);
  pthread_kill(signal_thread.native_handle(), SIGTERM);
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
  cmd->callback([flags, &ctx] { ctx.exit_code = RunSupervisor(*flags, ctx); });
}

}  // namespace mvr::cli
