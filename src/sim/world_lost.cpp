// sim::World for issue 55, items 4 and 5. Item 4: the platform loses a VM half-way through its
// job (SimGuest, guest.lose_vm_mid_job), GitHub fails the job once the runner has been silent for
// lost_runner_fails_job_after, and the janitor re-runs it (janitor.rerunLostJobs). Checked at the
// end: a job lost with its VM is re-run at most once, and its first attempt exactly once (the
// re-run then completes as any job must). Item 5: the runner picking up a job wedges
// (GithubModelOptions::wedged_runners); watched as the run goes: every job starts within
// WedgedBound() of being queued, which only ending the wedged runner and launching again meets.
#include "sim/world.h"

namespace mvr::sim {

namespace gh = emulate::github;

void LifecycleConfig(const WorldOptions& o, nlohmann::json& janitor) {
  if (o.rerun_lost_jobs) janitor["rerunLostJobs"] = true;
  if (o.wedged_runner_seconds > 0) janitor["wedgedRunnerSeconds"] = o.wedged_runner_seconds;
}

void World::ApplyLostKnobs() {
  if (options_.guest.lose_vm_mid_job <= 0) return;
  guest_.SetLoseVm([this](const std::string& microvm_id) {
    microvms_.WithModel([&](emulate::microvms::MicrovmModel& m) {
      m.ProgramExited(microvm_id, "lost mid-job: a platform failure (simulated)");
      return 0;
    });
  });
}

namespace {

bool LostWithItsVm(const gh::Job& job) {
  for (const gh::TimelineEntry& e : job.timeline) {
    if (e.event == "runner_lost") return true;
  }
  return false;
}

}  // namespace

bool World::LostJobExcused(const gh::Job& job) const { return LostWithItsVm(job); }

void World::CheckLost(WorldReport& report) {
  const std::vector<gh::Job> jobs = github_->model().ListAllJobs();
  std::map<int64_t, std::vector<int>> attempts;  // by run
  for (const gh::Job& job : jobs) attempts[job.run_id].push_back(job.run_attempt);
  for (const gh::Job& job : jobs) {
    if (!LostWithItsVm(job)) continue;
    int later = 0;
    for (int a : attempts[job.run_id]) later += a > job.run_attempt;
    const std::string id = std::to_string(job.id);
    if (later > 1) {
      report.violations.push_back("job " + id + " was lost with its VM and re-run " +
                                  std::to_string(later) + " times: at most once");
    } else if (job.run_attempt == 1 && later == 0) {
      report.violations.push_back("job " + id +
                                  " was lost with its VM and never re-run: it failed for good");
    } else if (job.run_attempt > 1 && later > 0) {
      report.violations.push_back("job " + id + ", itself a re-run, was lost and re-run again");
    }
  }
}

// Two recoveries, each the wedged runner's wedgedRunnerSeconds (or, for a runner that wedged on
// another job than its own, the stuck-launch recovery's stuckLaunchSeconds, whichever is longer:
// seed 7 of the first 10) and a janitor period for the sweep that acts to come round; three
// launches, each bounded by its timeout and a deferral (as StolenBound counts them); and a minute
// for the boots and GitHub's hand-over. Two, not one: a job's wait can hold two wedges, its own
// (GitHub's model wedges at most one runner a job) and that of a runner launched for it that took
// another job first and wedged on that one (seed 232: ended at 11:00, its own third runner then
// wedged on it), or of a job whose runner wedged, which GitHub re-queued and handed to a runner
// launched for this one (seed 189, twice; the taken chain then counts that job's spent launch as
// serving this one, and the stuck-launch recovery, due once the job is stuckLaunchSeconds old,
// comes the next period). One recovery was the bound before; seeds 189 and 232 of 1..300 waited
// 3 s past it. The planted ignore-wedged still fails: its wedged runner lives out the idle
// reaping's 30-minute grace, past this bound.
Duration World::WedgedBound() const {
  const Duration recovery = std::max(Duration(options_.wedged_runner_seconds * 1000LL),
                                     Duration(config_.janitor.stuck_launch_seconds * 1000LL)) +
                            Duration(config_.janitor.interval_seconds * 1000LL);
  return 3 * (config_.launch_timeout() + config_.defer_delay()) + 2 * recovery +
         Duration(config_.janitor.interval_seconds * 1000LL) + Duration(60'000);
}

void World::WedgedChecks() {
  QueuedPastBoundChecks("wedged", WedgedBound(),
                        std::to_string(WedgedBound().count() / 1000) +
                            " s: the runner it was handed to wedged and nothing took over");
}

}  // namespace mvr::sim
