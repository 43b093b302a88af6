// One function per subcommand family; each adds its subcommands to the CLI11 app and sets
// Context::exit_code from its callback. main.cpp is the only caller.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/context.h"

namespace mvr::cli {

void AddVersionCommand(CLI::App& app, Context& ctx);
// `mvr emulate microvms` (emulate_microvms_command.cpp).
void AddEmulateMicrovmsCommand(CLI::App& emulate, Context& ctx);
// `mvr emulate github` (emulate_github_command.cpp).
void AddEmulateGithubCommands(CLI::App& emulate, Context& ctx);
// `mvr emulate runner` (emulate_runner_command.cpp; also in the ARM64 guest tools, mvr-guest).
void AddEmulateRunnerCommand(CLI::App& emulate, Context& ctx);
// `mvr emulate dns` (emulate_dns_command.cpp): the resolvers of the emulator's QEMU guests.
void AddEmulateDnsCommand(CLI::App& emulate, Context& ctx);
// `mvr start`, `mvr stop` and `mvr sweep` (action_commands.cpp).
void AddStartStopCommands(CLI::App& app, Context& ctx);
// `mvr demo` (demo_command.cpp).
void AddDemoCommand(CLI::App& app, Context& ctx);
// `mvr serve` (serve_command.cpp).
void AddServeCommand(CLI::App& app, Context& ctx);
// `mvr doctor` (doctor_command.cpp).
void AddDoctorCommand(CLI::App& app, Context& ctx);
// `mvr lambda` (lambda_command.cpp).
void AddLambdaCommand(CLI::App& app, Context& ctx);
// `mvr package lambda` (package_command.cpp).
void AddPackageCommand(CLI::App& app, Context& ctx);
// `mvr simulate` (simulate_command.cpp).
void AddSimulateCommand(CLI::App& app, Context& ctx);
// `mvr image pack` and `mvr image build` (image_command.cpp).
void AddImageCommand(CLI::App& app, Context& ctx);
// `mvr supervisor` (supervisor_command.cpp).
void AddSupervisorCommand(CLI::App& app, Context& ctx);

}  // namespace mvr::cli
