// GithubModel: jobs, the runner's side of the protocol and workflow_job webhooks.
#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "base/json_text.h"
#include "emulate/github/github_model.h"
#include "emulate/github/model_json.h"

namespace mvr::emulate::github {

using nlohmann::json;

Result<Job> GithubModel::QueueJob(const JobSpec& spec) {
  size_t slash = spec.repository.find('/');
  if (slash == std::string::npos) {
    return InvalidArgument("repository must be OWNER/NAME, got \"" + spec.repository + "\"");
  }
  if (spec.labels.empty()) return InvalidArgument("labels must name at least one runner label");
  if (spec.steps.empty()) return InvalidArgument("steps must hold at least one shell command");
  Outbox out;
  Job copy;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Repository* repo =
        FindRepoLocked(spec.repository.substr(0, slash), spec.repository.substr(slash + 1));
    if (!repo) {
      return NotFound("repository " + spec.repository +
                      " is not served by this emulator; start it with --repo " + spec.repository);
    }
    Job job;
    job.id = next_job_id_++;
    job.run_id = spec.run_id ? *spec.run_id : next_run_id_++;
    job.run_attempt = spec.run_attempt;
    job.repository_id = repo->id;
    job.repository = repo->FullName();
    job.name = spec.name;
    job.head_sha = seam_.random.Hex(20);
    job.labels = spec.labels;
    job.env = spec.env;
    job.timeout = spec.timeout;
    job.drop_webhooks = spec.drop_webhooks;
    job.wedge_runner = spec.wedge_runner;
    job.created_at = seam_.clock.Now();
    int n = 1;
    for (const auto& command : spec.steps) {
      JobStep step;
      step.number = n++;
      step.name = "Run " + command.substr(0, 60);
      step.command = command;
      job.steps.push_back(step);
    }
    job.status = spec.wait_for_environment ? "waiting" : "queued";
    job.timeline.push_back(TimelineEntry{job.created_at, job.status, ""});
    if (spec.wait_for_environment) {
      const Duration after = spec.approve_after.value_or(options_.approval_delay);
      if (after > Duration(0)) job.approve_at = job.created_at + after;
    }
    auto [it, inserted] = jobs_.emplace(job.id, std::move(job));
    unfinished_.emplace(it->first, &it->second);
    if (it->second.status == "waiting") {
      // The stricter reading of what GitHub sends for a job behind an approval: `queued` first
      // (its payload saying queued), then `waiting`; `queued` again on approval.
      Job shown = it->second;
      shown.status = "queued";
      EmitLocked(shown, "queued", out);
    }
    EmitLocked(it->second, it->second.status, out);
    AssignLocked(out);
    copy = it->second;
  }
  Dispatch(std::move(out));
  return copy;
}

Status GithubModel::ApproveJob(int64_t job_id) {
  Outbox out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) return NotFound("no job " + std::to_string(job_id));
    Job& job = it->second;
    if (job.status != "waiting") {
      return Conflict("job " + std::to_string(job_id) + " is " + job.status + ", not waiting");
    }
    ApproveLocked(job, "approved", out);
    AssignLocked(out);
  }
  Dispatch(std::move(out));
  return Status::Ok();
}

Status GithubModel::CancelJob(int64_t job_id) {
  Outbox out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) return NotFound("no job " + std::to_string(job_id));
    Job& job = it->second;
    if (job.status == "completed") {
      return Conflict("job " + std::to_string(job_id) + " has already completed");
    }
    job.timeline.push_back(TimelineEntry{seam_.clock.Now(), "cancel_requested", ""});
    CompleteLocked(job, "cancelled", out);
  }
  Dispatch(std::move(out));
  return Status::Ok();
}

void GithubModel::CompleteLocked(Job& job, const std::string& conclusion, Outbox& out) {
  const TimePoint now = seam_.clock.Now();
  job.status = "completed";
  unfinished_.erase(job.id);
  job.conclusion = conclusion;
  job.completed_at = now;
  for (auto& step : job.steps) {
    if (step.status == "completed") continue;
    step.status = "completed";
    step.conclusion = conclusion == "cancelled" ? "cancelled" : "skipped";
    if (!step.completed_at) step.completed_at = now;
  }
  job.timeline.push_back(TimelineEntry{now, "completed", conclusion});
  ScaleSetJobEndedLocked(job);
  if (job.runner_id) {
    auto r = runners_.find(*job.runner_id);
    if (r != runners_.end() && r->second.runner.job_id == job.id) {
      // A JIT runner takes one job and is then removed.
      retired_credentials_[r->second.credential_hash] = job.id;
      runners_.erase(r);
    }
  }
  EmitLocked(job, "completed", out);
}

Result<Job> GithubModel::GetJob(const std::string& owner, const std::string& repo,
                                int64_t job_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Repository* r = FindRepoLocked(owner, repo);
  auto it = jobs_.find(job_id);
  if (!r || it == jobs_.end() || it->second.repository_id != r->id) return NotFound("Not Found");
  return LaggedLocked(it->second);
}

Result<std::vector<Job>> GithubModel::ListJobs(const std::string& owner, const std::string& repo,
                                               std::optional<int64_t> run_id,
                                               const std::string& status) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Repository* r = FindRepoLocked(owner, repo);
  if (!r) return NotFound("Not Found");
  std::vector<Job> out;
  for (const auto& [id, job] : jobs_) {
    if (job.repository_id != r->id) continue;
    if (run_id && job.run_id != *run_id) continue;
    if (!status.empty() && job.status != status) continue;
    out.push_back(job);
  }
  return out;
}

Result<std::vector<std::vector<Job>>> GithubModel::ListRuns(
    const std::string& owner, const std::string& repo, const std::optional<std::string>& status,
    size_t reach, size_t first, size_t count, size_t* total) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Repository* r = FindRepoLocked(owner, repo);
  if (!r) return NotFound("Not Found");
  std::map<int64_t, std::vector<const Job*>, std::greater<>> runs;
  for (const auto& [id, job] : jobs_) {
    if (job.repository_id == r->id) runs[job.run_id].push_back(&job);
  }
  std::vector<std::vector<Job>> out;
  size_t listed = 0;
  for (const auto& [run_id, run_jobs] : runs) {
    if (status) {
      const RunState state = RunStateOf(run_jobs);
      if (state.status != *status &&
          !(state.status == "completed" && state.conclusion == *status)) {
        continue;
      }
      if (listed == reach) break;
    }
    if (listed++ < first || out.size() >= count) continue;
    std::vector<Job>& copy = out.emplace_back();
    for (const Job* job : run_jobs) copy.push_back(*job);
  }
  if (total) *total = listed;
  return out;
}

Result<Job> GithubModel::GetJobById(int64_t job_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return NotFound("no job " + std::to_string(job_id));
  return it->second;
}

std::vector<Job> GithubModel::ListAllJobs() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Job> out;
  for (const auto& [id, job] : jobs_) out.push_back(job);
  return out;
}

GithubModel::RunnerState* GithubModel::FindRunnerByCredentialLocked(const Secret& credential) {
  const std::string hash = Sha256Hex(credential.Reveal());
  for (auto& [id, r] : runners_) {
    if (ConstantTimeEquals(r.credential_hash, hash)) return &r;
  }
  return nullptr;
}

Result<RunnerSession> GithubModel::RunnerConnect(const Secret& credential,
                                                 const std::string& version) {
  Outbox out;
  RunnerSession session;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ExpireRegistrationsLocked();
    RunnerState* r = FindRunnerByCredentialLocked(credential);
    if (!r) {
      MVR_RETURN_IF_ERROR(ExpiredRegistrationLocked(credential));
      return Unauthorized(
          "runner credential is not valid (the runner was removed or its job ended)");
    }
    r->runner.version = version.empty() ? kStandInRunnerVersion : version;
    if (std::string why = RefuseVersionLocked(*r); !why.empty()) {
      return Unauthorized(why).WithErrorType(kRunnerVersionRefused);
    }
    NoteContactLocked(*r);
    session.runner_id = r->runner.id;
    session.runner_name = r->runner.name;
    AssignLocked(out);
  }
  Dispatch(std::move(out));
  return session;
}

Result<std::optional<JobAssignment>> GithubModel::RunnerAcquireJob(const Secret& credential) {
  Outbox out;
  std::optional<JobAssignment> assignment;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ExpireRegistrationsLocked();
    RunnerState* r = FindRunnerByCredentialLocked(credential);
    if (!r) {
      if (retired_credentials_.count(Sha256Hex(credential.Reveal()))) {
        return Conflict("the runner's job has ended");
      }
      MVR_RETURN_IF_ERROR(ExpiredRegistrationLocked(credential));
      return Unauthorized("runner credential is not valid (the runner was removed)");
    }
    if (!r->runner.job_id) {
      // Refused at its next poll once its version falls below what GitHub accepts.
      if (std::string why = RefuseVersionLocked(*r); !why.empty()) {
        return Unauthorized(why).WithErrorType(kRunnerVersionRefused);
      }
    }
    // A wedged runner's worker hangs: GitHub hears nothing more from it.
    if (r->wedged) return std::optional<JobAssignment>{};
    NoteContactLocked(*r);
    AssignLocked(out);
    if (r->runner.job_id && WedgesLocked(jobs_.at(*r->runner.job_id))) {
      r->wedged = true;  // the listener took the job; its worker never reads it (#4598)
    } else if (r->runner.job_id) {
      r->job_picked_up = true;
      const Job& job = jobs_.at(*r->runner.job_id);
      JobAssignment a;
      a.job_id = job.id;
      a.run_id = job.run_id;
      a.run_attempt = job.run_attempt;
      a.name = job.name;
      a.repository = job.repository;
      a.workflow_name = job.workflow_name;
      for (const auto& s : job.steps) a.steps.push_back(s.command);
      a.env = job.env;
      assignment = a;
    }
  }
  Dispatch(std::move(out));
  return assignment;
}

Status GithubModel::RunnerReportStep(const Secret& credential, int64_t job_id,
                                     const StepReport& report) {
  std::lock_guard<std::mutex> lock(mu_);
  RunnerState* r = FindRunnerByCredentialLocked(credential);
  if (!r) {
    if (retired_credentials_.count(Sha256Hex(credential.Reveal()))) {
      return Conflict("the job has ended (cancelled or timed out); stop running it");
    }
    return Unauthorized("runner credential is not valid");
  }
  if (r->runner.job_id != job_id)
    return NotFound("job " + std::to_string(job_id) + " is not this runner's");
  Job& job = jobs_.at(job_id);
  if (report.number < 1 || report.number > static_cast<int>(job.steps.size())) {
    return InvalidArgument("step number " + std::to_string(report.number) + " is out of range");
  }
  r->runner.last_seen = seam_.clock.Now();
  JobStep& step = job.steps[report.number - 1];
  const TimePoint now = seam_.clock.Now();
  step.status = report.status;
  if (report.status == "in_progress") {
    step.started_at = now;
    job.timeline.push_back(TimelineEntry{now, "step_started", std::to_string(report.number)});
  } else {
    if (!step.started_at) step.started_at = now;
    step.completed_at = now;
    step.conclusion = report.conclusion;
    step.exit_code = report.exit_code;
    step.stdout_text = report.stdout_text;
    step.stderr_text = report.stderr_text;
    job.timeline.push_back(TimelineEntry{now, "step_completed",
                                         std::to_string(report.number) + " " + report.conclusion});
  }
  return Status::Ok();
}

Status GithubModel::RunnerCompleteJob(const Secret& credential, int64_t job_id,
                                      const std::string& conclusion) {
  if (conclusion != "success" && conclusion != "failure" && conclusion != "cancelled") {
    return InvalidArgument("conclusion must be success, failure or cancelled");
  }
  Outbox out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    RunnerState* r = FindRunnerByCredentialLocked(credential);
    if (!r) {
      if (retired_credentials_.count(Sha256Hex(credential.Reveal()))) {
        return Conflict("the job has already ended");
      }
      return Unauthorized("runner credential is not valid");
    }
    if (r->runner.job_id != job_id)
      return NotFound("job " + std::to_string(job_id) + " is not this runner's");
    CompleteLocked(jobs_.at(job_id), conclusion, out);
  }
  Dispatch(std::move(out));
  return Status::Ok();
}

std::string GithubModel::PayloadLocked(const Job& job, const std::string& action,
                                       int64_t installation_id) const {
  json p;
  p["action"] = action;
  p["workflow_job"] = JobJson(job, options_.base_url);
  for (const auto& repo : repos_) {
    if (repo.id != job.repository_id) continue;
    p["repository"] = RepositoryJson(repo, options_.base_url);
    if (repo.owner_is_org) {
      p["organization"] = OrganizationJson(repo.owner, repo.owner_id, options_.base_url);
    }
  }
  p["installation"]["id"] = installation_id > 0 ? installation_id : options_.installation_id;
  p["installation"]["node_id"] = "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9u";
  // The user whose push started the run.
  p["sender"] = SimpleUserJson("mvr-emulator", 1, false, options_.base_url);
  return JsonText(p);
}

void GithubModel::EmitLocked(const Job& job, const std::string& action, Outbox& out) {
  Delivery d;
  std::string h = seam_.random.Hex(16);
  d.guid = h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
           "-" + h.substr(20);
  d.id = static_cast<int64_t>(deliveries_.size()) + 1;
  d.action = action;
  d.job_id = job.id;
  d.repository_id = job.repository_id;
  const bool form = options_.hook_content_type == "form";
  d.payload = form ? FormPayload(PayloadLocked(job, action)) : PayloadLocked(job, action);
  d.headers = DeliveryHeaders(d.guid, d.event, options_.webhook_secret, d.payload, 1,
                              options_.installation_id, form);
  d.created_at = seam_.clock.Now();
  if (!sender_) d.outcome = "not_configured";
  // A `completed` delivery that never comes (actions/runner #4309), drawn per delivery.
  const bool lost_completed = action == "completed" && completed_webhook_loss_ > 0 &&
                              seam_.random.UniformDouble() < completed_webhook_loss_;
  if (job.drop_webhooks || lost_completed) {
    d.outcome = "dropped";  // recorded, never sent (a Redeliver still sends it)
    deliveries_.push_back(d);
    return;
  }
  deliveries_.push_back(d);
  out.push_back(std::move(d));
  MaybeForeignLocked(job, action, out);
}

void GithubModel::Dispatch(Outbox out) {
  if (!sender_) return;
  for (const auto& d : out) {
    const int64_t id = d.id;
    sender_->Send(d, [this, id](const DeliveryOutcome& o) { RecordOutcome(id, o); });
  }
}

void GithubModel::RecordOutcome(int64_t id, const DeliveryOutcome& o) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& d : deliveries_) {
    if (d.id != id) continue;
    d.copies_sent += o.copies_sent;
    if (o.lost) {
      if (d.outcome == "pending") d.outcome = "lost";
      continue;
    }
    d.response_status = o.status;
    d.delivered_at = seam_.clock.Now();
    d.outcome = o.status >= 200 && o.status < 300 ? "delivered" : "failed";
    d.error = o.error;
  }
}

std::vector<Delivery> GithubModel::ListDeliveries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return deliveries_;
}

Status GithubModel::Redeliver(const std::string& guid) {
  Outbox out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& d : deliveries_) {
      if (d.guid == guid) out.push_back(d);
    }
    if (out.empty()) return NotFound("no delivery " + guid);
    for (auto& d : out) d.redelivery = true;
  }
  if (!sender_) return Status::Ok();
  Dispatch(std::move(out));
  return Status::Ok();
}

}  // namespace mvr::emulate::github
