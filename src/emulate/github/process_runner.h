// ProcessRunner: the seam through which the stand-in runner starts job steps. The real one forks
// and execs with an explicit environment and working directory and captures stdout and stderr;
// tests replace it with a fake.
// Thread-safety: PosixProcessRunner::Run may be called from several threads at once.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace mvr::emulate::github {

struct ProcessSpec {
  std::vector<std::string> argv;           // argv[0] is an absolute path
  std::map<std::string, std::string> env;  // the whole environment of the child
  std::string cwd;
  size_t max_output_bytes = 64 * 1024;  // per stream; the rest is read and dropped
};

struct ProcessResult {
  int exit_code = 0;  // 128 + signal number when killed by a signal
  std::string stdout_text;
  std::string stderr_text;
  bool truncated = false;
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Runs to completion. Errors only when the process cannot be started.
  virtual Result<ProcessResult> Run(const ProcessSpec& spec) = 0;
};

class PosixProcessRunner final : public ProcessRunner {
 public:
  Result<ProcessResult> Run(const ProcessSpec& spec) override;
};

}  // namespace mvr::emulate::github
