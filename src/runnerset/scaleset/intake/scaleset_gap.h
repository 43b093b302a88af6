// What a scale set's session gap hid (issue 54): GitHub keeps no message for a set that has no
// session, so a JobCompleted of one of the set's runners while `mvr serve` was down, or while its
// session was taken over, never comes. The VM would then hold its seat of the cap until the
// janitor's strikes ran out, minutes later, by which time GitHub had stopped re-offering the
// jobs that waited for that seat (the `scaleset` simulation, seeds 20, 29 and 39 of 200). So each
// session the listener opens looks once at every runner the set's classes launched: GitHub
// removes a JIT runner when its one job completes, so a runner GitHub no longer knows has nothing
// left to run, and its VM gets the terminate intent the lost JobCompleted would have queued.
// Thread-safety: GapTerminate is pure; EndRunnersGoneInGap as the clients it is given.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/seam.h"
#include "base/status.h"
#include "github/github.h"
#include "queue/queue.h"
#include "runnerset/config/config.h"
#include "runnerset/jobs/intent.h"
#include "runnerset/table/runner_table.h"

namespace mvr::runnerset {

// What GitHub's REST API said of a mapped runner (GET …/actions/runners/{id}).
enum class RunnerPresence {
  kPresent,  // GitHub still knows it: idle, busy or offline, it is left alone
  kGone,     // 404: removed after its job (or its registration was collected)
  kUnknown,  // the read failed, or the row names no runner id: the janitor decides later
};

// The terminate intent for the VM of `row` (a runner of one of the set's classes) after a gap,
// at `now`: only when GitHub no longer knows its runner (a busy runner is never ended here). It
// names the job the runner's JobStarted bound it to, when the set saw one; else no job.
std::optional<TerminateIntent> GapTerminate(const MappingRow& row, RunnerPresence presence,
                                            const std::optional<JobBinding>& binding,
                                            TimePoint now);

struct GapSweep {
  int ended = 0;   // terminate intents queued
  int unread = 0;  // runners GitHub could not be asked about, or whose intent was not queued
};

// Reads each mapping row of `classes` and its runner, and queues GapTerminate's intents. An
// error only when the rows cannot be read; a runner's own failure is counted in `unread`, for
// the caller to sweep again.
Result<GapSweep> EndRunnersGoneInGap(RunnerTable& table, github::GitHub& github,
                                     queue::Queue& queue, const ServeConfig& config,
                                     const std::vector<std::string>& classes, const Seam& seam);

}  // namespace mvr::runnerset
