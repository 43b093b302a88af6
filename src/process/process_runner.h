// ProcessRunner: the one seam through which mvr starts, signals and reaps child processes; a child
// normally leads its own process group (pid == pgid). PosixProcessRunner is the real one.
// Thread-safety: implementations must be safe to call from many threads at once.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/secret.h"
#include "base/status.h"

namespace mvr::process {

struct ProcessSpec {
  // argv[0] is looked up in the child's PATH (or a standard one) when it has no '/'.
  std::vector<std::string> argv;
  // Without inherit_env, `env` is the child's whole environment. With it, the child starts from
  // this process's environment, minus `unset_env`, with `env` set on top.
  std::map<std::string, std::string> env;
  bool inherit_env = false;
  std::vector<std::string> unset_env;
  // Variables whose values are secrets (the JIT config): passed in the environment, never logged.
  std::map<std::string, Secret> secret_env;
  std::string cwd;          // "" = this process's
  std::string user;         // run as this user (needs root); "" = same user
  std::string output_path;  // stdout+stderr appended here; "" = /dev/null
  int output_mode = 0640;   // permissions of output_path when it is created
  enum class Group {
    kOwn,         // its own process group (pid == pgid), in this process's session
    kNewSession,  // its own session and group (setsid: no controlling terminal either)
    kShared,      // stays in this process's group, so that signals to that group reach it too
  };
  Group group = Group::kOwn;
  // Killed (SIGKILL) by the kernel as soon as this process ends, however it ends (kill -9
  // included): for a child that must never outlive it, such as a virtual machine. Only the child
  // itself: what it starts in turn is not covered.
  bool end_with_this_process = false;
};

struct ExitStatus {
  int code = 0;  // exit code, or 128 + signal when killed by a signal
  bool signaled = false;
  bool ok() const { return code == 0 && !signaled; }
};

struct RunOptions {
  std::optional<Duration> timeout;  // the group is killed after it; nullopt = no limit
  // stderr into CommandResult::error_output rather than the spec's output_path.
  bool capture_stderr = false;
  size_t max_output_bytes = 64 * 1024;  // per captured stream; the rest is read and dropped
};

struct CommandResult {
  ExitStatus exit;
  std::string output;        // stdout, at most RunOptions::max_output_bytes
  std::string error_output;  // stderr, with RunOptions::capture_stderr
  bool truncated = false;    // some output was dropped
  bool timed_out = false;
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Starts a child in the background, in its own process group. Fails (InvalidArgument, saying
  // why) when it cannot be started: missing program, unknown user, bad directory or output file.
  virtual Result<int> Spawn(const ProcessSpec& spec) = 0;
  // Blocks until `pid` exits and reaps it.
  virtual Result<ExitStatus> Wait(int pid) = 0;
  // The exit status if `pid` has exited (and reaps it), nullopt if it still runs. NotFound when
  // `pid` is not (or no longer) a child.
  virtual Result<std::optional<ExitStatus>> TryWait(int pid) = 0;
  // Sends `signal` to the process group `pid` leads (to `pid` alone when it leads none, as with
  // Group::kShared). A process or group that is already gone is not an error.
  virtual Status Signal(int pid, int signal) = 0;
  // Runs a command to completion, capturing stdout (and stderr when asked).
  virtual Result<CommandResult> Run(const ProcessSpec& spec, const RunOptions& options) = 0;
  // The same, killing the command's group after `timeout`.
  Result<CommandResult> Run(const ProcessSpec& spec, Duration timeout) {
    RunOptions options;
    options.timeout = timeout;
    return Run(spec, options);
  }
};

class PosixProcessRunner final : public ProcessRunner {
 public:
  using ProcessRunner::Run;
  Result<int> Spawn(const ProcessSpec& spec) override;
  Result<ExitStatus> Wait(int pid) override;
  Result<std::optional<ExitStatus>> TryWait(int pid) override;
  Status Signal(int pid, int signal) override;
  Result<CommandResult> Run(const ProcessSpec& spec, const RunOptions& options) override;

 private:
  // Spawn with stdout (and stderr, when >= 0) sent to these descriptors instead of output_path.
  Result<int> SpawnWithPipes(const ProcessSpec& spec, int stdout_fd, int stderr_fd);
};

// TryWait for loops that only ask whether `pid` has ended: a pid that is no longer a child (reaped
// elsewhere) counts as ended with code 0, as does any other TryWait error.
std::optional<ExitStatus> PollExit(ProcessRunner& runner, int pid);

// The file `name` runs as: `name` itself when it holds a '/', else the first executable regular
// file of that name in env's PATH (a standard PATH when env has none). InvalidArgument saying
// what is missing otherwise. Spawn and Run look programs up this way.
Result<std::string> FindProgram(const std::string& name,
                                const std::map<std::string, std::string>& env);

// "a b 'c d'" for messages; never call on a spec whose argv holds a secret (none does: secrets
// travel in secret_env only).
std::string DescribeArgv(const std::vector<std::string>& argv);

// "exit status 3" / "killed by signal 9".
std::string DescribeExit(const ExitStatus& status);

}  // namespace mvr::process
