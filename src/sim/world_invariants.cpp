// sim::World's invariants (docs/simulation.md, "Invariants"): the pool's capacity, watched as the
// run goes, and at the end every job run, no VM past the janitor's bound, no runner left, no
// secret in a log line; then the run's figures for the report.
#include <algorithm>
#include <chrono>

#include "base/secret_finder.h"
#include "runnerset/config/runner_name.h"
#include "sim/world.h"

namespace mvr::sim {

using nlohmann::json;
namespace gh = emulate::github;

// Every VM the MicroVMs model holds, read without a scheduling point (the checks' view).
std::vector<json> World::ModelVms() {
  return microvms_.WithModel([&](emulate::microvms::MicrovmModel& model) {
    Result<json> listed = model.Invoke("ListMicrovms", json::object());
    std::vector<json> out;
    if (listed.ok()) out = (*listed)["items"].get<std::vector<json>>();
    return out;
  });
}

// The capacity a pooled request states bounds the members it creates: the pool never holds
// more live VMs than the runs' server-capacity.
void World::CheckCapacity() {
  if (options_.action_runs == 0) {
    CheckCap();
    return;
  }
  int live = 0;
  for (const json& vm : ModelVms()) {
    const std::string state = vm.value("state", "");
    live += state != "TERMINATED" && state != "TERMINATING";
  }
  if (live > options_.action_capacity && !over_capacity_) {
    over_capacity_ = true;
    action_failures_.push_back("the pool holds " + std::to_string(live) +
                               " live VMs, over the runs' server-capacity of " +
                               std::to_string(options_.action_capacity));
    scheduler_.Note("VIOLATION over capacity");
  }
}

// The runner set never holds more live VMs than maxConcurrentVms, whichever of its launchers
// launched them (issue 56: the cap is counted in the store, shared by every process). Pool members
// are not jobs and do not count against the cap, so a run with pools is not checked here.
void World::CheckCap() {
  if (!options_.runner_set || options_.has_pool() || over_cap_) return;
  const int live = microvms_.WithModel(
      [](emulate::microvms::MicrovmModel& model) { return model.CountHoldingCapacity(); });
  if (live <= options_.max_concurrent_vms) return;
  over_cap_ = true;
  action_failures_.push_back("the set holds " + std::to_string(live) +
                             " live VMs, over its maxConcurrentVms of " +
                             std::to_string(options_.max_concurrent_vms));
  scheduler_.Note("VIOLATION over the cap");
}

void World::CheckTheEnd(WorldReport& report) {
  const std::vector<std::string> seen = guest_.violations();
  report.violations.insert(report.violations.begin(), seen.begin(), seen.end());
  report.violations.insert(report.violations.end(), action_failures_.begin(),
                           action_failures_.end());
  report.violations.insert(report.violations.end(), stolen_failures_.begin(),
                           stolen_failures_.end());
  CheckJobs(report);
  CheckVms(report);
  CheckRunners(report);
  CheckLogs(report);
  CheckAuthOutage(report);
  CheckRunnerVersions(report);
  CheckRateLimits(report);
  CheckTokenRequests(report);
  if (options_.check_lost) CheckLost(report);
  if (options_.check_breaker) CheckBreaker(report);  // world_lost.cpp
  if (options_.check_fair_share) CheckFairShare(report);
  if (options_.scale_set.check) CheckScaleSet(report);
  ReportFigures(report);
}

// Every job completed successfully.
void World::CheckJobs(WorldReport& report) {
  const std::vector<gh::Job> jobs = github_->model().ListAllJobs();
  report.jobs = static_cast<int>(jobs.size());
  const std::map<int64_t, JobTimes> times = guest_.jobs();
  for (const gh::Job& job : jobs) {
    // A busy runner is never deregistered (its job would fail with it, actions/runner #4422).
    for (const gh::TimelineEntry& e : job.timeline) {
      if (e.event == "runner_removed_while_busy") {
        report.violations.push_back("runner " + e.detail + " was deregistered while it ran job " +
                                    std::to_string(job.id));
      }
    }
    if (cancelled_jobs_.count(job.id)) {  // cancelled by the workload (world_stolen.cpp)
      ++report.jobs_cancelled;
      continue;
    }
    if (options_.check_lost && LostJobExcused(job)) {  // world_lost.cpp
      ++report.jobs_lost;
      continue;
    }
    if (job.status == "completed" && job.conclusion == "success") {
      ++report.jobs_completed;
    } else {
      report.violations.push_back("job " + std::to_string(job.id) + " never ran: it is " +
                                  job.status +
                                  (job.conclusion.empty() ? "" : " (" + job.conclusion + ")"));
    }
    auto started = times.find(job.id);
    auto queued = queued_at_.find(job.id);
    if (started != times.end() && started->second.started && queued != queued_at_.end()) {
      report.start_seconds.push_back(
          static_cast<double>((*started->second.started - queued->second).count()) / 1000.0);
    }
  }
}

// Every VM older than the janitor's bound has ended, but a warm pool's SUSPENDED members.
void World::CheckVms(WorldReport& report) {
  const double now_s = std::chrono::duration<double>(scheduler_.Now().time_since_epoch()).count();
  const double bound_s = static_cast<double>(JanitorBound().count()) / 1000.0;
  const bool pools = options_.has_pool() || options_.action_runs > 0;
  for (const json& vm : ModelVms()) {
    const std::string state = vm.value("state", "");
    const double age_s = now_s - vm.value("startedAt", 0.0);
    if (state == "TERMINATED" || state == "TERMINATING" || age_s < bound_s ||
        (pools && state == "SUSPENDED")) {
      continue;
    }
    report.violations.push_back("VM " + vm.value("microvmId", "") + " is still " + state +
                                " after " + std::to_string(static_cast<int64_t>(age_s)) +
                                " s, past the janitor's bound of " +
                                std::to_string(static_cast<int64_t>(bound_s)) + " s");
  }
}

// No runner is left registered, but parked hot runners and those crashed Action runs left.
void World::CheckRunners(WorldReport& report) {
  for (const gh::Runner& runner : github_->model().ListAllRunners()) {
    // A hot member's runner stays registered, parked with its suspended VM.
    const bool hot_pool = options_.hot_pool_size > 0 || options_.hot_pool_target_seconds > 0;
    if (hot_pool && runnerset::ParseRunnerName(config_.runner_name_prefix, runner.name).kind ==
                        runnerset::RunnerNameParts::Kind::kHot) {
      continue;
    }
    // A run that died between registering its runner and naming it on its member leaves it
    // unused: no reconcile knows it, and GitHub removes an ephemeral runner that has not
    // connected for a day. At most one such runner per crashed run, never one given a job.
    if (!runner.job_id && !runner.busy && report.action_runners_left < action_crashed_) {
      ++report.action_runners_left;
      continue;
    }
    report.violations.push_back("runner " + runner.name + " is still registered at the end");
  }
}

// How long a VM with no job may live. A launch that crashed after RunMicrovm leaves a VM its
// claim protects until the takeover age; then the intent comes back after the visibility
// timeout (the takeover terminates it) or the janitor strikes it out: takeover + visibility +
// (strikes + 2) sweeps. The janitor suspects no VM younger than graceSeconds nor one whose
// launch may still be running (the launch timeout), so with a short takeover age that wait
// bounds it instead. A janitor that paces itself to GitHub's hourly budget sweeps less often than
// its interval (skipping sweeps): then its longest gap between sweeps, so far, is the interval.
Duration World::JanitorBound() const {
  const runnerset::JanitorSettings& j = config_.janitor;
  Duration interval(j.interval_seconds * 1000LL);
  interval = std::max(interval, janitor_gap_);
  if (janitor_swept_) interval = std::max(interval, scheduler_.Now() - *janitor_swept_);
  const Duration takeover = config_.claim_takeover_after() + config_.visibility_timeout();
  const Duration unsuspected = Duration(j.grace_seconds * 1000LL) + config_.launch_timeout();
  // While `mvr serve` is down (down-while-queued) nothing can reap a VM: the bound waits it out.
  const Duration down = options_.webhook_only_down ? Duration(0) : options_.set_down_for;
  return std::max(takeover, unsuspected) + down + (j.strikes + 2) * interval;
}

Duration World::PoolBound() const {
  Duration interval(config_.warm_pool.interval_seconds * 1000LL);
  interval = std::max(interval, sweeper_gap_);
  if (sweeper_swept_) interval = std::max(interval, scheduler_.Now() - *sweeper_swept_);
  return config_.launch_timeout() + 2 * interval + Duration(30'000);
}

// No secret in any log line of any actor or service.
void World::CheckLogs(WorldReport& report) {
  std::vector<std::string> secrets = guest_.secrets();
  secrets.insert(secrets.end(), action_secrets_.begin(), action_secrets_.end());
  for (const char* fixture : {kToken, kFixedToken, kWebhookSecret, kSecretKey}) {
    secrets.emplace_back(fixture);
  }
  std::vector<const MemorySink*> sinks = {&services_sink_, &platform_.sink, &webhooks_.sink,
                                          &workload_.sink, &chaos_.sink};
  for (const auto& p : processes_) sinks.push_back(&p->seam.sink);
  if (options_.keep_logs) {
    for (const MemorySink* sink : sinks) {
      for (const std::string& line : sink->lines()) report.logs.push_back(line);
    }
  }
  const SecretFinder finder(secrets);
  for (const MemorySink* sink : sinks) {
    for (const std::string& line : sink->lines()) {
      if (finder.FoundIn(line)) {
        report.violations.push_back("a secret reached a log line: " + line.substr(0, 120));
        return;
      }
    }
  }
}

// While GitHub refused the credentials, the set sent no request storm: each process probes on
// its backoff (waits of 2 s doubling, jittered down to half at most: at most 7 refusals a process
// in any minute, one counted for a call already on its way, and one per 64 s once the waits have
// grown), no 401 after the fix; each process logged at most one "failing" and one "recovered"
// line, the janitor (which calls GitHub every sweep) both, and it ended healthy.
void World::CheckAuthOutage(WorldReport& report) {
  if (options_.credentials_outage.count() == 0) return;
  if (!revoked_at_ || !fixed_at_) {
    report.violations.push_back("the credentials outage did not run to its end");
    return;
  }
  const std::vector<TimePoint> refused = github_->auth().refusals();
  const int64_t processes = static_cast<int64_t>(processes_.size());
  const int64_t per_minute = 7 * processes;
  const int64_t outage_s = options_.credentials_outage.count() / 1000;
  const int64_t total = processes * (8 + outage_s / 64);
  if (static_cast<int64_t>(refused.size()) > total) {
    report.violations.push_back("GitHub answered " + std::to_string(refused.size()) +
                                " requests 401 in a " + std::to_string(outage_s) +
                                " s outage, over the backoff's bound of " + std::to_string(total));
  }
  for (size_t i = 0, j = 0; i < refused.size(); ++i) {
    while (j < refused.size() && refused[j] < refused[i] + Duration(60'000)) ++j;
    if (static_cast<int64_t>(j - i) > per_minute) {
      report.violations.push_back("a request storm: " + std::to_string(j - i) +
                                  " requests answered 401 within a minute (bound " +
                                  std::to_string(per_minute) + ")");
      break;
    }
  }
  if (!refused.empty() && refused.back() > *fixed_at_) {
    report.violations.push_back("GitHub answered 401 after the secret was fixed");
  }
  int failing_total = 0;
  for (const auto& p : processes_) {
    int failing = 0, recovered = 0;
    for (const std::string& line : p->seam.sink.lines()) {
      failing += line.find("\"github auth failing\"") != std::string::npos;
      recovered += line.find("\"github auth recovered\"") != std::string::npos;
    }
    failing_total += failing;
    const bool janitor = p->role == Role::kJanitor;
    if (failing > 1 || recovered > failing || (janitor && recovered != failing) ||
        (janitor && p->github->AuthFailingSince())) {
      report.violations.push_back("a " + std::string(janitor ? "janitor" : "launcher") +
                                  " logged " + std::to_string(failing) + " auth failing and " +
                                  std::to_string(recovered) + " recovered lines for one outage" +
                                  (p->github->AuthFailingSince() ? ", and still fails" : ""));
    }
  }
  if (failing_total == 0) report.violations.push_back("no process noticed the credentials outage");
}

// The run's figures: the Action's counts, the janitor's counters, latencies, calls, faults.
void World::ReportFigures(WorldReport& report) {
  report.action_started = action_started_;
  report.action_at_capacity = action_at_capacity_;
  report.action_stale_stops = action_stale_stops_;
  report.action_gave_up = action_gave_up_;
  report.action_crashed = action_crashed_;
  report.action_start_cold = action_start_cold_;
  report.action_start_warm = action_start_warm_;
  report.webhook_handler_crashes = webhook_handler_crashes_;
  report.runners_started = guest_.runners_started();
  for (const char* counter :
       {"sweeps", "strikes_added", "strikes_cleared", "busy_spared", "runners_removed",
        "vms_terminated", "orphans_terminated", "launches_recovered", "errors"}) {
    if (int64_t n = metrics_.GetJanitor(counter)) report.janitor[counter] = n;
  }
  report.vm_usage = guest_.Usage(scheduler_.Now());
  report.reserve_usage = guest_.ReserveUsage(scheduler_.Now());
  auto seconds = [](Duration d) { return static_cast<double>(d.count()) / 1000.0; };
  for (const auto& [job, t] : guest_.jobs()) {
    if (t.started && t.finished) report.job_seconds.push_back(seconds(*t.finished - *t.started));
  }
  for (const auto& [job, l] : guest_.launches()) {
    auto queued = queued_at_.find(job);
    if (queued == queued_at_.end()) continue;
    report.to_vm_running.push_back(seconds(l.vm_ready - queued->second));
    report.to_first_log.push_back(seconds(l.runner_started - l.vm_ready));
    report.to_connected.push_back(seconds(l.connected - l.runner_started));
    report.to_job.push_back(seconds(l.job_started - l.connected));
  }
  report.microvms_calls = vms_http_.requests();
  report.github_calls = github_http_.requests();
  report.microvms_operations = vms_http_.by_operation();
  report.github_operations = github_http_.by_operation();
  report.store_calls = store_.calls();
  report.queue_calls = queue_.calls();
  report.lambda = lambda_;
  for (const Faults* f : {&store_faults_, &queue_faults_, &microvms_faults_, &github_faults_}) {
    for (const auto& [what, n] : f->counts()) report.faults[what] += n;
  }
  if (launches_died_at_commit_ > 0) {
    report.faults["launch died before its commit"] = launches_died_at_commit_;
  }
}

}  // namespace mvr::sim
