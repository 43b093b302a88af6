// GithubModel: the scale-set API's message queue (issue 54): which jobs are a set's, offers
// bounded by the set's capacity, acquisition, the job events, acknowledgement and redelivery,
// reassignment of a job not acquired or started in time, and the long poll.
#include <algorithm>

#include "base/encoding.h"
#include "emulate/github/github_model.h"

namespace mvr::emulate::github {
namespace {

bool QueueNameEq(const std::string& a, const std::string& b) {
  return AsciiLower(a) == AsciiLower(b);
}

std::string ResultName(const std::string& conclusion) {
  if (conclusion == "success") return "succeeded";
  if (conclusion == "cancelled") return "canceled";
  return "failed";
}

}  // namespace

bool GithubModel::ScopeServesRepoLocked(const Scope& scope, const std::string& repository) const {
  const size_t slash = repository.find('/');
  const std::string owner = repository.substr(0, slash);
  if (scope.kind == Scope::Kind::kRepository) {
    return QueueNameEq(scope.owner, owner) && QueueNameEq(scope.repo, repository.substr(slash + 1));
  }
  if (scope.kind == Scope::Kind::kEnterprise) return org_ids_.count(AsciiLower(owner)) > 0;
  return QueueNameEq(scope.owner, owner);
}

void GithubModel::RouteScaleSetJobsLocked() {
  if (scale_sets_.empty()) return;
  for (const auto& [id, unfinished_job] : unfinished_) {
    Job& job = *unfinished_job;
    if (job.status != "queued" || job.labels.size() != 1 || scale_set_jobs_.count(id)) continue;
    for (const auto& [set_id, s] : scale_sets_) {
      if (!QueueNameEq(s.set.name, job.labels[0]) ||
          !ScopeServesRepoLocked(s.set.scope, job.repository))
        continue;
      ScaleSetJob ss;
      ss.set_id = set_id;
      ss.request_id = next_request_id_++;
      ss.guid = seam_.random.Hex(16);
      ss.guid = ss.guid.substr(0, 8) + "-" + ss.guid.substr(8, 4) + "-" + ss.guid.substr(12, 4) +
                "-" + ss.guid.substr(16, 4) + "-" + ss.guid.substr(20);
      request_jobs_[ss.request_id] = id;
      scale_set_jobs_.emplace(id, ss);
      break;
    }
  }
}

int64_t GithubModel::ScaleSetRequestJob(int64_t request_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = request_jobs_.find(request_id);
  return it == request_jobs_.end() ? 0 : it->second;
}

void GithubModel::ReassignLocked(ScaleSetJob& job) {
  ++job.reassignments;
  job.since.reset();
  job.acquired_at.reset();
  // Undocumented what follows the last reassignment; the stricter reading: the set is offered
  // the job no more, and it waits queued until GitHub's queue timeout cancels it.
  job.state = job.reassignments > options_.scaleset.max_reassignments ? "abandoned" : "available";
}

void GithubModel::MaintainScaleSetsLocked() {
  if (scale_sets_.empty()) return;
  const TimePoint now = seam_.clock.Now();
  RouteScaleSetJobsLocked();
  for (auto& [id, s] : scale_sets_) {
    if (s.session && now - s.session->last_poll >= options_.scaleset.session_idle_timeout) {
      EndSessionLocked(s);
    }
  }
  for (auto& [job_id, j] : scale_set_jobs_) {
    if (j.state == "offered" && j.since && now - *j.since >= options_.scaleset.acquire_timeout) {
      ReassignLocked(j);
    } else if (j.state == "acquired" && j.since &&
               now - *j.since >= options_.scaleset.start_timeout) {
      ReassignLocked(j);  // acquired, but no runner of the set took it in time
    }
  }
  for (auto& [id, s] : scale_sets_) OfferLocked(s);
}

// Back-pressure: GitHub offers a set no more jobs than the capacity it last said, counting the
// jobs it holds (acquired or running) and the offers it has not answered.
void GithubModel::OfferLocked(ScaleSetState& s) {
  if (!s.session || s.session->foreign || s.max_capacity < 0) return;
  int busy = 0;
  for (const auto& [job_id, j] : scale_set_jobs_) {
    if (j.set_id == s.set.id &&
        (j.state == "offered" || j.state == "acquired" || j.state == "running")) {
      ++busy;
    }
  }
  for (auto& [job_id, j] : scale_set_jobs_) {
    if (busy >= s.max_capacity) return;
    if (j.set_id != s.set.id || j.state != "available") continue;
    j.state = "offered";
    j.since = seam_.clock.Now();
    ++busy;
    PushEventLocked(jobs_.at(job_id), j, "JobAvailable");
  }
}

ScaleSetJobEvent GithubModel::EventLocked(const Job& job, const ScaleSetJob& ss,
                                          const std::string& type) const {
  ScaleSetJobEvent e;
  e.message_type = type;
  e.runner_request_id = ss.request_id;
  e.job_id = ss.guid;
  e.rest_job_id = job.id;
  const size_t slash = job.repository.find('/');
  e.owner_name = job.repository.substr(0, slash);
  e.repository_name = job.repository.substr(slash + 1);
  e.job_workflow_ref = job.repository + "/.github/workflows/ci.yml@refs/heads/" + job.head_branch;
  e.job_display_name = job.name;
  e.workflow_run_id = job.run_id;
  e.request_labels = job.labels;
  e.queue_time = job.created_at;
  e.scale_set_assign_time = ss.acquired_at;
  e.runner_assign_time = job.started_at;
  e.finish_time = job.completed_at;
  if (job.runner_id) e.runner_id = *job.runner_id;
  e.runner_name = job.runner_name;
  return e;
}

void GithubModel::PushEventLocked(const Job& job, const ScaleSetJob& ss, const std::string& type,
                                  const std::string& result) {
  auto it = scale_sets_.find(ss.set_id);
  // Events while the set has no session of its own are not kept for the next one.
  if (it == scale_sets_.end() || !it->second.session || it->second.session->foreign) return;
  ScaleSetMessage m;
  m.message_id = next_message_id_++;
  m.events.push_back(EventLocked(job, ss, type));
  m.events.back().result = result;
  m.visible_at = seam_.clock.Now() + options_.scaleset.message_delay;
  it->second.queue.push_back(std::move(m));
}

void GithubModel::ScaleSetJobStartedLocked(const Job& job, const RunnerState& r) {
  auto it = scale_set_jobs_.find(job.id);
  if (it == scale_set_jobs_.end() || r.scale_set_id != it->second.set_id) return;
  it->second.state = "running";
  it->second.since = seam_.clock.Now();
  PushEventLocked(job, it->second, "JobStarted");
}

void GithubModel::ScaleSetJobEndedLocked(const Job& job) {
  auto it = scale_set_jobs_.find(job.id);
  if (it == scale_set_jobs_.end()) return;
  const bool held = it->second.state == "acquired" || it->second.state == "running";
  if (held) PushEventLocked(job, it->second, "JobCompleted", ResultName(job.conclusion));
  scale_set_jobs_.erase(it);  // an ended job is no set's business (and the map stays small)
}

Result<GithubModel::ScaleSetState*> GithubModel::SessionByTokenLocked(int64_t id,
                                                                      const Secret& token) {
  auto it = scale_sets_.find(id);
  if (it == scale_sets_.end()) {
    return NotFound("runner scale set " + std::to_string(id) + " was not found");
  }
  ScaleSetState& s = it->second;
  if (!s.session || !ConstantTimeEquals(s.session->token_hash, Sha256Hex(token.Reveal()))) {
    return Unauthorized("the message queue token is not valid for this session; refresh it");
  }
  if (seam_.clock.Now() >= s.session->token_expires) {
    return Unauthorized("the message queue token expired; refresh the session");
  }
  return &s;
}

Result<std::optional<ScaleSetMessage>> GithubModel::PollScaleSetMessage(int64_t id,
                                                                        const Secret& token,
                                                                        int64_t last_message_id,
                                                                        int max_capacity) {
  if (max_capacity < 0) {
    return InvalidArgument("X-ScaleSetMaxCapacity must be a whole number, 0 or more");
  }
  (void)last_message_id;  // acknowledges nothing: only a DELETE does
  std::lock_guard<std::mutex> lock(mu_);
  MaintainScaleSetsLocked();
  MVR_ASSIGN_OR_RETURN(ScaleSetState * s, SessionByTokenLocked(id, token));
  const TimePoint now = seam_.clock.Now();
  s->session->last_poll = now;
  s->max_capacity = max_capacity;
  OfferLocked(*s);
  for (auto& m : s->queue) {
    if (m.visible_at > now) continue;
    ++m.deliveries;
    ScaleSetMessage out = m;
    out.statistics = StatisticsLocked(*s);  // as of this read (stale only by the fault)
    return std::optional<ScaleSetMessage>(out);
  }
  return std::optional<ScaleSetMessage>();
}

Result<std::optional<ScaleSetMessage>> GithubModel::WaitScaleSetMessage(int64_t id,
                                                                        const Secret& token,
                                                                        int64_t last_message_id,
                                                                        int max_capacity) {
  const TimePoint deadline = seam_.clock.Now() + options_.scaleset.long_poll;
  const Duration step = std::max(options_.scaleset.long_poll_step, Duration(1));
  while (true) {
    auto got = PollScaleSetMessage(id, token, last_message_id, max_capacity);
    if (!got.ok() || got->has_value() || long_polls_stopped_.load()) return got;
    const TimePoint now = seam_.clock.Now();
    if (now >= deadline) return got;
    seam_.sleeper.Sleep(std::min(step, std::chrono::duration_cast<Duration>(deadline - now)));
  }
}

Status GithubModel::DeleteScaleSetMessage(int64_t id, const Secret& token, int64_t message_id) {
  std::lock_guard<std::mutex> lock(mu_);
  MVR_ASSIGN_OR_RETURN(ScaleSetState * s, SessionByTokenLocked(id, token));
  s->session->last_poll = seam_.clock.Now();
  auto it = std::find_if(s->queue.begin(), s->queue.end(), [&](const ScaleSetMessage& m) {
    return m.message_id == message_id && m.deliveries > 0;
  });
  if (it == s->queue.end()) {
    return NotFound("message " + std::to_string(message_id) + " was not found in the queue");
  }
  const double lost = options_.scaleset.lost_acknowledgements;
  if (lost > 0 && seam_.random.UniformDouble() < lost) return Status::Ok();  // 204, still there
  s->queue.erase(it);
  return Status::Ok();
}

Result<std::vector<int64_t>> GithubModel::AcquireScaleSetJobs(
    int64_t id, const Secret& token, const std::vector<int64_t>& request_ids) {
  Outbox assigned;
  std::vector<int64_t> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    MaintainScaleSetsLocked();
    MVR_ASSIGN_OR_RETURN(ScaleSetState * s, SessionByTokenLocked(id, token));
    out = AcquireLocked(*s, request_ids);
    AssignLocked(assigned);  // an idle runner of the set takes what it acquired
  }
  Dispatch(std::move(assigned));
  return out;
}

std::vector<int64_t> GithubModel::AcquireLocked(ScaleSetState& set,
                                                const std::vector<int64_t>& request_ids) {
  ScaleSetState* s = &set;
  const int64_t id = set.set.id;
  int held = 0;
  for (const auto& [job_id, j] : scale_set_jobs_) {
    if (j.set_id == id && (j.state == "acquired" || j.state == "running")) ++held;
  }
  std::vector<int64_t> out;
  for (int64_t rid : request_ids) {
    for (auto& [job_id, j] : scale_set_jobs_) {
      if (j.set_id != id || j.request_id != rid) continue;
      if (j.state == "acquired" || j.state == "running") {
        out.push_back(rid);  // already the set's: acquiring again is harmless
      } else if (j.state == "offered" && held < std::max(s->max_capacity, 0)) {
        j.state = "acquired";
        j.since = seam_.clock.Now();
        j.acquired_at = j.since;
        ++held;
        out.push_back(rid);
        PushEventLocked(jobs_.at(job_id), j, "JobAssigned");
      }
      break;
    }
  }
  return out;
}

}  // namespace mvr::emulate::github
