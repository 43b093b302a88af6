// ProcessRunner: the seam through which the MicroVMs emulator starts and controls guest programs.
// Each program runs in its own session and process group (pid == pgid), so that freezing,
// thawing and killing reach every process it started.
// Thread-safety: PosixProcessRunner is safe to call from many threads.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace mvr::emulate::microvms {

class ProcessRunner {
 public:
  struct Spec {
    std::vector<std::string> argv;           // argv[0] is looked up on PATH
    std::map<std::string, std::string> env;  // set on top of the emulator's environment
    std::vector<std::string> unset_env;      // removed from it
    std::string working_dir;
    std::string output_path;  // stdout and stderr are appended here
  };
  virtual ~ProcessRunner() = default;
  // Starts the program in a new session; returns its pid (also its process group id).
  // InvalidArgument when it cannot be executed (the message says why).
  virtual Result<int> Spawn(const Spec& spec) = 0;
  // Sends `signal` to the whole process group. A group that no longer exists is not an error.
  virtual Status SignalGroup(int pgid, int signal) = 0;
  // Reaps `pid` if it has exited: its wait status; nullopt while it runs.
  virtual std::optional<int> TryWait(int pid) = 0;
};

class PosixProcessRunner final : public ProcessRunner {
 public:
  Result<int> Spawn(const Spec& spec) override;
  Status SignalGroup(int pgid, int signal) override;
  std::optional<int> TryWait(int pid) override;
};

// "exit status 3" / "killed by signal 9", from a wait status.
std::string DescribeWaitStatus(int status);

// Binds 127.0.0.1:0 and returns the port the kernel chose (then releases it).
Result<int> PickFreeLoopbackPort();

}  // namespace mvr::emulate::microvms
