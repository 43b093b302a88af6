// Issue 55, item 3: jobs behind an environment's approval, and a job's deliveries in any order
// (world_order.cpp has their invariants).
#include "sim/scenarios.h"

namespace mvr::sim {

std::vector<Scenario> OrderScenarios() {
  return {
      {"approval-gated",
       "10 jobs, 60% behind an environment's approval (queued, waiting, queued again within 2 "
       "min), GitHub's jobs API 20 s behind, a fifth of the webhooks up to a minute late: no "
       "runner for a job while it waits, and every job runs",
       [](uint64_t seed) {
         WorldOptions o;
         o.seed = seed;
         o.jobs = 10;
         o.gated_jobs = 0.6;
         o.approval_within = Duration(120'000);
         o.jobs_api_lag = Duration(20'000);
         o.webhooks.late = 0.2;
         o.webhooks.late_by = Duration(60'000);
         o.webhooks.duplicated = 0.1;
         o.check_order = true;
         return o;
       }},
      {"out-of-order",
       "12 jobs, 40% cancelled within 20 s of being queued, 40% of the webhooks up to 90 s late "
       "(so completed before queued, in_progress before queued), GitHub's jobs API a minute "
       "behind, a fifth of the jobs behind an approval, a fifth of the deliveries copied as "
       "another installation's: no launch commits to a job the set knows completed, none for "
       "another installation, and no job is stuck",
       [](uint64_t seed) {
         WorldOptions o;
         o.seed = seed;
         o.jobs = 12;
         o.cancel_queued = 0.4;
         o.cancel_within = Duration(20'000);
         o.webhooks.late = 0.4;
         o.webhooks.late_by = Duration(90'000);
         o.webhooks.duplicated = 0.2;
         o.jobs_api_lag = Duration(60'000);
         o.gated_jobs = 0.2;
         o.foreign_deliveries = 0.2;
         o.check_order = true;
         return o;
       }},
  };
}

}  // namespace mvr::sim
