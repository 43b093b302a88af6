// Launcher: the job's state (job_state.h) on the launch path (issue 55, item 3). A late `queued`
// launches nothing unless the job's runner was launched for another job still waiting; a job
// waiting for an environment's approval gets no VM until GitHub's jobs API says it is queued, and
// one seen `waiting` never launches on a guess while GitHub cannot be asked; the other deliveries
// of a job of the set's classes are recorded.
#include <algorithm>
#include <string>

#include "runnerset/launch/launcher.h"
#include "runnerset/launch/launcher_attempt.h"

namespace mvr::runnerset {
namespace {

// How long a launch waits before it asks GitHub again whether the approval came: a quarter of
// its wait so far, from deferSeconds up to 5 minutes (an approval can take days; the approval's
// own `queued` delivery launches at once).
constexpr Duration kMaxApprovalRecheck{300'000};

Result<JobAction> JobActionOfEvent(const std::string& action) {
  if (action == "waiting") return JobAction::kWaiting;
  if (action == "in_progress") return JobAction::kInProgress;
  if (action == "completed") return JobAction::kCompleted;
  return InvalidArgument("job intent: action \"" + action + "\" is not one the launcher records");
}

}  // namespace

void Launcher::GatherJobState(const LaunchIntent& in, LaunchEvidence& e, Gathered& g) {
  Result<JobStep> step = jobs_.Apply(in.repository, in.job_id, g.action);
  e.job.emplace();
  if (!step.ok()) {
    e.job->readable = false;
    g.job_error = step.status();
    return;
  }
  g.state = step->next;
  e.job->waited = g.state.waited;
  // A late queued is not dropped here: the runner that took this job may have been launched for
  // another, which then waits and which this launch serves (StillNeeded follows that chain).
  if (step->verdict == JobStepVerdict::kStale) {
    g.stale = step->why;
    e.job->stale = true;
  }
}

bool Launcher::StaleSinceGathered(const LaunchIntent& in) {
  Result<JobState> state = jobs_.Get(in.repository, in.job_id);
  if (!state.ok()) return false;  // the first read's word stands
  const JobAction action = in.delivery_id == "janitor" ? JobAction::kRequeued : JobAction::kQueued;
  return DecideJobStep(*state, action).verdict == JobStepVerdict::kStale;
}

LaunchOutcome Launcher::DeferForApproval(const LaunchIntent& in, bool waits) {
  if (waits) NoteJobAction(in.repository, in.job_id, JobAction::kWaiting);
  const Duration floor = config_.defer_delay();
  const Duration waited = std::max(Duration(0), deps_.seam.clock.Now() - in.queued_at);
  LaunchOutcome out;
  out.decision = LaunchDecision::kDeferred;
  out.retry_after = std::clamp(waited / 4, floor, std::max(floor, kMaxApprovalRecheck));
  out.detail = waits ? "the job waits for an environment's approval: no VM until GitHub says "
                       "it is queued"
                     : "the job was seen waiting for an approval and GitHub cannot say whether "
                       "it came: no VM on a guess";
  deps_.metrics.AddDeferral(waits ? "awaiting_approval" : "approval_unknown");
  return out;
}

void Launcher::NoteJobAction(const std::string& repository, int64_t job_id, JobAction action) {
  Result<JobStep> step = jobs_.Apply(repository, job_id, action);
  if (!step.ok()) {
    deps_.seam.logger.Warn("recording the job's state", {{"job_id", job_id},
                                                         {"action", JobActionName(action)},
                                                         {"error", step.status().ToString()}});
  }
}

LaunchOutcome Launcher::NoteJobEvent(const JobEventIntent& in) {
  LaunchOutcome out;
  Result<JobAction> action = JobActionOfEvent(in.action);
  if (!action.ok()) {
    out.decision = LaunchDecision::kIgnored;
    out.detail = action.status().message();
    return out;
  }
  Result<JobStep> step = jobs_.Apply(in.repository, in.job_id, *action);
  if (!step.ok()) {
    out.decision = LaunchDecision::kFailed;
    out.retry_after = config_.defer_delay();
    out.detail = "recording the job's state: " + step.status().ToString();
    return out;
  }
  out.decision = LaunchDecision::kIgnored;
  out.detail = std::string("job ") + std::to_string(in.job_id) + " " + in.action + ": " +
               step->why + " (state " + JobPhaseName(step->next.phase) +
               (step->next.waited ? ", seen waiting" : "") + ")";
  return out;
}

}  // namespace mvr::runnerset
