// JobState: what the runner set has heard of one job, whatever order GitHub's deliveries (and the
// job queue's messages) came in (issue 55, item 3). GitHub sends a job's workflow_job actions
// queued, waiting, in_progress and completed with no ordering guarantee and no retries; RunsOn
// #539 left jobs stuck when a late delivery undid a later one. So the state is a join: a phase
// that only moves forward (queued < in_progress < completed) and a flag set once the job was seen
// waiting for an environment's approval. DecideJobStep is the whole policy, a pure function of
// (stored state, incoming action); JobStateLedger keeps the state in the set's store and writes it
// only with a condition on the version it read, so two racing writers never both move it.
// Thread-safety: DecideJobStep is pure; JobStateLedger is safe to share, as the Store is.
#pragma once

#include <cstdint>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "store/store.h"

namespace mvr::runnerset {

enum class JobPhase { kNone = 0, kQueued = 1, kInProgress = 2, kCompleted = 3 };

enum class JobAction {
  kQueued,      // a `queued` delivery (a launch intent from the webhook)
  kRequeued,    // GitHub's jobs API shows the job queued now (the janitor, a taken job's relaunch)
  kWaiting,     // a `waiting` delivery: the job waits for an environment's approval
  kInProgress,  // an `in_progress` delivery
  kCompleted,   // a `completed` delivery
};
const char* JobPhaseName(JobPhase phase);     // "none", "queued", "in_progress", "completed"
const char* JobActionName(JobAction action);  // "queued", "requeued", "waiting", ...

struct JobState {
  JobPhase phase = JobPhase::kNone;
  bool waited = false;  // a `waiting` delivery was seen: launch only on GitHub's word

  bool operator==(const JobState&) const = default;
};

enum class JobStepVerdict {
  kGo,     // act on the delivery as the router decided
  kHold,   // waiting: launch nothing
  kStale,  // a later action was seen first: launch nothing (a late queued, a late waiting)
};
const char* JobStepVerdictName(JobStepVerdict verdict);  // "go", "hold", "stale"

struct JobStep {
  JobState next;  // the state to store (== stored when nothing changes)
  bool write = false;
  JobStepVerdict verdict = JobStepVerdict::kGo;
  std::string why;  // one line for logs and the launcher's detail
};

// The table (docs/runner-set-failures.md, "Deliveries in any order"):
//   queued      after completed or in_progress: stale; else go (phase at least queued)
//   requeued    after completed: stale; else go (GitHub's API has the last word over in_progress)
//   waiting     after completed or in_progress: stale; else hold and remember it waited
//   in_progress after completed: go, the job stays completed; else go (phase in_progress)
//   completed   go (phase completed)
JobStep DecideJobStep(const JobState& stored, JobAction incoming);
// The planted bug of the simulation's `out-of-order` scenario (`--plant undo-late-delivery`):
// the last delivery to arrive wins, as if deliveries came in order.
JobStep UndoingJobStep(const JobState& stored, JobAction incoming);

class JobStateLedger {
 public:
  // How long a job's state is kept: GitHub cancels a run whose approval has not come in 30 days.
  static constexpr Duration kKeepFor{35LL * 24 * 3600 * 1000};

  JobStateLedger(store::Store& store, const Clock& clock, bool plant_undo = false)
      : store_(store), clock_(clock), plant_undo_(plant_undo) {}

  // Reads the job's state, decides, and writes the next state on the condition that nobody wrote
  // since the read (retried a few times on a lost race). Store failures are returned as they
  // came; Conflict after too many lost races.
  Result<JobStep> Apply(const std::string& repository, int64_t job_id, JobAction action);
  Result<JobState> Get(const std::string& repository, int64_t job_id);

  static store::Key KeyOf(const std::string& repository, int64_t job_id);
  // The fence a launch's commit carries (a condition check in the commit's transaction): the
  // job's recorded phase is still below `stops` (no state recorded counts as below). A delivery
  // recorded after the launch decided, that would have stopped it, then refuses the commit
  // instead of racing it. On DynamoDB: a ConditionCheck whose ConditionExpression is
  // `attribute_not_exists(phase) OR phase < :stops` (a comparison with a missing attribute is
  // false there, as in Condition::Compare).
  static store::WriteOp Fence(const std::string& repository, int64_t job_id, JobPhase stops);

 private:
  store::Store& store_;
  const Clock& clock_;
  const bool plant_undo_;
};

}  // namespace mvr::runnerset
