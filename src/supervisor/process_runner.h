// ProcessRunner: the supervisor's seam for child processes (containerd, dockerd, docker, sync, the
// runner, power-off). PosixProcessRunner is the real one; tests inject fakes or point the
// configured commands at small scripts. Each child gets its own process group, so a signal
// reaches everything it started.
// Thread-safety: implementations must be safe to call from many threads at once.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/secret.h"
#include "base/status.h"

namespace mvr::supervisor {

struct ProcessSpec {
  std::vector<std::string> argv;           // argv[0] is looked up in PATH when it has no '/'
  std::map<std::string, std::string> env;  // the child's whole environment (nothing inherited)
  // Variables whose values are secrets (the JIT config): passed in the environment, never logged.
  std::map<std::string, Secret> secret_env;
  std::string cwd;          // "" = the supervisor's
  std::string user;         // run as this user (needs root); "" = same user
  std::string output_path;  // stdout+stderr appended here; "" = /dev/null
};

struct ExitStatus {
  int code = 0;  // exit code, or 128 + signal when killed by a signal
  bool signaled = false;
  bool ok() const { return code == 0 && !signaled; }
};

struct CommandResult {
  ExitStatus exit;
  std::string output;  // stdout (stderr goes to the spec's output_path), at most 64 KiB
  bool timed_out = false;
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Starts a child in the background. Fails (InvalidArgument) when it cannot be started: missing
  // program, unknown user.
  virtual Result<int> Spawn(const ProcessSpec& spec) = 0;
  // Blocks until `pid` exits and reaps it.
  virtual Result<ExitStatus> Wait(int pid) = 0;
  // The exit status if `pid` has exited (and reaps it), nullopt if it still runs.
  virtual Result<std::optional<ExitStatus>> TryWait(int pid) = 0;
  // Sends `signal` to the child's process group.
  virtual Status Signal(int pid, int signal) = 0;
  // Runs a command to completion, capturing stdout; kills its group after `timeout`.
  virtual Result<CommandResult> Run(const ProcessSpec& spec, Duration timeout) = 0;
};

class PosixProcessRunner final : public ProcessRunner {
 public:
  Result<int> Spawn(const ProcessSpec& spec) override;
  Result<ExitStatus> Wait(int pid) override;
  Result<std::optional<ExitStatus>> TryWait(int pid) override;
  Status Signal(int pid, int signal) override;
  Result<CommandResult> Run(const ProcessSpec& spec, Duration timeout) override;

 private:
  Result<int> SpawnWithStdout(const ProcessSpec& spec, int stdout_fd);
};

// "a b 'c d'" for messages; never call on a spec whose argv holds a secret (none does: secrets
// travel in secret_env only).
std::string DescribeArgv(const std::vector<std::string>& argv);

}  // namespace mvr::supervisor
