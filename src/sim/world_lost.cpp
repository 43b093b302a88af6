// sim::World for issue 55, items 4 and 5. Item 4: the platform loses a VM half-way through its
// job (SimGuest, guest.lose_vm_mid_job), GitHub fails the job once the runner has been silent for
// lost_runner_fails_job_after, and the janitor re-runs it (janitor.rerunLostJobs). Checked at the
// end: a job lost with its VM is re-run at most once, and its first attempt exactly once (the
// re-run then completes as any job must). Item 5: the runner picking up a job wedges
// (GithubModelOptions::wedged_runners); watched as the run goes: every job starts within
// WedgedBound() of being queued, which only ending the wedged runner and launching again meets.
// Item 4's circuit breaker: below.
#include "runnerset/classes/class_breaker.h"
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

// Item 4's circuit breaker (the `breaker` scenario): the class's image fails its first VMs' boots
// (MicrovmModelOptions::boot_failures_by_image) and the class has a circuitBreaker. Each second
// the watcher reads the class's breaker record (the set's ClassHealth, shared by its processes
// here) and the VMs launched since; at the end: no VM was launched while the class was paused, but
// by a launch admitted before the pause began (its launch timeout and a minute for the calls
// before RunMicrovm), no more VMs while half-open than probes were let through, and the breaker
// opened (so the check is not vacuous). That every job still ran is CheckJobs'.
namespace {

// A launch admitted (its breaker read) just before the pause may call RunMicrovm this long after.
Duration AdmittedBeforeThePause(const runnerset::ServeConfig& config) {
  return config.launch_timeout() + Duration(60'000);
}

}  // namespace

void World::BreakerChecks() {
  const runnerset::RunnerClass& cls = config_.classes.front();
  const runnerset::BreakerPolicy policy = runnerset::BreakerPolicyOf(cls);
  const Duration grace = AdmittedBeforeThePause(config_);
  while (true) {
    scheduler_.Sleep(Duration(1'000));
    const runnerset::BreakerRecord r = class_health_.breaker().RecordOf(cls);
    if (r.until_ms > 0) breaker_seen_.pauses.insert(r.until_ms);
    if (r.probe_ms >= r.until_ms && r.until_ms > 0) {
      breaker_seen_.probes[r.until_ms].insert(r.probe_ms);
    }
    for (const nlohmann::json& vm : ModelVms()) {
      const std::string id = vm.value("microvmId", "");
      if (id.empty() || !breaker_seen_.vms.insert(id).second) continue;
      const TimePoint at(Duration(static_cast<int64_t>(vm.value("startedAt", 0.0) * 1000)));
      const int64_t at_ms = ToUnixMillis(at);
      const runnerset::BreakerVerdict v = runnerset::DecideBreaker(policy, r, at);
      // The record is at most a second newer than the launch: a pause opened since says nothing
      // of it (its opened_ms is after the launch), and neither does a close since.
      if (v.phase == runnerset::BreakerPhase::kOpen && at_ms >= r.opened_ms + grace.count()) {
        stolen_failures_.push_back(
            "VM " + id + " of the class was launched at " + std::to_string(at_ms) +
            " ms while its circuit breaker paused "
            "it (since " +
            std::to_string(r.opened_ms) + " ms, until " + std::to_string(r.until_ms) + " ms)");
        scheduler_.Note("VIOLATION " + stolen_failures_.back());
      }
      if (v.phase == runnerset::BreakerPhase::kHalfOpen) {
        breaker_seen_.half_open_vms[r.until_ms].push_back(id);
      }
    }
  }
}

void World::CheckBreaker(WorldReport& report) {
  if (breaker_seen_.pauses.empty()) {
    report.violations.push_back(
        "the class's circuit breaker never paused it, though its image failed its first " +
        std::to_string(options_.image_boot_failures) + " boots");
  }
  for (const auto& [until, vms] : breaker_seen_.half_open_vms) {
    const size_t probes = breaker_seen_.probes[until].size();
    if (vms.size() <= probes) continue;
    std::string ids;
    for (const std::string& id : vms) ids += " " + id;
    report.violations.push_back("after the pause ending at " + std::to_string(until) + " ms, " +
                                std::to_string(vms.size()) +
                                " VMs of the class were launched "
                                "while half-open (" +
                                std::to_string(probes) + " probes let through):" + ids);
  }
}

}  // namespace mvr::sim
