#include "cli/commands.h"

namespace mvr::cli {

// Registers nothing until its issue lands.
void AddEmulateGithubCommands(CLI::App& emulate, Context& ctx) {
  (void)emulate;
  (void)ctx;
}

}  // namespace mvr::cli
