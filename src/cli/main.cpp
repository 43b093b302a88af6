// mvr: one multi-call binary. This is the only place real implementations of the seam are built.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "cli/commands.h"
#include "cli/context.h"
#include "process/core_dumps.h"

int main(int argc, char** argv) {
  // The supervisor, start/stop, the emulators and serve all hold secrets (JIT configs, tokens,
  // keys): no core file and no same-user ptrace may expose their memory.
  if (mvr::Status s = mvr::process::DisableCoreDumps(); !s.ok()) {
    std::fprintf(stderr, "mvr: warning: core dumps stay enabled: %s\n", s.message().c_str());
  }
  mvr::cli::Context ctx;
  CLI::App app{"mvr: GitHub Actions jobs on AWS Lambda MicroVMs"};
  app.require_subcommand(1);
  mvr::cli::AddVersionCommand(app, ctx);
#ifndef MVR_SUPERVISOR_ONLY
  CLI::App* emulate = app.add_subcommand("emulate", "Local stand-ins for AWS and GitHub");
  emulate->require_subcommand(1);
  mvr::cli::AddEmulateMicrovmsCommand(*emulate, ctx);
  mvr::cli::AddEmulateGithubCommands(*emulate, ctx);
  mvr::cli::AddEmulateRunnerCommand(*emulate, ctx);
  mvr::cli::AddEmulateDnsCommand(*emulate, ctx);
  mvr::cli::AddStartStopCommands(app, ctx);
  mvr::cli::AddDemoCommand(app, ctx);
  mvr::cli::AddServeCommand(app, ctx);
  mvr::cli::AddDoctorCommand(app, ctx);
  mvr::cli::AddLambdaCommand(app, ctx);
  mvr::cli::AddPackageCommand(app, ctx);
  mvr::cli::AddSimulateCommand(app, ctx);
  mvr::cli::AddImageCommand(app, ctx);
#elif defined(MVR_GUEST_TOOLS)
  // The ARM64 guests of `mvr emulate microvms --vm-arch arm64` run their jobs' stand-in runner.
  CLI::App* emulate = app.add_subcommand("emulate", "The stand-in runner of emulated guests");
  emulate->require_subcommand(1);
  mvr::cli::AddEmulateRunnerCommand(*emulate, ctx);
#endif
  mvr::cli::AddSupervisorCommand(app, ctx);
  CLI11_PARSE(app, argc, argv);
  return ctx.exit_code;
}
