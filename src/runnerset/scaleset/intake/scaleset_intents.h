// What the runner set makes of a scale set's job events (issue 54): the same intents the webhook
// intake queues, so both sources share one queue, one launcher and one claim per job. A pure core,
// tested by table; ScaleSetSource (scaleset_source.h) acts on it.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <vector>

#include "base/clock.h"
#include "github/scaleset_client.h"
#include "runnerset/config/config.h"
#include "runnerset/jobs/intent.h"

namespace mvr::runnerset {

// The intent for one event of the set of class `cls` (id `scale_set_id`), received at `now`:
//   JobAssigned  → a launch of a VM whose runner registers in the set (job_id: the runnerRequestId,
//                  the message's one numeric job id; scale_set_id set);
//   JobCompleted → a terminate of the runner that ran it, when it is one of this set's (its name
//                  carries the runner-name prefix); nothing otherwise;
//   anything else (JobStarted, JobAvailable: the listener acquires those) → nothing.
// An event without a repository or a runnerRequestId is nothing too.
std::optional<Intent> IntentOfScaleSetEvent(const github::ScaleSetJobEvent& event,
                                            const RunnerClass& cls, int64_t scale_set_id,
                                            const ServeConfig& config, TimePoint now);

// How many more jobs the sets may acquire now: the set-wide cap (maxConcurrentVMs) less what
// GitHub counts as assigned to each set (totalAssignedJobs: acquired or running; the figure to
// scale on, never message counts), but never less than the cap less what the set itself holds
// (`held`: the cap's seats, launches and their VMs) when it knows: GitHub's figure stays
// inflated after an incident (ARC #4397), and trusted alone it would keep the set from acquiring
// anything while GitHub reassigns and finally abandons the jobs it offers. GitHub's back-pressure
// (X-ScaleSetMaxCapacity) still holds the set to the cap. Never below 0.
int FreeScaleSetCapacity(int max_concurrent_vms, const std::vector<int>& assigned_per_set,
                         std::optional<int> held = std::nullopt);

}  // namespace mvr::runnerset
