// GithubModel: repositories, JIT registration, runners and the scheduler. Jobs, the runner's
// side and webhooks are in github_model_jobs.cpp.
#include "emulate/github/github_model.h"

#include <algorithm>
#include <cctype>

#include "base/encoding.h"
#include "emulate/github/jit_config.h"

namespace mvr::emulate::github {
namespace {

bool SameName(const std::string& a, const std::string& b) { return AsciiLower(a) == AsciiLower(b); }

}  // namespace

bool LabelsMatch(const std::vector<std::string>& job_labels,
                 const std::vector<RunnerLabel>& runner_labels) {
  for (const auto& want : job_labels) {
    bool found = std::any_of(runner_labels.begin(), runner_labels.end(),
                             [&](const RunnerLabel& l) { return SameName(l.name, want); });
    if (!found) return false;
  }
  return true;
}

GithubModel::GithubModel(GithubModelOptions options, Seam seam, WebhookSender* sender)
    : options_(std::move(options)), seam_(seam), sender_(sender) {
  runner_busy_lies_ = std::clamp(options_.runner_busy_lies, 0.0, 1.0);
  random_assignment_ = options_.assignment == "random";
  completed_webhook_loss_ = std::clamp(options_.completed_webhook_loss, 0.0, 1.0);
  foreign_deliveries_ = std::clamp(options_.foreign_deliveries, 0.0, 1.0);
  runner_versions_ = options_.runner_versions;
  int64_t next_owner_id = 9'000'001;
  for (const auto& org : options_.organizations) org_ids_[AsciiLower(org)] = next_owner_id++;
  int64_t next_repo_id = 700'000'001;
  for (const auto& full : options_.repositories) {
    size_t slash = full.find('/');
    Repository r;
    r.id = next_repo_id++;
    r.owner = full.substr(0, slash);
    r.name = slash == std::string::npos ? "" : full.substr(slash + 1);
    auto org = org_ids_.find(AsciiLower(r.owner));
    r.owner_is_org = org != org_ids_.end();
    r.owner_id = r.owner_is_org ? org->second : next_owner_id++;
    r.created_at = seam_.clock.Now();
    repos_.push_back(r);
  }
}

void GithubModel::SetBaseUrl(std::string url) {
  std::lock_guard<std::mutex> lock(mu_);
  options_.base_url = std::move(url);
}

const Repository* GithubModel::FindRepoLocked(const std::string& owner,
                                              const std::string& repo) const {
  for (const auto& r : repos_) {
    if (SameName(r.owner, owner) && SameName(r.name, repo)) return &r;
  }
  return nullptr;
}

Status GithubModel::CheckScopeLocked(const Scope& scope) const {
  if (scope.kind == Scope::Kind::kRepository) {
    if (!FindRepoLocked(scope.owner, scope.repo)) return NotFound("Not Found");
  } else if (scope.kind == Scope::Kind::kEnterprise) {
    if (options_.enterprise.empty() || !SameName(scope.owner, options_.enterprise)) {
      return NotFound("Not Found");
    }
  } else if (!org_ids_.count(AsciiLower(scope.owner))) {
    return NotFound("Not Found");
  }
  return Status::Ok();
}

Result<Repository> GithubModel::GetRepository(const std::string& owner,
                                              const std::string& repo) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Repository* r = FindRepoLocked(owner, repo);
  if (!r) return NotFound("Not Found");
  return *r;
}

bool GithubModel::OnlineLocked(const RunnerState& r) const {
  if (!r.runner.last_seen || r.version_refused || r.session_lost) return false;
  // A runner running a job stays online: it is talking to the service through its job.
  if (r.runner.busy) return true;
  return seam_.clock.Now() - *r.runner.last_seen <= options_.runner_offline_after;
}

Runner GithubModel::SnapshotLocked(const RunnerState& r) const {
  Runner out = r.runner;
  out.online = OnlineLocked(r);
  return out;
}

Result<JitRegistration> GithubModel::GenerateJitConfig(const Scope& scope,
                                                       const JitRequest& request) {
  if (request.name.empty()) return InvalidArgument("Invalid input: name must not be empty.");
  if (!request.runner_group_id) {
    return InvalidArgument("Invalid input: object is missing required key: runner_group_id.");
  }
  if (request.labels.empty()) {
    return InvalidArgument("Invalid input: labels must have at least 1 item.");
  }
  if (request.labels.size() > 100) {
    return InvalidArgument("Invalid input: labels must have at most 100 items.");
  }
  for (const auto& l : request.labels) {
    if (l.empty()) return InvalidArgument("Invalid input: a label must not be empty.");
  }
  std::lock_guard<std::mutex> lock(mu_);
  MVR_RETURN_IF_ERROR(CheckScopeLocked(scope));
  if (!GroupKnownLocked(scope, *request.runner_group_id)) return NotFound("Not Found");
  ExpireRegistrationsLocked();  // an expired registration's name is free again
  for (const auto& [id, r] : runners_) {
    if (SameName(r.runner.scope.Name(), scope.Name()) && SameName(r.runner.name, request.name)) {
      return Conflict("Already exists - A runner with the name " + request.name +
                      " already exists.");
    }
  }
  RunnerState state;
  Runner& runner = state.runner;
  runner.id = next_runner_id_++;
  runner.name = request.name;
  runner.scope = scope;
  runner.group_id = *request.runner_group_id;
  runner.work_folder = request.work_folder.empty() ? "_work" : request.work_folder;
  runner.created_at = seam_.clock.Now();
  runner.registered_labels = request.labels;
  for (const char* fixed : {"self-hosted", runner.os.c_str(), options_.runner_arch.c_str()}) {
    runner.labels.push_back(RunnerLabel{next_label_id_++, fixed, "read-only"});
  }
  for (const auto& l : request.labels) {
    if (LabelsMatch({l}, runner.labels)) continue;  // already there
    runner.labels.push_back(RunnerLabel{next_label_id_++, l, "custom"});
  }
  JitConfigContents contents;
  contents.runner_id = runner.id;
  contents.runner_name = runner.name;
  contents.server_url = options_.base_url;
  contents.github_url = options_.base_url + "/" + scope.Name();
  contents.work_folder = runner.work_folder;
  contents.credential = Secret("emurunner_" + seam_.secure_random.Hex(24));
  state.credential_hash = Sha256Hex(contents.credential.Reveal());
  JitRegistration reg;
  reg.runner = SnapshotLocked(state);
  reg.encoded_jit_config = EncodeJitConfig(contents, seam_.secure_random);
  runners_[runner.id] = std::move(state);
  return reg;
}

Result<std::vector<Runner>> GithubModel::ListRunners(const Scope& scope,
                                                     const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  MVR_RETURN_IF_ERROR(CheckScopeLocked(scope));
  std::vector<Runner> out;
  for (const auto& [id, r] : runners_) {
    if (!SameName(r.runner.scope.Name(), scope.Name()) || r.runner.scope.kind != scope.kind)
      continue;
    if (!name.empty() && !SameName(r.runner.name, name)) continue;
    if (ExpiredLocked(r)) continue;  // GitHub removed it; the model forgets it at its next step
    Runner shown = ShownLocked(r);
    if (runner_listing_lag_.count() > 0 && shown.busy &&
        (!shown.busy_since || seam_.clock.Now() - *shown.busy_since < runner_listing_lag_)) {
      shown.busy = false;  // the lagging listing has not seen the assignment yet
    }
    out.push_back(shown);
  }
  return out;
}

void GithubModel::SetRunnerListingLag(Duration lag) {
  std::lock_guard<std::mutex> lock(mu_);
  runner_listing_lag_ = lag;
}

Status GithubModel::SetRunnerBusyLies(double p) {
  if (!(p >= 0 && p <= 1)) return InvalidArgument("runner busy lies must be within [0, 1]");
  std::lock_guard<std::mutex> lock(mu_);
  runner_busy_lies_ = p;
  return Status::Ok();
}

Runner GithubModel::ShownLocked(const RunnerState& r) const {
  Runner shown = SnapshotLocked(r);
  if (shown.busy && runner_busy_lies_ > 0 && seam_.random.UniformDouble() < runner_busy_lies_) {
    shown.busy = false;  // REST's view lost the broker's "busy" (actions/runner #4422)
  }
  return shown;
}

Result<Runner> GithubModel::GetRunner(const Scope& scope, int64_t runner_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  MVR_RETURN_IF_ERROR(CheckScopeLocked(scope));
  auto it = runners_.find(runner_id);
  if (it == runners_.end() || !SameName(it->second.runner.scope.Name(), scope.Name()) ||
      ExpiredLocked(it->second)) {
    return NotFound("Not Found");
  }
  return ShownLocked(it->second);
}

Status GithubModel::DeleteRunner(const Scope& scope, int64_t runner_id) {
  std::unique_lock<std::mutex> lock(mu_);
  MVR_RETURN_IF_ERROR(CheckScopeLocked(scope));
  ExpireRegistrationsLocked();
  auto it = runners_.find(runner_id);
  if (it == runners_.end() || !SameName(it->second.runner.scope.Name(), scope.Name())) {
    return NotFound("Not Found");
  }
  Outbox out;
  if (it->second.runner.busy) {
    if (!(runner_busy_lies_ > 0 && seam_.random.UniformDouble() < runner_busy_lies_)) {
      return InvalidArgument("Bad request - Runner \"" + it->second.runner.name +
                             "\" is still running a job\"");
    }
    // The lie reaches the delete too (the stricter reading): the registration goes, and the job
    // it was running loses its runner and fails.
    auto job = it->second.runner.job_id ? jobs_.find(*it->second.runner.job_id) : jobs_.end();
    if (job != jobs_.end() && job->second.status != "completed") {
      job->second.timeline.push_back(
          TimelineEntry{seam_.clock.Now(), "runner_removed_while_busy", it->second.runner.name});
      CompleteLocked(job->second, "failure", out);
    }
    it = runners_.find(runner_id);  // CompleteLocked retires a JIT runner itself
  }
  if (it != runners_.end()) runners_.erase(it);
  lock.unlock();
  Dispatch(std::move(out));
  return Status::Ok();
}

std::vector<Runner> GithubModel::ListAllRunners() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Runner> out;
  for (const auto& [id, r] : runners_) {
    if (!ExpiredLocked(r)) out.push_back(SnapshotLocked(r));
  }
  return out;
}

bool GithubModel::RunnerServesLocked(const RunnerState& r, const Job& job) const {
  const Scope& s = r.runner.scope;
  size_t slash = job.repository.find('/');
  std::string owner = job.repository.substr(0, slash);
  std::string repo = job.repository.substr(slash + 1);
  if (s.kind == Scope::Kind::kRepository) {
    if (!SameName(s.owner, owner) || !SameName(s.repo, repo)) return false;
  } else if (s.kind == Scope::Kind::kEnterprise) {
    if (!org_ids_.count(AsciiLower(owner)))
      return false;  // a user's repository: not the enterprise's
  } else if (!SameName(s.owner, owner)) {
    return false;
  }
  // A scale set's job goes only to a runner of that set, once the set acquired it; a runner of a
  // set takes no other job.
  auto ss = scale_set_jobs_.find(job.id);
  if (ss != scale_set_jobs_.end()) {
    return r.scale_set_id == ss->second.set_id && ss->second.state == "acquired";
  }
  if (r.scale_set_id != 0) return false;
  // A runner group limited to some repositories serves no other repository's job.
  if (!GroupAdmitsLocked(r.runner.group_id, job.repository)) return false;
  return LabelsMatch(job.labels, r.runner.labels);
}

void GithubModel::GiveJobLocked(Job& job, RunnerState& r, Outbox& out) {
  r.runner.busy = true;
  r.runner.job_id = job.id;
  r.job_picked_up = false;
  r.runner.busy_since = seam_.clock.Now();
  job.status = "in_progress";
  job.started_at = seam_.clock.Now();
  job.runner_id = r.runner.id;
  job.runner_name = r.runner.name;
  job.runner_group_id = r.runner.group_id;
  job.runner_group_name = GroupNameLocked(r.runner.group_id);
  job.timeline.push_back(TimelineEntry{seam_.clock.Now(), "assigned", r.runner.name});
  ScaleSetJobStartedLocked(job, r);
  EmitLocked(job, "in_progress", out);
}

std::vector<GithubModel::RunnerState*> GithubModel::IdleRunnersLocked() {
  std::vector<RunnerState*> idle;
  for (auto& [runner_id, r] : runners_) {
    if (!r.runner.busy && !r.runner.job_id && OnlineLocked(r)) idle.push_back(&r);
  }
  return idle;
}

// The idle runners are found once, not once for each queued job: this runs on every request,
// and a burst queues a thousand jobs beside hundreds of runners. Which runner gets which job is
// as it was (the oldest job first, the lowest runner id that serves it).
void GithubModel::AssignLocked(Outbox& out) {
  ExpireRegistrationsLocked();  // an expired registration is handed nothing
  MaintainScaleSetsLocked();    // which queued jobs are a scale set's, and which it holds
  if (random_assignment_) return AssignRandomLocked(out);
  std::vector<RunnerState*> idle = IdleRunnersLocked();
  for (auto& [job_id, job] : jobs_) {
    if (idle.empty()) return;
    if (job.status != "queued") continue;
    for (auto it = idle.begin(); it != idle.end(); ++it) {
      if (!RunnerServesLocked(**it, job)) continue;
      if (!RefuseVersionLocked(**it).empty()) continue;  // never a job for a refused version
      GiveJobLocked(job, **it, out);
      idle.erase(it);
      break;
    }
  }
}

void GithubModel::AssignRandomLocked(Outbox& out) {
  std::vector<Job*> queued;
  for (auto& [job_id, job] : jobs_) {
    if (job.status == "queued") queued.push_back(&job);
  }
  // A random order of the jobs (Fisher-Yates), then a random idle runner for each.
  for (size_t i = queued.size(); i > 1; --i) {
    std::swap(queued[i - 1], queued[seam_.random.Uniform(i)]);
  }
  std::vector<RunnerState*> idle = IdleRunnersLocked();
  for (Job* job : queued) {
    if (idle.empty()) return;
    std::vector<size_t> fit;  // indexes into `idle`, in runner id order
    for (size_t i = 0; i < idle.size(); ++i) {
      if (RunnerServesLocked(*idle[i], *job) &&
          RefuseVersionLocked(*idle[i]).empty()) {  // never a job for a refused version
        fit.push_back(i);
      }
    }
    if (fit.empty()) continue;
    const size_t chosen = fit[seam_.random.Uniform(fit.size())];
    GiveJobLocked(*job, *idle[chosen], out);
    idle.erase(idle.begin() + static_cast<std::ptrdiff_t>(chosen));
  }
}

Status GithubModel::SetAssignment(const std::string& assignment) {
  if (assignment != "oldest" && assignment != "random") {
    return InvalidArgument("assignment must be oldest or random, not \"" + assignment + "\"");
  }
  std::lock_guard<std::mutex> lock(mu_);
  random_assignment_ = assignment == "random";
  return Status::Ok();
}

Status GithubModel::SetCompletedWebhookLoss(double p) {
  if (!(p >= 0 && p <= 1)) return InvalidArgument("completed webhook loss must be within [0, 1]");
  std::lock_guard<std::mutex> lock(mu_);
  completed_webhook_loss_ = p;
  return Status::Ok();
}

void GithubModel::Tick() {
  Outbox out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const TimePoint now = seam_.clock.Now();
    // Completing a job takes it out of unfinished_, so walk a copy.
    ApproveDueLocked(now, out);
    std::vector<Job*> unfinished;
    unfinished.reserve(unfinished_.size());
    for (const auto& [id, unfinished_job] : unfinished_) unfinished.push_back(unfinished_job);
    for (Job* unfinished_job : unfinished) {
      Job& job = *unfinished_job;
      if (job.status == "queued" && now - job.created_at >= options_.queue_timeout) {
        job.timeline.push_back(TimelineEntry{now, "queue_timeout", ""});
        CompleteLocked(job, "cancelled", out);
      } else if (job.status == "in_progress" && job.timeout && job.started_at &&
                 now - *job.started_at >= *job.timeout) {
        job.timeline.push_back(TimelineEntry{now, "timed_out", ""});
        CompleteLocked(job, "cancelled", out);
      }
    }
    RequeueUnpickedLocked();
    FailJobsOfLostRunnersLocked(out);
    AssignLocked(out);
  }
  Dispatch(std::move(out));
}

// Runner groups (GithubModelOptions::runner_groups): an organisation's Default group (id 1)
// admits every repository; a group of "selected" visibility admits only its repositories' jobs,
// which keeps a repository's runner from being handed an older job of another repository (the
// fair share's runners, docs/runner-set-fair-share.md).
namespace {

const RunnerGroupSpec* FindGroup(const std::vector<RunnerGroupSpec>& groups, int64_t id) {
  for (const RunnerGroupSpec& g : groups) {
    if (g.id == id) return &g;
  }
  return nullptr;
}

}  // namespace

bool GithubModel::GroupKnownLocked(const Scope& scope, int64_t id) const {
  if (id == 1) return true;
  // A repository's runners join its Default group only; a group is one organisation's.
  if (scope.kind != Scope::Kind::kOrganization) return false;
  const RunnerGroupSpec* g = FindGroup(options_.runner_groups, id);
  return g && AsciiLower(g->organization) == AsciiLower(scope.owner);
}

bool GithubModel::GroupAdmitsLocked(int64_t id, const std::string& repository) const {
  const RunnerGroupSpec* g = FindGroup(options_.runner_groups, id);
  if (!g) return true;  // Default: every repository its scope serves
  for (const std::string& r : g->repositories) {
    if (AsciiLower(r) == AsciiLower(repository)) return true;
  }
  return false;
}

std::string GithubModel::GroupNameLocked(int64_t id) const {
  const RunnerGroupSpec* g = FindGroup(options_.runner_groups, id);
  return g ? g->name : "Default";
}

}  // namespace mvr::emulate::github
