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

// How many of the offers in one message set `index` may acquire: the set-wide cap
// (maxConcurrentVMs) less what GitHub counts as assigned to the *other* sets (totalAssignedJobs:
// acquired or running; never message counts). The set's own holdings are GitHub's to count: it
// offers a set no more than its X-ScaleSetMaxCapacity less the jobs the set holds, by its real
// count. The set's own totalAssignedJobs is not subtracted again: it stays inflated after an
// incident (ARC #4397), and a listener that trusted it acquired nothing while GitHub reassigned
// and finally abandoned the jobs it offered (the `scaleset` simulation). Never below 0.
int FreeScaleSetCapacity(int max_concurrent_vms, const std::vector<int>& assigned_per_set,
                         size_t index);

}  // namespace mvr::runnerset
