// sim::World's workloads: the jobs a scenario queues for the runner set, and the workflow runs
// that use the Action (`mvr start` / `mvr stop`) on a warm pool.
#include <exception>
#include <stdexcept>

#include "action/pool_keys.h"
#include "action/pool_records.h"
#include "action/server_handle.h"
#include "action/start_stop.h"
#include "base/retry.h"
#include "sim/world.h"

namespace mvr::sim {

namespace gh = emulate::github;

// Queues the jobs over the arrival window; the GitHub model announces each with a webhook.
void World::Workload() {
  const TimePoint start = scheduler_.Now();
  if (!options_.history_at.empty()) {
    runnerset::ArrivalHistory history(memory_store_, workload_.seam);
    for (Duration at : options_.history_at) {
      if (!history.Record(kLabel, start + at).ok()) throw std::logic_error("recording history");
    }
  }
  if (options_.first_job_after.count() > 0) workload_.sleeper.Sleep(options_.first_job_after);
  const int64_t gap = std::max<int64_t>(1, options_.arrivals.count() / std::max(1, options_.jobs));
  for (int i = 0; i < options_.jobs; ++i) {
    if (!options_.arrival_at.empty()) {
      const TimePoint at = start + options_.arrival_at[static_cast<size_t>(i)];
      if (at > scheduler_.Now()) workload_.sleeper.Sleep(at - scheduler_.Now());
    } else {
      workload_.sleeper.Sleep(Duration(
          static_cast<int64_t>(workload_.random.Next64() % static_cast<uint64_t>(2 * gap))));
    }
    gh::JobSpec spec;
    spec.repository = JobRepository(i);
    spec.labels = {"self-hosted", kLabel};
    if (options_.scale_set.enabled) spec.labels = {kLabel};  // runs-on: the set's name alone
    spec.steps = {"make test"};
    GateJob(spec);
    Result<gh::Job> job = github_->model().QueueJob(spec);
    if (job.ok()) queued_at_[job->id] = scheduler_.Now();
    if (job.ok()) MaybeCancel(job->id);
  }
}

// One workflow run's job using the Action on the pool: start (a new member, or a suspended one
// resumed), run a job on the runner it registered, stop (suspend). An abandoning run never
// stops in time (cancelled); later it stops with its old handle, which must be refused with
// no lifecycle call once another run has taken the lease over.
void World::ActionRun(Process& p, int index) {
  WaitForActionRun(p, index);
  SimHttpClient own_vms(scheduler_, microvms_.api(), microvms_faults_, "microvms");
  aws::MicrovmsClient vms(VmsClientOptions(),
                          aws::MicrovmsClientDeps{own_vms, credentials_, p.seam.seam});
  action::ActionDeps deps{p.seam.seam,
                          vms,
                          *p.github,
                          ingress_http_,
                          [this](const Secret& s) { action_secrets_.push_back(s.Reveal()); },
                          nullptr,
                          &store_,
                          Secret(kActionControlKey)};
  const bool final_wave = index >= options_.action_runs;
  // A crashing run dies somewhere in its start, or its stop, if it gets that far.
  const int crash_after =
      !final_wave && Chance(chance_, options_.action_crashes) ? CrashPoint(120) : 0;
  scheduler_.CrashAfter(crash_after);
  OnExit counted([this, unwinding = std::uncaught_exceptions()] {
    if (std::uncaught_exceptions() > unwinding) ++action_crashed_;  // it died (Killed)
  });
  const action::StartCommand start = ActionStart(index);
  const TimePoint began = scheduler_.Now();
  Result<action::StartResult> started = action::StartFlow(deps).Run(start);
  if (!CountStart(start, started, began)) return;
  gh::JobSpec spec;
  spec.repository = kRepository;
  spec.labels = {started->label};
  spec.steps = {"make test"};
  Result<gh::Job> job = github_->model().QueueJob(spec);
  if (job.ok()) queued_at_[job->id] = scheduler_.Now();
  const bool abandon =
      static_cast<double>(p.seam.random.Next64() >> 11) * 0x1.0p-53 < options_.action_abandon;
  action::StopCommand stop;
  stop.endpoints = start.endpoints;
  stop.server = started->server;
  stop.state_table = "memory:";
  stop.repository_id = "123";
  if (!abandon) {
    StopAfterTheJob(p, deps, stop, job, start.identity.run_id);
  } else {
    StopLate(p, deps, stop, started->server, own_vms, start.identity.run_id);
  }
}

// A run of the first waves starts somewhere in the arrival window; the final wave comes after
// the services have recovered, when whatever the faults left behind must be reconciled.
void World::WaitForActionRun(Process& p, int index) {
  if (index < options_.action_runs) {
    const int64_t window = std::max<int64_t>(1, options_.arrivals.count());
    p.seam.sleeper.Sleep(Duration(static_cast<int64_t>(p.seam.random.Next64() % window)));
    return;
  }
  p.seam.sleeper.Sleep(options_.arrivals + Duration(1'800'000));
  for (Faults* f : {&store_faults_, &queue_faults_, &microvms_faults_, &github_faults_}) f->End();
}

action::StartCommand World::ActionStart(int index) const {
  action::StartCommand start;
  start.endpoints = {kRepository, gh::InProcessGithub::kApiUrl, Secret(kToken), "us-east-1"};
  start.identity.repository_id = "123";
  start.identity.run_id = std::to_string(1000 + index);
  start.identity.run_attempt = "1";
  start.identity.job = "build";
  start.image_id = kImage;
  start.event_name = "push";
  start.server = "build-cache";
  start.state_table = "memory:";
  start.server_capacity = options_.action_capacity;
  start.lease_timeout_seconds = options_.action_lease_timeout_seconds;
  return start;
}

// Counts a start's outcome; true when it started (and the run goes on to its job).
bool World::CountStart(const action::StartCommand& start,
                       const Result<action::StartResult>& started, TimePoint began) {
  if (!started.ok()) {
    if (started.status().message().find("at capacity") != std::string::npos) {
      ++action_at_capacity_;
    } else if (IsRetryable(started.status())) {
      // A service that keeps failing (the store's own retries spent) may fail a start, with a
      // clear error; what it leaves behind is checked by the other invariants.
      ++action_gave_up_;
    } else {
      action_failures_.push_back("start of run " + start.identity.run_id +
                                 " failed: " + started.status().ToString());
    }
    return false;
  }
  ++action_started_;
  (started->warm_hit ? action_start_warm_ : action_start_cold_)
      .push_back(static_cast<double>((scheduler_.Now() - began).count()) / 1000.0);
  return true;
}

// The job runs, then the run's stop step.
void World::StopAfterTheJob(Process& p, const action::ActionDeps& deps,
                            const action::StopCommand& stop, const Result<gh::Job>& job,
                            const std::string& run_id) {
  for (int i = 0; i < 120 && job.ok(); ++i) {
    Result<gh::Job> now = github_->model().GetJobById(job->id);
    if (now.ok() && now->status == "completed") break;
    p.seam.sleeper.Sleep(Duration(5'000));
  }
  Result<action::StopResult> stopped = action::StopFlow(deps).Run(stop);
  if (!stopped.ok() && IsRetryable(stopped.status())) {
    ++action_gave_up_;
  } else if (!stopped.ok()) {
    action_failures_.push_back("stop of run " + run_id + " failed: " + stopped.status().ToString());
  }
}

// Cancelled: the stop comes long after the lease expired (or never, for a real cancel). Once
// another run has taken the member over, the old handle must be refused with no lifecycle call.
void World::StopLate(Process& p, const action::ActionDeps& deps, const action::StopCommand& stop,
                     const std::string& server, const SimHttpClient& own_vms,
                     const std::string& run_id) {
  p.seam.sleeper.Sleep(Duration(options_.action_lease_timeout_seconds * 3000));
  Result<action::PoolHandle> handle = action::DecodePoolHandle(server);
  if (!handle.ok()) return;
  Result<std::optional<store::Item>> row =
      memory_store_.Get({action::PoolPartition(handle->repository_id, handle->server_key_hash),
                         action::MemberSortKey(handle->member_id)});
  int64_t generation = 0;
  if (row.ok() && *row) {
    Result<action::MemberRecord> member = action::MemberFromItem(**row);
    if (member.ok()) generation = member->generation;
  }
  if (generation <= handle->generation) {
    // Nobody took it over: the late stop (a cancelled run's always() step) releases it.
    Result<action::StopResult> late = action::StopFlow(deps).Run(stop);
    if (!late.ok() && !IsRetryable(late.status())) {
      action_failures_.push_back("the late stop of run " + run_id +
                                 " failed: " + late.status().ToString());
    }
    return;
  }
  const size_t calls_before = own_vms.mutations();
  Result<action::StopResult> late = action::StopFlow(deps).Run(stop);
  const size_t lifecycle_calls = own_vms.mutations() - calls_before;
  if (late.ok() && late->outcome != "already released") {
    action_failures_.push_back("run " + run_id + "'s stale handle (generation " +
                               std::to_string(handle->generation) + ", member now at " +
                               std::to_string(generation) + ") was accepted: " + late->outcome);
  } else if (lifecycle_calls > 0) {
    action_failures_.push_back("run " + run_id + "'s stale stop made " +
                               std::to_string(lifecycle_calls) + " MicroVMs lifecycle call(s)");
  } else {
    ++action_stale_stops_;
  }
}

}  // namespace mvr::sim
