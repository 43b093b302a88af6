// `mvr emulate runner`: the stand-in for the official runner's `run.sh --jitconfig`, against
// `mvr emulate github`. Edge code: reads flags and the environment and runs the StandInRunner
// with the real HTTP client and process runner. It is in both the full `mvr` and the ARM64 guest
// tools (`mvr-guest`, which `mvr emulate microvms --vm-arch arm64` puts in its guests).
#include <unistd.h>

#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "base/files.h"
#include "cli/commands.h"
#include "emulate/github/standin_runner.h"
#include "http/curl_client.h"
#include "process/process_runner.h"

extern char** environ;

namespace mvr::cli {
namespace {

namespace gh = mvr::emulate::github;

constexpr int64_t kMaxDelayMs = 3600LL * 1000;  // an hour

struct RunnerFlags {
  std::string jitconfig;
  std::string work_folder;
  int64_t startup_delay_ms = 0;
  int64_t registration_delay_ms = 0;
  int64_t poll_interval_ms = 1000;
  std::string version = gh::kStandInRunnerVersion;
};

int RunRunner(RunnerFlags& flags, Context& ctx) {
  Secret config(std::move(flags.jitconfig));
  flags.jitconfig.clear();
  if (config.empty()) {
    config = Secret(ctx.env.GetOr("ACTIONS_RUNNER_INPUT_JITCONFIG", ""));
  }
  // Like the real runner: the variable must not reach any step.
  unsetenv("ACTIONS_RUNNER_INPUT_JITCONFIG");
  if (config.empty()) {
    std::cerr << "mvr emulate runner: no JIT config; pass --jitconfig or set "
                 "ACTIONS_RUNNER_INPUT_JITCONFIG"
              << std::endl;
    return 2;
  }
  gh::StandInRunnerOptions o;
  o.jit_config = std::move(config);
  o.startup_delay = Duration(flags.startup_delay_ms);
  o.registration_delay = Duration(flags.registration_delay_ms);
  o.poll_interval = Duration(flags.poll_interval_ms);
  o.version = flags.version;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) o.base_env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  std::optional<TemporaryDirectory> temp_folder;
  if (flags.work_folder.empty()) {
    auto created = TemporaryDirectory::Create("mvr-runner");
    if (!created.ok()) {
      std::cerr << "mvr emulate runner: " << created.status().message() << "; or pass --work-folder"
                << std::endl;
      return 2;
    }
    temp_folder.emplace(std::move(*created));
    flags.work_folder = temp_folder->path();
  }
  o.work_folder = flags.work_folder;
  http::CurlHttpClient client;
  process::PosixProcessRunner processes;
  gh::StandInRunner runner(std::move(o), client, processes, ctx.seam(), std::cout);
  auto outcome = runner.Run();
  if (!outcome.ok()) {
    std::cerr << "mvr emulate runner: " << outcome.status().message() << std::endl;
    return 1;
  }
  return 0;  // whatever the job's conclusion, like the real runner
}

}  // namespace

void AddEmulateRunnerCommand(CLI::App& emulate, Context& ctx) {
  auto rflags = std::make_shared<RunnerFlags>();
  CLI::App* r = emulate.add_subcommand(
      "runner", "Stand-in for the Actions runner's run.sh --jitconfig, against mvr emulate github");
  r->add_option("--jitconfig", rflags->jitconfig,
                "encoded JIT config (prefer ACTIONS_RUNNER_INPUT_JITCONFIG)");
  r->add_option("--work-folder", rflags->work_folder,
                "where jobs run (default: a new temporary folder)");
  r->add_option("--startup-delay-ms", rflags->startup_delay_ms,
                "simulated runner start-up time (8200 on a MicroVM)")
      ->check(CLI::Range(int64_t{0}, kMaxDelayMs));
  r->add_option("--registration-delay-ms", rflags->registration_delay_ms,
                "simulated session creation time (9000 on a MicroVM)")
      ->check(CLI::Range(int64_t{0}, kMaxDelayMs));
  r->add_option("--poll-interval-ms", rflags->poll_interval_ms, "how often to ask for the job")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{10}, kMaxDelayMs));
  // An image bakes its runner's version into its runner command, as a real image bakes a runner
  // release; MVR_RUNNER_VERSION sets it for every runner a host starts.
  r->add_option("--version", rflags->version,
                "the runner software version it reports to GitHub (N.N.N)")
      ->envname("MVR_RUNNER_VERSION")
      ->capture_default_str()
      ->check([](const std::string& v) { return gh::CheckRunnerVersion(v).message(); });
  r->callback([rflags, &ctx] { ctx.exit_code = RunRunner(*rflags, ctx); });
}

}  // namespace mvr::cli
