// Whether a runner is wedged (issue 55, item 5): its process exited without running a job, its
// worker hangs before reading the job (actions/runner #4598, #4418), or it has had no job for
// janitor.wedgedRunnerSeconds since its config was delivered. Its supervisor reports what it
// sees (GET /v1/status: jobStarted, runnerExitedWithoutJob); the janitor then deregisters the
// runner, ends the VM and, when the job is still queued, launches it again. A pure decision from
// the evidence the janitor gathers (janitor_wedged.cpp acts on it).
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "base/clock.h"

namespace mvr::runnerset {

// Where GitHub's jobs API says the job the runner was launched for is.
enum class WedgedJobState {
  kUnknown,      // the jobs API could not say
  kQueued,       // still waiting for a runner (GitHub took it back, or never handed it out)
  kOnItsRunner,  // handed to this runner, which never began it
  kEnded,        // completed, or taken by another runner: the janitor's other phases decide
};

struct WedgedEvidence {
  Duration wedged_after{0};     // janitor.wedgedRunnerSeconds (0: off)
  Duration since_delivered{0};  // since the supervisor accepted the runner's config
  bool supervisor_answered = false;
  std::string supervisor_state;     // IDLE, RUNNING, TERMINATING, ...
  bool job_started = false;         // its runner began a job (the job-started hook ran)
  bool exited_without_job = false;  // its runner's process exited before beginning any job
  WedgedJobState job = WedgedJobState::kUnknown;
};

enum class WedgedVerdict {
  kLeave,           // not wedged (or cannot be told): the janitor's other phases decide
  kEnd,             // wedged: deregister the runner and end the VM
  kEndAndRelaunch,  // wedged, and its job still waits: end it and launch the job again
};

WedgedVerdict DecideWedged(const WedgedEvidence& e);
const char* WedgedVerdictName(WedgedVerdict v);  // "leave", "end", "end_and_relaunch"

}  // namespace mvr::runnerset
