#include "cli/commands.h"

namespace mvr::cli {

// Registers nothing until its issue lands.
void AddSupervisorCommand(CLI::App& app, Context& ctx) {
  (void)app;
  (void)ctx;
}

}  // namespace mvr::cli
