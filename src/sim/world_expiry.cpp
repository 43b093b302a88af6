// sim::World for issue 55, item 1: GitHub collects idle JIT registrations (listening for minutes,
// offline for an unpublished while; GithubModelOptions), and the invariant watched as the run
// goes: no job is lost or stuck when one expires. Every job starts within one launch and a
// janitor period of being queued (ExpiryBound). The other invariant, no stale hot member served,
// is SimGuest::CheckRegistrationOnResume.
#include "sim/world.h"

namespace mvr::sim {

namespace gh = emulate::github;

// One launch that falls back from a stale hot member to a cold VM (one whose boot fails, retried
// after deferSeconds) plus one janitor period (StolenBound), plus one visibility timeout: a launch
// that fails (a launch timeout shorter than a boot) brings its intent back only after it. One
// launch alone was too tight (seeds 15, 28 and 61 of 100 waited 84-134 s against 80-133 s), and
// so was StolenBound at a 6 s launch timeout (seed 61: 139 s against 137 s).
Duration World::ExpiryBound() const { return StolenBound() + config_.visibility_timeout(); }

void World::ExpiryChecks() {
  QueuedPastBoundChecks("expiry", ExpiryBound(),
                        "one launch plus one janitor period (" +
                            std::to_string(ExpiryBound().count() / 1000) +
                            " s): a registration expired and the job waited for it");
}

void World::QueuedPastBoundChecks(const std::string& tag, Duration bound, const std::string& why) {
  while (true) {
    scheduler_.Sleep(Duration(5'000));
    const TimePoint now = scheduler_.Now();
    for (const gh::Job& job : github_->model().ListAllJobs()) {
      if (job.status != "queued" || cancelled_jobs_.count(job.id)) continue;
      if (now - job.created_at <= bound) continue;
      const std::string key = tag + " " + std::to_string(job.id);
      if (!stolen_reported_.insert(key).second) continue;
      stolen_failures_.push_back("job " + std::to_string(job.id) + " was still queued " +
                                 std::to_string((now - job.created_at).count() / 1000) +
                                 " s after it was queued, past " + why);
      scheduler_.Note("VIOLATION " + stolen_failures_.back());
    }
  }
}

}  // namespace mvr::sim
