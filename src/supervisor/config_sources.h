// Where the supervisor's configuration comes from, in increasing precedence: the JSON file
// (--config), the environment (MVR_HOOK_PORT, MVR_PORT_8080, MVR_MICROVM_ID, PATH), then the
// command's flags. The emulator and anything else hosting several supervisors passes ports by
// environment; an image bakes the file; flags are for people and tests.
// Thread-safety: pure functions (ResolveSupervisorConfig reads the file it names).
#pragma once

#include <string>
#include <vector>

#include "base/environment.h"
#include "base/status.h"
#include "supervisor/config.h"

namespace mvr::supervisor {

// `mvr supervisor`'s flags; empty strings and -1 mean "not given".
struct SupervisorFlags {
  std::string config_path;
  std::string host;  // both servers
  std::string hook_host;
  std::string control_host;
  int hook_port = -1;
  int control_port = -1;
  std::string microvm_id;
  std::vector<std::string> runner_command;
  std::string runner_user;
  std::string force_driver;
  bool no_docker = false;
};

// The file's configuration with the environment's and then the flags' values applied, validated.
// Errors name the file, variable or flag that is wrong.
Result<SupervisorConfig> ResolveSupervisorConfig(const SupervisorFlags& flags,
                                                 const Environment& env);

}  // namespace mvr::supervisor
