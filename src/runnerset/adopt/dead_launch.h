// A launch that died between delivering its runner's config and committing (issue 53, item 3):
// its claim names a runner and a VM no mapping row does. The runner may be running a job by now
// (GitHub hands a queued job to any idle runner whose labels match), so whoever finds what such a
// launch left (the takeover of its claim, the warm-pool sweeper retiring the member it claimed,
// the janitor) gathers the evidence, decides here, then acts: a runner that runs a job is
// adopted (its mapping row written, so that the job's terminate intent ends the VM as for any
// launch), one that does not is removed and its VM ended.
// Thread-safety: pure functions, but ProbeDeadLaunch, which calls GitHub (safe from any thread).
#pragma once

#include <string>

#include "base/seam.h"
#include "base/status.h"
#include "github/github.h"
#include "runnerset/pools/warm_pool_table.h"
#include "runnerset/table/runner_table.h"

namespace mvr::runnerset {

// What removing the dead launch's runner from GitHub said (GitHub refuses to remove a runner that
// is running a job: 422, or 409 from some versions).
enum class RunnerRemoval {
  kNotTried,     // the one deciding only reads (the janitor)
  kRemoved,      // it was idle: it will take no job now
  kGone,         // NotFound: it ran its job and GitHub deregistered it, or never connected
  kRefusedBusy,  // it is running a job
  kFailed,       // any other error: nothing is known
};
RunnerRemoval RemovalOf(const Status& removed);

struct DeadLaunchEvidence {
  bool has_runner = false;  // the claim names a runner (pending_runner_id > 0)
  RunnerRemoval removal = RunnerRemoval::kNotTried;
  bool listed_busy = false;      // GitHub's runner listing or GET says busy
  bool jobs_api_runs = false;    // the jobs API names the runner on a job in progress
  bool supervisor_runs = false;  // the VM's supervisor says its runner has taken a job
};

enum class DeadLaunchStep {
  kAdopt,  // write the mapping row for its runner: the job runs on, the VM ends after it
  kEnd,    // no job runs there: terminate the VM (its runner is gone or was removed)
  kWait,   // nothing is known (a removal failed): look again later
  kLeave,  // no evidence of a job and no removal tried: the other paths decide
};
const char* DeadLaunchStepName(DeadLaunchStep step);

// Any evidence that the runner runs a job adopts it, whatever else says; a runner removed or gone
// (or none at all: no config was delivered) ends the VM; a failed removal waits.
DeadLaunchStep DecideDeadLaunch(const DeadLaunchEvidence& evidence);

// The evidence the takeover and the sweeper act on: the jobs API's word on the job the launch was
// for (its runner most often took that one; the runner's busy flag can lie, actions/runner
// #4422), then, unless it names the runner, the removal of the runner (GitHub refuses to remove a
// busy one: "remove runner; if busy, adopt", as for a hot member).
DeadLaunchEvidence ProbeDeadLaunch(const Seam& seam, github::GitHub& github,
                                   const github::RunnerScope& scope, const Claim& claim,
                                   const std::string& runner_name, TimePoint deadline);

// The name of the runner the launch holding `claim` registered, for a cold or warm launch
// (JobRunnerName with the first 8 characters of its attempt token). A hot member's runner is named
// on its pool row instead.
std::string DeadLaunchRunnerName(const std::string& prefix, const Claim& claim);

// The mapping row that adopts the dead launch's runner `runner_name` on its VM, with the path it
// took ("cold", "warm", "hot") and the pool member it claimed, if any.
MappingRow AdoptedRow(const Claim& claim, const std::string& runner_name,
                      const std::string& class_label, const PoolMember* member);

}  // namespace mvr::runnerset
