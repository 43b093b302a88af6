#include "runnerset/lifecycle/wedged_runner.h"

namespace mvr::runnerset {

WedgedVerdict DecideWedged(const WedgedEvidence& e) {
  if (e.wedged_after <= Duration(0) || !e.supervisor_answered || e.job_started) {
    return WedgedVerdict::kLeave;
  }
  if (e.job == WedgedJobState::kUnknown || e.job == WedgedJobState::kEnded) {
    return WedgedVerdict::kLeave;
  }
  const WedgedVerdict end =
      e.job == WedgedJobState::kQueued ? WedgedVerdict::kEndAndRelaunch : WedgedVerdict::kEnd;
  // Its runner is gone without a job: nothing will ever run on this VM.
  if (e.exited_without_job) return end;
  // A runner alive, without a job this long, while its job waits or was handed to it and never
  // begun: its worker hangs, or GitHub will not hand it anything.
  if (e.supervisor_state == "RUNNING" && e.since_delivered >= e.wedged_after) return end;
  return WedgedVerdict::kLeave;
}

const char* WedgedVerdictName(WedgedVerdict v) {
  switch (v) {
    case WedgedVerdict::kLeave:
      return "leave";
    case WedgedVerdict::kEnd:
      return "end";
    case WedgedVerdict::kEndAndRelaunch:
      return "end_and_relaunch";
  }
  return "unknown";
}

}  // namespace mvr::runnerset
