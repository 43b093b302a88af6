// StandInRunner: plays the official runner's `run.sh --jitconfig` against the GitHub emulator.
// Decodes the JIT config, waits out the configured start-up and registration delays, connects
// (the runner shows online), polls for its one job, runs each step as `/bin/sh -c <step>` in the
// job's workspace with the job's environment, reports every step and the conclusion, and
// returns. It never prints the JIT config or its credential.
// Thread-safety: one Run per instance.
#pragma once

#include <map>
#include <ostream>
#include <string>

#include "base/seam.h"
#include "base/secret.h"
#include "emulate/github/jit_config.h"
#include "emulate/github/model_types.h"
#include "emulate/github/runner_versions.h"
#include "http/client.h"
#include "process/process_runner.h"

namespace mvr::emulate::github {

struct StandInRunnerOptions {
  Secret jit_config;
  std::string work_folder;         // steps run under <work_folder>/<repo>/<repo>
  Duration startup_delay{0};       // the .NET host starting (8.2 s on a real MicroVM)
  Duration registration_delay{0};  // creating the session with GitHub (9.0 s)
  Duration poll_interval{1'000};
  int max_poll_failures = 30;                   // consecutive transport failures before giving up
  std::map<std::string, std::string> base_env;  // the environment steps inherit
  std::string shell = "/bin/sh";
  std::string version = kStandInRunnerVersion;  // what it reports when it connects
};

// How the job ended, as the runner saw it.
struct RunnerOutcome {
  int64_t job_id = 0;
  std::string conclusion;  // success, failure or cancelled
};

class StandInRunner {
 public:
  StandInRunner(StandInRunnerOptions options, http::HttpClient& client,
                process::ProcessRunner& processes, Seam seam, std::ostream& console);

  // Runs until its one job is done. Errors: a malformed config (InvalidArgument), the runner
  // removed before it got a job (Unauthorized), its registration expired (NotFound), the
  // emulator unreachable (Transient).
  Result<RunnerOutcome> Run();

 private:
  Result<http::HttpResponse> Call(const std::string& method, const std::string& path,
                                  const std::string& body, bool retry);
  Result<JobAssignment> WaitForJob();
  // GitHub refused the runner's version: says so and returns `s` (the runner exits).
  Status Refused(const Status& s);
  // GitHub no longer has the runner's registration: says so and returns `s` (the runner exits).
  Status Deregistered(const Status& s);
  Result<std::string> RunJob(const JobAssignment& job);
  std::map<std::string, std::string> JobEnvironment(const JobAssignment& job,
                                                    const std::string& workspace) const;

  StandInRunnerOptions options_;
  http::HttpClient& client_;
  process::ProcessRunner& processes_;
  Seam seam_;
  std::ostream& console_;
  JitConfigContents config_;
};

}  // namespace mvr::emulate::github
