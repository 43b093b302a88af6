// sim::World for issue 55, item 3: jobs behind an environment's approval, deliveries in any order
// (late ones, a jobs API that lags the deliveries), and deliveries of another installation, with
// the invariants watched as the run goes:
// - no runner is registered for a job while GitHub has it waiting for its approval;
// - no runner is registered for a job GitHub does not have (another installation's);
// - no launch begun after the set recorded its job completed commits a VM to it; a launch that
//   serves another job its runner's chain left waiting (named on its claim) commits none after
//   the set recorded that job completed, whenever it began.
// The end's checks add that every job ran (none stuck behind a late delivery).
#include "runnerset/jobs/job_state.h"
#include "runnerset/table/runner_table.h"
#include "sim/sim_guest.h"
#include "sim/world.h"

namespace mvr::sim {
namespace {

namespace gh = emulate::github;

int64_t OrderSeconds(Duration d) { return d.count() / 1000; }

}  // namespace

void World::ApplyOrderKnobs() {
  gh::GithubModel& model = github_->model();
  model.SetJobsApiLag(options_.jobs_api_lag);
  if (Status s = model.SetForeignDeliveries(options_.foreign_deliveries); !s.ok()) {
    throw std::invalid_argument("foreign_deliveries: " + s.message());
  }
}

void World::GateJob(gh::JobSpec& spec) {
  if (options_.gated_jobs <= 0 || !Chance(order_random_, options_.gated_jobs)) return;
  spec.wait_for_environment = true;
  spec.approve_after = Duration(
      1'000 + static_cast<int64_t>(order_random_.Next64() %
                                   static_cast<uint64_t>(options_.approval_within.count() + 1)));
}

// After a launcher handled a message: when it told of a job's end and the job's state now says
// completed, the set knows (read from the store itself, no scheduling point).
void World::NoteCompleted(const queue::QueueMessage& message) {
  Result<runnerset::Intent> intent = runnerset::DecodeIntent(message.body);
  if (!intent.ok()) return;
  std::string repository;
  int64_t job_id = 0;
  if (const auto* t = std::get_if<runnerset::TerminateIntent>(&*intent)) {
    repository = t->repository;
    job_id = t->job_id;
  } else if (const auto* e = std::get_if<runnerset::JobEventIntent>(&*intent)) {
    if (e->action != "completed") return;
    repository = e->repository;
    job_id = e->job_id;
  }
  if (job_id <= 0 || completed_known_at_.count(job_id)) return;
  runnerset::JobStateLedger ledger(memory_store_, clock_);
  Result<runnerset::JobState> state = ledger.Get(repository, job_id);
  if (state.ok() && state->phase == runnerset::JobPhase::kCompleted) {
    completed_known_at_[job_id] = scheduler_.Now();
  }
}

void World::OrderChecks() {
  while (true) {
    scheduler_.Sleep(Duration(1'000));
    CheckOrder();
  }
}

void World::CheckOrder() {
  gh::GithubModel& model = github_->model();
  const TimePoint now = scheduler_.Now();
  auto report = [&](const std::string& key, const std::string& what) {
    if (!order_reported_.insert(key).second) return;
    stolen_failures_.push_back(what);
    scheduler_.Note("VIOLATION " + what);
  };
  for (const gh::Runner& runner : model.ListAllRunners()) {
    const int64_t own = LaunchedFor(runner.name, kPrefix);
    if (own == 0) continue;
    Result<gh::Job> job = model.GetJobById(own);
    if (!job.ok()) {
      report("foreign " + runner.name, "runner " + runner.name + " was registered for job " +
                                           std::to_string(own) +
                                           ", which is not this installation's");
    } else if (job->status == "waiting") {
      report("waiting " + runner.name, "runner " + runner.name + " was registered for job " +
                                           std::to_string(own) +
                                           " while it waits for an environment's approval");
    }
  }
  // Launches committed since the last check: each claim that names a VM now and did not then.
  store::ScanRequest scan;
  scan.partition_prefix = "job#";
  scan.limit = 1000;
  do {
    Result<store::Page> page = memory_store_.Scan(scan);
    if (!page.ok()) break;
    for (const store::Item& item : page->items) {
      if (item.key.sort != "claim") continue;
      const runnerset::Claim claim = runnerset::ClaimFromItem(item);
      if (claim.microvm_id.empty() || !committed_seen_.insert(claim.job_id).second) continue;
      // The commit was made after the previous check: late when that check already followed the
      // set's record of the served job's end. The served job is the one the claim names, if it
      // names another (a late queued serving its runner's chain): fenced on that job's start
      // (runnerset::FenceOf), the launch is late whenever it began. A launch of its own job is
      // not fenced (its runner may serve another queued job): late only when it began (its claim
      // was won) after the record, and not when the job ran on a runner launched for another job
      // (a late queued that brings that job its runner, its chain unnamed on the claim).
      const int64_t served = claim.serves_job_id > 0 ? claim.serves_job_id : claim.job_id;
      auto known = completed_known_at_.find(served);
      if (known == completed_known_at_.end() || !order_checked_at_ ||
          *order_checked_at_ < known->second) {
        continue;
      }
      if (served == claim.job_id) {
        if (claim.claimed_ms <= ToUnixMillis(known->second)) continue;
        Result<gh::Job> ran = model.GetJobById(claim.job_id);
        const int64_t ran_on = ran.ok() ? LaunchedFor(ran->runner_name, kPrefix) : 0;
        if (ran_on != 0 && ran_on != claim.job_id) continue;
      }
      report("late " + std::to_string(claim.job_id),
             "a launch committed MicroVM " + claim.microvm_id + " to job " +
                 std::to_string(claim.job_id) +
                 (served != claim.job_id ? " (serving job " + std::to_string(served) + ")" : "") +
                 " at least " + std::to_string(OrderSeconds(*order_checked_at_ - known->second)) +
                 " s after the set recorded the job completed");
    }
    scan.cursor = page->next_cursor;
  } while (!scan.cursor.empty());
  order_checked_at_ = now;
}

}  // namespace mvr::sim
