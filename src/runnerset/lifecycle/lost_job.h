// What to do about the job of a runner whose MicroVM is gone (issue 55, item 4): a VM that failed
// or was terminated while its job ran (a platform error, the 8-hour limit, capacity) leaves the
// job to fail once GitHub gives up on the runner; the set re-runs it once, when allowed. A pure
// decision from the evidence the janitor gathers (janitor_lost.cpp acts on it).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/clock.h"
#include "github/types.h"

namespace mvr::runnerset {

// Where GitHub's jobs API says the row's job is.
enum class LostJobState {
  kUnknown,      // no job (a pool member's row) or the jobs API could not say
  kOnItsRunner,  // queued or in progress, on the row's runner: GitHub has not failed it yet
  kCompleted,    // completed on the row's runner
  kElsewhere,    // ran (or runs) on another runner, or on none
};

struct LostJobEvidence {
  bool rerun_enabled = false;         // janitor.rerunLostJobs
  Duration rerun_max_ran{3'600'000};  // janitor.rerunMaxMinutes
  LostJobState state = LostJobState::kUnknown;
  std::string conclusion;                // the job's, once completed
  std::optional<TimePoint> vm_ended_at;  // GetMicrovm's terminatedAt (none: the VM is unknown)
  std::optional<TimePoint> job_started_at;
  std::optional<TimePoint> job_completed_at;
  int64_t run_attempt = 1;
};

enum class LostJobVerdict {
  kNotLost,       // the job ended before its VM did (or cannot be told): nothing to do
  kWait,          // its VM is gone but GitHub still has the job on its runner: look again later
  kRerun,         // lost: re-run it
  kRerunOff,      // lost, and janitor.rerunLostJobs is off
  kRanTooLong,    // lost after running rerunMaxMinutes or more (it would likely be lost again)
  kAlreadyRerun,  // lost, but it is itself a re-run (run_attempt > 1): at most once
  kNotFailed,     // lost, but GitHub concluded it otherwise (cancelled: nobody wants it run)
};

// A job GitHub completed this long after its VM's end outlived its VM: it was lost with it. A job
// that ends on its own completes before its runner exits and its VM ends.
inline constexpr Duration kLostJobMargin{15'000};

LostJobVerdict DecideLostJob(const LostJobEvidence& e);
// The evidence of the jobs API's `job`, launched for `runner_name` on a VM that ended at
// `vm_ended_at` (GetMicrovm's terminatedAt; nullopt when unknown).
LostJobEvidence LostJobEvidenceOf(const github::Job& job, const std::string& runner_name,
                                  std::optional<TimePoint> vm_ended_at, bool rerun_enabled,
                                  Duration rerun_max_ran);
const char* LostJobVerdictName(LostJobVerdict v);  // "rerun", "ran_too_long", ...

// A job, by repository and id.
struct LostJobRef {
  std::string repository;
  int64_t job_id = 0;
  bool operator==(const LostJobRef&) const = default;
};
// The job whose loss the janitor weighs for a row whose VM is gone: the one its runner ran.
// GitHub hands a queued job to any idle runner whose labels match, so the runner launched for the
// row's job may have taken another; the launch's claim records which (`took_*`, from the taken
// job's `in_progress` delivery). That job, when the claim says this runner took it; else the
// row's own (vm-lost seed 171: a job lost on a runner launched for another was never re-run).
LostJobRef JobTheRunnerRan(const LostJobRef& row_job, const std::string& runner_name,
                           const std::string& took_runner, const LostJobRef& took_job);

}  // namespace mvr::runnerset
