#include <cstdio>

#include "cli/commands.h"

namespace mvr::cli {

void AddVersionCommand(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("version", "Print mvr's version");
  cmd->callback([&ctx] {
    std::printf("mvr %s\n", MVR_VERSION);
    ctx.exit_code = 0;
  });
}

}  // namespace mvr::cli
