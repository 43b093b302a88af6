// `mvr simulate --report registration-expiry` (issue 55, item 1): how a hot pool fares when
// GitHub collects idle registrations after 5 min, 51 min or 24 h (the reports' figures and a
// day), at the default hotPool.maxAgeSeconds and at the 12 h it had before, so an operator can
// choose. docs/runner-set-pools.md, "Registration expiry", holds the table.
// Thread-safety: RegistrationExpiryReport runs seeds on `threads` worker threads.
#pragma once

#include <string>
#include <vector>

namespace mvr::sim {

struct ExpiryRow {
  int expiry_seconds = 0;   // both of GitHub's limits (listening and offline)
  int max_age_seconds = 0;  // hotPool.maxAgeSeconds
  int seeds = 0;
  int jobs = 0;
  int violations = 0;                  // seeds that broke an invariant
  std::string first_violation;         // "seed N: ..."
  double p50 = 0, p95 = 0;             // queued -> job started, s
  double idle_vm_seconds_per_job = 0;  // running without a job, per job (the reserve's left out)
  double hot_share = 0;                // the jobs that started within 8 s (a resumed hot runner)
};

// One row: a class with a hot pool of 2 and 10 jobs at random times over 3 hours, GitHub's limits
// at `expiry_seconds`, the pool's age limit at `max_age_seconds`, over seeds 1..seeds.
ExpiryRow ExpiryCell(int expiry_seconds, int max_age_seconds, int seeds, int threads);
// The table: expiries of 5 min, 51 min and 24 h, each at the default age limit and at 12 h.
std::vector<ExpiryRow> RegistrationExpiryReport(int seeds, int threads);
// Prints the table (stdout) as rows finish; exits 1 when a seed broke an invariant.
int PrintRegistrationExpiryReport(int seeds, int threads);

}  // namespace mvr::sim
