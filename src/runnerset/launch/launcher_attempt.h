// Launcher::Attempt: one launch in flight, what it holds and what a failure must undo. Shared by
// the launcher's files (not part of its interface).
// Thread-safety: one per launch; not shared.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fleet/microvm_lifecycle.h"
#include "fleet/runner_registration.h"
#include "runnerset/launch/launcher.h"

namespace mvr::runnerset {

// Time a failing launch may spend cleaning up after its deadline.
inline constexpr Duration kLaunchCleanupTime{60'000};

// What gathering the launch's evidence (launch_decision.h) kept for carrying out the verdict.
struct Launcher::Gathered {
  JobAction action = JobAction::kQueued;
  JobState state;     // the job's state after the intent's action
  std::string stale;  // why a queued is late (empty: it is not)
  Status job_error;   // reading the job's state failed
  Status need_error;  // GitHub's rate limits kept StillNeeded from answering
  std::optional<CapSeat> seat;
  Status seat_error;              // the cap's seats could not be read
  SeatWait seat_wait;             // why no seat was taken, and when the intent is due back
  std::string held_class;         // the class whose runner GitHub refuses (a kHold verdict)
  std::optional<ServedJob> head;  // the job StillNeeded found waiting (FenceOf)
  const github::Job* just_read = nullptr;  // GitHub's answer for the job, read by the caller
};

struct Launcher::Attempt {
  Attempt(const Seam& seam, Launcher& l, const LaunchIntent& in, const RunnerClass& cls)
      : intent(in),
        runner_class(cls),
        runners(seam, l.deps_.github, l.scope_),
        vms(seam, l.deps_.microvms) {}

  const LaunchIntent& intent;
  const RunnerClass& runner_class;
  fleet::RunnerRegistration runners;
  fleet::MicrovmLifecycle vms;
  TimePoint deadline{};
  CapSeat seat;  // the attempt's seat of the cap (cap_ledger.h)
  // The seat must stay when the launch fails: its VM is left running, or RunMicrovm's outcome is
  // unknown (a VM may exist; the next reconciliation finds out).
  bool keep_seat = false;
  store::Key claim;
  std::string token;
  std::string runner_name;
  int64_t runner_id = 0;
  std::string microvm_id;
  bool warm = false;  // the VM is a pool member this attempt claimed and resumed
  bool hot = false;   // ... a hot one: its runner (runner_name, runner_id) is registered already
  // RunMicrovm failed for want of capacity or quota (IsOutOfCapacity): a fallbackClass may serve.
  bool out_of_capacity = false;
  // Its VM failed at the platform (RunMicrovm's InternalServerException, or the VM ended while it
  // booted): a failure the class's circuit breaker counts.
  bool vm_failed = false;
  // The job's class (before a fallback or a route) when this attempt is the job's first: a claim
  // it wins counts the job among the class's arrivals (pool_target.h). nullptr: not counted.
  const RunnerClass* counts_for = nullptr;
  std::optional<github::JitConfig> jit;
  // The control nonce the VM was launched with (a cold launch's, kept in memory only until its
  // delivery); empty for a pool member launched without one.
  Secret nonce;
  LaunchTimes times;
  std::string job_key;  // the timeline's name of the job
  // The other job this launch serves, whose recorded start refuses the commit (FenceOf).
  std::optional<ServedJob> fence;
};

}  // namespace mvr::runnerset
