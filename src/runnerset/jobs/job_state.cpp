#include "runnerset/jobs/job_state.h"

#include <algorithm>

namespace mvr::runnerset {
namespace {

constexpr int kMaxRaces = 8;

JobStep MakeJobStep(const JobState& next, const JobState& stored, JobStepVerdict verdict,
                    std::string why) {
  JobStep s;
  s.next = next;
  s.write = !(next == stored);
  s.verdict = verdict;
  s.why = std::move(why);
  return s;
}

JobState AtLeastPhase(JobState s, JobPhase at_least) {
  s.phase = std::max(s.phase, at_least);
  return s;
}

bool IsPastPhase(const JobState& s, JobPhase phase) { return s.phase >= phase; }

std::string LateWhy(JobAction action, const JobState& stored) {
  return std::string("a late ") + JobActionName(action) + " delivery: the job is " +
         JobPhaseName(stored.phase) + " already, and stays so";
}

}  // namespace

const char* JobPhaseName(JobPhase phase) {
  switch (phase) {
    case JobPhase::kNone:
      return "none";
    case JobPhase::kQueued:
      return "queued";
    case JobPhase::kInProgress:
      return "in_progress";
    case JobPhase::kCompleted:
      return "completed";
  }
  return "none";
}

const char* JobActionName(JobAction action) {
  switch (action) {
    case JobAction::kQueued:
      return "queued";
    case JobAction::kRequeued:
      return "requeued";
    case JobAction::kWaiting:
      return "waiting";
    case JobAction::kInProgress:
      return "in_progress";
    case JobAction::kCompleted:
      return "completed";
  }
  return "queued";
}

const char* JobStepVerdictName(JobStepVerdict verdict) {
  switch (verdict) {
    case JobStepVerdict::kGo:
      return "go";
    case JobStepVerdict::kHold:
      return "hold";
    case JobStepVerdict::kStale:
      return "stale";
  }
  return "go";
}

JobStep DecideJobStep(const JobState& stored, JobAction incoming) {
  switch (incoming) {
    case JobAction::kQueued:
      if (IsPastPhase(stored, JobPhase::kInProgress)) {
        return MakeJobStep(stored, stored, JobStepVerdict::kStale, LateWhy(incoming, stored));
      }
      return MakeJobStep(AtLeastPhase(stored, JobPhase::kQueued), stored, JobStepVerdict::kGo,
                         "queued");
    case JobAction::kRequeued:
      // GitHub's own listing says queued now: newer than an in_progress it may have undone itself
      // (a runner that never picked the job up), never newer than completed.
      if (IsPastPhase(stored, JobPhase::kCompleted)) {
        return MakeJobStep(stored, stored, JobStepVerdict::kStale, LateWhy(incoming, stored));
      }
      return MakeJobStep(AtLeastPhase(stored, JobPhase::kQueued), stored, JobStepVerdict::kGo,
                         "queued, by GitHub's jobs API");
    case JobAction::kWaiting: {
      if (IsPastPhase(stored, JobPhase::kInProgress)) {
        return MakeJobStep(stored, stored, JobStepVerdict::kStale, LateWhy(incoming, stored));
      }
      JobState next = stored;
      next.waited = true;
      return MakeJobStep(
          next, stored, JobStepVerdict::kHold,
          "waiting for an environment's approval: nothing launches until GitHub says "
          "queued");
    }
    case JobAction::kInProgress:
      if (IsPastPhase(stored, JobPhase::kCompleted)) {
        return MakeJobStep(stored, stored, JobStepVerdict::kGo, LateWhy(incoming, stored));
      }
      return MakeJobStep(AtLeastPhase(stored, JobPhase::kInProgress), stored, JobStepVerdict::kGo,
                         "in_progress");
    case JobAction::kCompleted:
      return MakeJobStep(AtLeastPhase(stored, JobPhase::kCompleted), stored, JobStepVerdict::kGo,
                         "completed");
  }
  return MakeJobStep(stored, stored, JobStepVerdict::kGo, "");
}

JobStep UndoingJobStep(const JobState& stored, JobAction incoming) {
  JobState next = stored;
  switch (incoming) {
    case JobAction::kQueued:
    case JobAction::kRequeued:
      next.phase = JobPhase::kQueued;
      break;
    case JobAction::kWaiting:
      next.phase = JobPhase::kNone;
      next.waited = true;
      break;
    case JobAction::kInProgress:
      next.phase = JobPhase::kInProgress;
      break;
    case JobAction::kCompleted:
      next.phase = JobPhase::kCompleted;
      break;
  }
  const JobStepVerdict verdict =
      incoming == JobAction::kWaiting ? JobStepVerdict::kHold : JobStepVerdict::kGo;
  return MakeJobStep(next, stored, verdict, std::string("undone by ") + JobActionName(incoming));
}

store::Key JobStateLedger::KeyOf(const std::string& repository, int64_t job_id) {
  return store::Key{"JOBSTATE#" + repository + "#" + std::to_string(job_id), "STATE"};
}

store::WriteOp JobStateLedger::Fence(const std::string& repository, int64_t job_id,
                                     JobPhase stops) {
  return store::WriteOp::Check(
      KeyOf(repository, job_id),
      store::Condition::AttributeNotExists("phase") ||
          store::Condition::Compare("phase", store::Condition::Op::kLt,
                                    store::Value(static_cast<int64_t>(stops))));
}

namespace {

struct StoredJobState {
  JobState state;
  std::optional<int64_t> version;  // nullopt: no item
};

StoredJobState JobStateFromItem(const std::optional<store::Item>& item) {
  StoredJobState r;
  if (!item) return r;
  const store::Attributes& a = item->attributes;
  auto number = [&](const char* name) -> int64_t {
    auto it = a.find(name);
    return it != a.end() && it->second.is_number() ? it->second.number() : 0;
  };
  const int64_t phase = std::clamp<int64_t>(number("phase"), 0, 3);
  r.state.phase = static_cast<JobPhase>(phase);
  auto waited = a.find("waited");
  r.state.waited = waited != a.end() && waited->second.is_bool() && waited->second.boolean();
  r.version = number("version");
  return r;
}

}  // namespace

Result<JobState> JobStateLedger::Get(const std::string& repository, int64_t job_id) {
  MVR_ASSIGN_OR_RETURN(std::optional<store::Item> item, store_.Get(KeyOf(repository, job_id)));
  return JobStateFromItem(item).state;
}

Result<JobStep> JobStateLedger::Apply(const std::string& repository, int64_t job_id,
                                      JobAction action) {
  const store::Key key = KeyOf(repository, job_id);
  for (int race = 0; race < kMaxRaces; ++race) {
    MVR_ASSIGN_OR_RETURN(std::optional<store::Item> item, store_.Get(key));
    const StoredJobState read = JobStateFromItem(item);
    JobStep step =
        plant_undo_ ? UndoingJobStep(read.state, action) : DecideJobStep(read.state, action);
    if (!step.write) return step;
    const TimePoint now = clock_.Now();
    store::Item next{key, {}};
    next.attributes["phase"] = store::Value(static_cast<int64_t>(step.next.phase));
    next.attributes["waited"] = store::Value(step.next.waited);
    next.attributes["version"] = store::Value(read.version.value_or(0) + 1);
    next.attributes["atMs"] = store::Value(ToUnixMillis(now));
    next.attributes["ttl"] = store::Value((ToUnixMillis(now + kKeepFor) + 999) / 1000);
    std::optional<store::Condition> condition;
    if (!plant_undo_) {
      condition = read.version ? store::Condition::Equals("version", store::Value(*read.version))
                               : store::Condition::ItemNotExists();
    }
    Status put = store_.Put(next, condition);
    if (put.ok()) return step;
    if (!store::IsConditionFailed(put)) return put;
  }
  return Conflict("the job's state kept changing under " + std::to_string(kMaxRaces) +
                  " writes; try again");
}

}  // namespace mvr::runnerset
