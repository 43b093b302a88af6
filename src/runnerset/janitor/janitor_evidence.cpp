// Janitor: whether a runner is running a job, on evidence other than its `busy` flag. GitHub's
// REST API has answered busy:false for a runner running a job (actions/runner #4422), and a
// DELETE may believe the same lie, so before the janitor deregisters a runner or terminates its
// VM it asks the jobs API, whose in-progress jobs name their runner.
#include <set>
#include <string>

#include "base/retry.h"
#include "fleet/control_delivery.h"
#include "fleet/microvm_lifecycle.h"
#include "runnerset/janitor/janitor.h"

namespace mvr::runnerset {
namespace {

// How long a listing of the jobs in progress answers for (RunsAJob).
constexpr Duration kInProgressFresh{10'000};
// How long after a job ended on its own runner that runner's VM is left to the terminate intent
// of the job's `completed` webhook
// (which comes within seconds, when it comes) before the janitor reaps it: one that reaped the VM
// of a job that had just ended raced that intent (the e2e
// RunnerSetJanitor.BusyRunnerIsNeverTerminatedWhenTheListingSaysItIsIdle).
constexpr Duration kEndedWebhookWait{10'000};
// How long after the job a row's VM was launched for completed the VM's own word that its runner
// runs a job still counts. Past it only the jobs API can keep the VM: a job's code can make the
// supervisor's /v1/status say anything, and with the `completed` webhook lost the VM would
// otherwise run to its maximum lifetime (issue 53, item 14). Five minutes covers the jobs API's
// lag behind a runner that took another job (seconds) many times over.
constexpr Duration kVmWordLapse{300'000};
// Queued runs whose jobs say whether a job of a class waits (a GET each), the oldest first.
constexpr int kRunsRead = 20;

// The repositories whose jobs a runner of the set may take: the set's own and those of its rows
// and claims.
std::set<std::string> RepositoriesOf(const std::string& own, const std::vector<MappingRow>& rows,
                                     const std::vector<Claim>& claims) {
  std::set<std::string> repositories;
  if (!own.empty()) repositories.insert(own);
  for (const MappingRow& r : rows) {
    if (!r.repository.empty()) repositories.insert(r.repository);
  }
  for (const Claim& c : claims) {
    if (!c.repository.empty()) repositories.insert(c.repository);
  }
  return repositories;
}

}  // namespace

Result<bool> Janitor::RunsAJob(const Inventory& inv, const std::string& runner_name) {
  // A scale set's runner: GitHub said which job it started (JobStarted) and whether that ended
  // (JobCompleted), so nothing is inferred (issue 54, item 3). An ephemeral runner runs one job.
  // An unreadable binding falls back to the listing.
  // JobCompleted can be lost, though: GitHub keeps no event for a set while no session of its
  // own holds it (a restart waiting out the old session, a session taken over), and an open
  // binding trusted alone kept an idle VM to its maximum lifetime (the `scaleset` simulation).
  // The ephemeral runner GitHub removed once its one job ended says the same: a bound runner the
  // listing no longer shows ran its job, once the binding is past kEndedWebhookWait.
  Result<std::optional<JobBinding>> bound = deps_.table.GetJobBinding(runner_name);
  if (bound.ok() && *bound) {
    if (!(*bound)->running()) return false;
    const bool gone = inv.runners_ok && inv.runners.count(runner_name) == 0;
    const TimePoint started = TimePoint(Duration((*bound)->started_ms));
    return !(gone && deps_.seam.clock.Now() - started >= kEndedWebhookWait);
  }
  // Asked just before the janitor acts, so that a job the runner took since is seen. A listing
  // costs a GET per run in progress, so one younger than kInProgressFresh is asked again (a sweep
  // that weighs 80 idle runners during a burst read 300 runs 80 times: the rate-limits scenario);
  // a job taken within that window is the supervisor's to tell (WorksOnAJob).
  const std::set<std::string> repositories =
      RepositoriesOf(config_.github.repository, inv.rows, inv.claims);
  const TimePoint now = deps_.seam.clock.Now();
  for (const std::string& repository : repositories) {
    MVR_ASSIGN_OR_RETURN(github::RepositoryRef repo, github::RepositoryRef::Parse(repository));
    auto listed = inv.in_progress.find(repository);
    if (listed == inv.in_progress.end() || now - listed->second.at >= kInProgressFresh) {
      Result<std::vector<github::Job>> jobs = Retry<std::vector<github::Job>>(
          kJanitorReadRetry, deps_.seam, [&] { return deps_.github.ListInProgressJobs(repo); });
      if (!jobs.ok()) {
        return jobs.status().Annotate("listing the jobs in progress of " + repository);
      }
      listed =
          inv.in_progress.insert_or_assign(repository, Inventory::JobsListed{now, *jobs}).first;
    }
    for (const github::Job& job : listed->second.jobs) {
      if (job.runner_name == runner_name) return true;
    }
  }
  return false;
}

bool Janitor::AJobOfItsClassWaits(const Inventory& inv, const std::string& class_label) {
  if (!inv.waiting_classes) {
    // Listed once a sweep, and only when an idle runner's job has ended. A failed listing counts
    // as a job waiting: the runner then keeps its grace and strikes. So do GitHub's rate limits
    // holding launches back (jobs wait for them by definition, and reading every queued run's
    // jobs would spend the budget they wait for), and runs left unread past kRunsRead.
    std::set<std::string> waiting;
    if (Result<std::optional<TimePoint>> hold = deps_.table.RateLimitHold(Duration(0));
        hold.ok() && *hold) {
      waiting.insert("*");
    }
    for (const std::string& repository :
         RepositoriesOf(config_.github.repository, inv.rows, inv.claims)) {
      if (!github::RepositoryRef::Parse(repository).ok()) continue;
      if (waiting.count("*")) break;
      int unread = 0;
      Result<std::vector<github::Job>> jobs =
          QueuedJobsOf(inv, repository, kRunsRead, /*retry=*/true, &unread);
      if (!jobs.ok() || unread > 0) {
        waiting.insert("*");
        break;
      }
      for (const github::Job& job : *jobs) {
        if (job.status != github::JobStatus::kQueued) continue;
        if (const RunnerClass* cls = config_.ClassForJob(job.labels)) waiting.insert(cls->label);
      }
    }
    inv.waiting_classes = std::move(waiting);
  }
  return inv.waiting_classes->count("*") > 0 || inv.waiting_classes->count(class_label) > 0;
}

Result<Janitor::VmWork> Janitor::WorksOnAJob(const Inventory& inv, const MappingRow& row,
                                             const std::string& listed_as, bool vm_word_counts) {
  MVR_ASSIGN_OR_RETURN(const bool listed, RunsAJob(inv, row.runner_name));
  // The jobs API lags the job (a job just taken is not yet listed in progress): the VM's own
  // supervisor knows.
  VmWork work = listed ? VmWork::kRunsAJob : SupervisorRunsAJob(row.microvm_id);
  if (!listed && work == VmWork::kRunsAJob && !vm_word_counts) {
    deps_.seam.logger.Warn(
        "janitor: the supervisor says its runner runs a job, but the job its VM was launched for "
        "completed over 5 minutes ago and the jobs API shows the runner on none: the VM's word no "
        "longer counts",
        {{"runner_name", row.runner_name}, {"microvm_id", row.microvm_id}});
    work = VmWork::kIdle;
  }
  if (work == VmWork::kRunsAJob) {
    deps_.seam.logger.Info(std::string("janitor: ") +
                               (listed ? "the jobs API shows the runner on a job"
                                       : "the supervisor says its runner runs a job") +
                               "; left alone",
                           {{"runner_name", row.runner_name}, {"listed_as", listed_as}});
  }
  return work;
}

Janitor::VmWork Janitor::SupervisorRunsAJob(const std::string& microvm_id) {
  const TimePoint deadline = deps_.seam.clock.Now() + kSupervisorStatusTime;
  fleet::MicrovmLifecycle vms(deps_.seam, deps_.microvms);
  Result<aws::Microvm> vm = vms.Get(microvm_id, deadline);
  if (!vm.ok() && vm.status().code() == Code::kNotFound) return VmWork::kEnding;
  if (vm.ok() && vm->state != aws::MicrovmState::kRunning) return VmWork::kEnding;
  if (deps_.ingress == nullptr || !vm.ok() || vm->endpoint.empty()) return VmWork::kIdle;
  Result<Secret> token =
      vms.ControlToken(microvm_id, fleet::kControlPort, fleet::kControlTokenMinutes, deadline);
  if (!token.ok()) return VmWork::kIdle;
  Result<fleet::SupervisorStatus> status =
      fleet::ReadSupervisorStatus(*deps_.ingress, deps_.seam, vm->endpoint, *token, deadline);
  if (!status.ok()) {
    deps_.seam.logger.Debug("janitor: could not read the supervisor's status",
                            {{"microvm_id", microvm_id}, {"error", status.status().ToString()}});
    return VmWork::kIdle;
  }
  return status->state == "RUNNING" && status->job_started ? VmWork::kRunsAJob : VmWork::kIdle;
}

Janitor::JobEnded Janitor::OwnJobEnded(const MappingRow& row) {
  if (row.job_id <= 0 || row.repository.empty()) return JobEnded::kNo;  // a pool member's row
  auto repo = github::RepositoryRef::Parse(row.repository);
  if (!repo.ok()) return JobEnded::kNo;
  Result<github::Job> job = deps_.github.GetJob(*repo, row.job_id);
  if (!job.ok() || job->status != github::JobStatus::kCompleted) return JobEnded::kNo;
  // Only a job this row's runner ran: the webhook of one run by another runner (or none, a job
  // cancelled while queued) ends another VM or none.
  const TimePoint now = deps_.seam.clock.Now();
  if (job->runner_name == row.runner_name && job->completed_at &&
      now - *job->completed_at < kEndedWebhookWait) {
    return JobEnded::kRecently;
  }
  if (job->completed_at && now - *job->completed_at >= kVmWordLapse) return JobEnded::kLongAgo;
  return JobEnded::kYes;
}

}  // namespace mvr::runnerset
