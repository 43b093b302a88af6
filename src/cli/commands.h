// One function per subcommand family; each adds its subcommands to the CLI11 app and sets
// Context::exit_code from its callback. main.cpp is the only caller.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/context.h"

namespace mvr::cli {

void AddVersionCommand(CLI::App& app, Context& ctx);

}  // namespace mvr::cli
