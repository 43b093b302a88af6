// GithubModel: the runner scale-set API's sets, admin tokens, sessions and JIT runners (issue
// 54). The message queue, job routing and offers are in github_model_scaleset_queue.cpp.
#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "base/json_text.h"
#include "emulate/github/github_model.h"
#include "emulate/github/jit_config.h"

namespace mvr::emulate::github {
namespace {

bool SetNameEq(const std::string& a, const std::string& b) {
  return AsciiLower(a) == AsciiLower(b);
}

std::string Uuid(Random& random) {
  const std::string h = random.Hex(16);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20);
}

Status CheckSpec(const ScaleSetSpec& spec) {
  if (spec.name.empty()) return InvalidArgument("a runner scale set needs a name");
  if (spec.name.size() > 64) {
    return InvalidArgument("runner scale set name \"" + spec.name + "\" is over 64 characters");
  }
  for (const auto& l : spec.labels) {
    if (l.empty()) return InvalidArgument("a runner scale set label must not be empty");
  }
  // Only the Default group (id 1) exists in the emulator, as on a repository.
  if (spec.runner_group_id != 1) {
    return NotFound("runner group " + std::to_string(spec.runner_group_id) + " was not found");
  }
  return Status::Ok();
}

}  // namespace

Result<ActionsAdminConnection> GithubModel::IssueAdminConnection(const Scope& scope) {
  std::lock_guard<std::mutex> lock(mu_);
  MVR_RETURN_IF_ERROR(CheckScopeLocked(scope));
  const TimePoint now = seam_.clock.Now();
  const TimePoint expires = now + options_.scaleset.admin_token_lifetime;
  // A JWT, as GitHub's is: clients read its `exp` (unverified) to know when to ask again. The
  // signature is random: only the emulator, which remembers the token, ever checks it.
  nlohmann::json claims{{"iss", "mvr-emulator"},
                        {"aud", "actions"},
                        {"iat", ToUnixSeconds(now)},
                        {"nbf", ToUnixSeconds(now)},
                        {"exp", ToUnixSeconds(expires)}};
  const std::string jwt = Base64UrlEncode(R"({"alg":"RS256","typ":"JWT"})") + "." +
                          Base64UrlEncode(JsonText(claims)) + "." +
                          Base64UrlEncode(seam_.secure_random.Hex(32));
  admin_tokens_[Sha256Hex(jwt)] = AdminGrant{scope, expires};
  ActionsAdminConnection out;
  out.actions_service_url = options_.base_url + "/_services/pipelines";
  out.admin_token = Secret(jwt);
  return out;
}

Result<Scope> GithubModel::AdminScope(const Secret& admin_token) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = admin_tokens_.find(Sha256Hex(admin_token.Reveal()));
  if (it == admin_tokens_.end()) return Unauthorized("the admin token is not valid");
  if (seam_.clock.Now() >= it->second.expires) {
    return Unauthorized("the admin token expired; exchange a new registration token");
  }
  return it->second.scope;
}

ScaleSet GithubModel::SnapshotScaleSetLocked(const ScaleSetState& s) const {
  ScaleSet out = s.set;
  out.statistics = StatisticsLocked(s);
  return out;
}

ScaleSetStatistics GithubModel::StatisticsLocked(const ScaleSetState& s) const {
  ScaleSetStatistics st;
  for (const auto& [job_id, j] : scale_set_jobs_) {
    if (j.set_id != s.set.id) continue;
    if (j.state == "available" || j.state == "offered") ++st.total_available_jobs;
    if (j.state == "acquired") ++st.total_acquired_jobs;
    if (j.state == "running") ++st.total_running_jobs;
    if (j.state == "acquired" || j.state == "running") ++st.total_assigned_jobs;
  }
  st.total_assigned_jobs += s.phantom_assigned;  // ARC #4397: inflated until reset
  for (const auto& [id, r] : runners_) {
    if (r.scale_set_id != s.set.id || ExpiredLocked(r)) continue;
    ++st.total_registered_runners;
    if (r.runner.busy) {
      ++st.total_busy_runners;
    } else if (OnlineLocked(r)) {
      ++st.total_idle_runners;
    }
  }
  return st;
}

Result<GithubModel::ScaleSetState*> GithubModel::FindScaleSetLocked(const Scope& scope,
                                                                    int64_t id) {
  MVR_ASSIGN_OR_RETURN(const ScaleSetState* s, std::as_const(*this).FindScaleSetLocked(scope, id));
  return &scale_sets_.at(s->set.id);
}

Result<const GithubModel::ScaleSetState*> GithubModel::FindScaleSetLocked(const Scope& scope,
                                                                          int64_t id) const {
  auto it = scale_sets_.find(id);
  if (it == scale_sets_.end() || it->second.set.scope.kind != scope.kind ||
      !SetNameEq(it->second.set.scope.Name(), scope.Name())) {
    return NotFound("runner scale set " + std::to_string(id) + " was not found");
  }
  return &it->second;
}

std::vector<ScaleSet> GithubModel::ListScaleSets(const Scope& scope,
                                                 std::optional<int64_t> group_id,
                                                 const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ScaleSet> out;
  for (const auto& [id, s] : scale_sets_) {
    if (s.set.scope.kind != scope.kind || !SetNameEq(s.set.scope.Name(), scope.Name())) continue;
    if (group_id && s.set.runner_group_id != *group_id) continue;
    if (!name.empty() && !SetNameEq(s.set.name, name)) continue;
    out.push_back(SnapshotScaleSetLocked(s));
  }
  return out;
}

Result<ScaleSet> GithubModel::GetScaleSet(const Scope& scope, int64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  MVR_ASSIGN_OR_RETURN(const ScaleSetState* s, FindScaleSetLocked(scope, id));
  return SnapshotScaleSetLocked(*s);
}

Result<ScaleSet> GithubModel::CreateScaleSet(const Scope& scope, const ScaleSetSpec& spec) {
  MVR_RETURN_IF_ERROR(CheckSpec(spec));
  std::lock_guard<std::mutex> lock(mu_);
  MVR_RETURN_IF_ERROR(CheckScopeLocked(scope));
  for (const auto& [id, s] : scale_sets_) {
    if (s.set.scope.kind == scope.kind && SetNameEq(s.set.scope.Name(), scope.Name()) &&
        s.set.runner_group_id == spec.runner_group_id && SetNameEq(s.set.name, spec.name)) {
      return Conflict("a runner scale set named " + spec.name + " already exists in the group");
    }
  }
  ScaleSetState state;
  ScaleSet& set = state.set;
  set.id = next_scale_set_id_++;
  set.name = spec.name;
  set.scope = scope;
  set.runner_group_id = spec.runner_group_id;
  set.labels = spec.labels;
  set.ephemeral = spec.ephemeral;
  set.disable_update = spec.disable_update;
  set.created_on = seam_.clock.Now();
  auto [it, inserted] = scale_sets_.emplace(set.id, std::move(state));
  return SnapshotScaleSetLocked(it->second);
}

Result<ScaleSet> GithubModel::UpdateScaleSet(const Scope& scope, int64_t id,
                                             const ScaleSetSpec& spec) {
  MVR_RETURN_IF_ERROR(CheckSpec(spec));
  std::lock_guard<std::mutex> lock(mu_);
  MVR_ASSIGN_OR_RETURN(ScaleSetState * s, FindScaleSetLocked(scope, id));
  for (const auto& [other_id, o] : scale_sets_) {
    if (other_id != id && o.set.scope.kind == scope.kind &&
        SetNameEq(o.set.scope.Name(), scope.Name()) &&
        o.set.runner_group_id == spec.runner_group_id && SetNameEq(o.set.name, spec.name)) {
      return Conflict("a runner scale set named " + spec.name + " already exists in the group");
    }
  }
  s->set.name = spec.name;
  s->set.runner_group_id = spec.runner_group_id;
  s->set.labels = spec.labels;
  s->set.ephemeral = spec.ephemeral;
  s->set.disable_update = spec.disable_update;
  return SnapshotScaleSetLocked(*s);
}

Status GithubModel::DeleteScaleSet(const Scope& scope, int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  MVR_ASSIGN_OR_RETURN(ScaleSetState * s, FindScaleSetLocked(scope, id));
  EndSessionLocked(*s);
  for (auto it = scale_set_jobs_.begin(); it != scale_set_jobs_.end();) {
    const bool held = it->second.state == "acquired" || it->second.state == "running";
    // A job the set held stays the set's record (it ends as it ends); the others are free again.
    if (it->second.set_id == id && !held) {
      it = scale_set_jobs_.erase(it);
    } else {
      ++it;
    }
  }
  scale_sets_.erase(id);
  return Status::Ok();
}

Result<JitRegistration> GithubModel::GenerateScaleSetJitConfig(const Scope& scope, int64_t id,
                                                               const std::string& name,
                                                               const std::string& work_folder) {
  JitRequest request;
  request.name = name;
  request.work_folder = work_folder;
  request.runner_group_id = 1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    MVR_ASSIGN_OR_RETURN(ScaleSetState * s, FindScaleSetLocked(scope, id));
    request.runner_group_id = s->set.runner_group_id;
    request.labels = {s->set.name};
    for (const auto& l : s->set.labels) request.labels.push_back(l);
  }
  MVR_ASSIGN_OR_RETURN(JitRegistration reg, GenerateJitConfig(scope, request));
  std::lock_guard<std::mutex> lock(mu_);
  // The runner cannot take a job before it connects, so marking it now loses nothing.
  auto it = runners_.find(reg.runner.id);
  if (it != runners_.end()) it->second.scale_set_id = id;
  return reg;
}

ScaleSetSession GithubModel::SessionViewLocked(ScaleSetState& s, const Secret& token) const {
  ScaleSetSession out;
  out.session_id = s.session->id;
  out.owner_name = s.session->owner;
  out.scale_set = SnapshotScaleSetLocked(s);
  out.message_queue_url =
      options_.base_url + "/_services/broker/scalesets/" + std::to_string(s.set.id) + "/messages";
  out.message_queue_access_token = token;
  out.statistics = out.scale_set.statistics;
  return out;
}

Result<ScaleSetSession> GithubModel::CreateScaleSetSession(const Scope& scope, int64_t id,
                                                           const std::string& owner) {
  std::lock_guard<std::mutex> lock(mu_);
  MaintainScaleSetsLocked();  // ends a session idle too long first
  MVR_ASSIGN_OR_RETURN(ScaleSetState * s, FindScaleSetLocked(scope, id));
  if (s->session) {
    return Conflict("a session for runner scale set " + s->set.name +
                    " already exists; another listener holds it")
        .WithErrorType(kSessionConflict);
  }
  const TimePoint now = seam_.clock.Now();
  const Secret token("emuqueue_" + seam_.secure_random.Hex(24));
  ScaleSetSessionState session;
  session.id = Uuid(seam_.secure_random);
  session.owner = owner;
  session.token_hash = Sha256Hex(token.Reveal());
  session.token_expires = now + options_.scaleset.queue_token_lifetime;
  session.last_poll = now;
  s->session = session;
  s->queue.clear();
  if (options_.scaleset.replay_assigned_on_new_session) {
    for (const auto& [job_id, j] : scale_set_jobs_) {
      if (j.set_id == id && (j.state == "acquired" || j.state == "running")) {
        PushEventLocked(jobs_.at(job_id), j, "JobAssigned");
      }
    }
  }
  // ARC #4027 otherwise: jobs acquired before are not announced again. Jobs waiting are offered
  // at the session's first poll, once it has said its capacity.
  return SessionViewLocked(*s, token);
}

Result<ScaleSetSession> GithubModel::RefreshScaleSetSession(const Scope& scope, int64_t id,
                                                            const std::string& session_id) {
  std::lock_guard<std::mutex> lock(mu_);
  MaintainScaleSetsLocked();
  MVR_ASSIGN_OR_RETURN(ScaleSetState * s, FindScaleSetLocked(scope, id));
  if (!s->session || s->session->foreign || !SetNameEq(s->session->id, session_id)) {
    return NotFound("session " + session_id + " was not found; create a new session");
  }
  const Secret token("emuqueue_" + seam_.secure_random.Hex(24));
  s->session->token_hash = Sha256Hex(token.Reveal());
  s->session->token_expires = seam_.clock.Now() + options_.scaleset.queue_token_lifetime;
  s->session->last_poll = seam_.clock.Now();
  return SessionViewLocked(*s, token);
}

Status GithubModel::DeleteScaleSetSession(const Scope& scope, int64_t id,
                                          const std::string& session_id) {
  std::lock_guard<std::mutex> lock(mu_);
  MVR_ASSIGN_OR_RETURN(ScaleSetState * s, FindScaleSetLocked(scope, id));
  if (!s->session || s->session->foreign || !SetNameEq(s->session->id, session_id)) {
    return NotFound("session " + session_id + " was not found");
  }
  EndSessionLocked(*s);
  return Status::Ok();
}

void GithubModel::EndSessionLocked(ScaleSetState& s) {
  s.session.reset();
  s.queue.clear();
  s.max_capacity = -1;
  // Offers nobody can answer now go back to waiting; jobs acquired stay the set's (ARC #4027).
  for (auto& [job_id, j] : scale_set_jobs_) {
    if (j.set_id == s.set.id && j.state == "offered") {
      j.state = "available";
      j.since.reset();
    }
  }
}

Status GithubModel::SetScaleSetFaults(double lost_acks, Duration delay) {
  if (!(lost_acks >= 0 && lost_acks <= 1)) {
    return InvalidArgument("lost acknowledgements must be within [0, 1]");
  }
  if (delay < Duration(0)) return InvalidArgument("message delay must not be negative");
  std::lock_guard<std::mutex> lock(mu_);
  options_.scaleset.lost_acknowledgements = lost_acks;
  options_.scaleset.message_delay = delay;
  return Status::Ok();
}

Status GithubModel::SetPhantomAssignedJobs(int64_t id, int n) {
  if (n < 0) return InvalidArgument("phantom assigned jobs must not be negative");
  std::lock_guard<std::mutex> lock(mu_);
  auto it = scale_sets_.find(id);
  if (it == scale_sets_.end()) return NotFound("no runner scale set " + std::to_string(id));
  it->second.phantom_assigned = n;
  return Status::Ok();
}

Status GithubModel::TakeOverScaleSetSession(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = scale_sets_.find(id);
  if (it == scale_sets_.end()) return NotFound("no runner scale set " + std::to_string(id));
  EndSessionLocked(it->second);
  ScaleSetSessionState foreign;
  foreign.id = Uuid(seam_.secure_random);
  foreign.owner = "another-listener";
  foreign.token_hash = Sha256Hex(seam_.secure_random.Hex(24));  // nobody here holds it
  foreign.token_expires = seam_.clock.Now() + options_.scaleset.queue_token_lifetime;
  foreign.last_poll = seam_.clock.Now();  // it idles out after session_idle_timeout
  foreign.foreign = true;
  it->second.session = foreign;
  return Status::Ok();
}

std::vector<ScaleSetView> GithubModel::ListScaleSetViews() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ScaleSetView> out;
  for (const auto& [id, s] : scale_sets_) {
    ScaleSetView v;
    v.scale_set = SnapshotScaleSetLocked(s);
    v.has_session = s.session.has_value();
    v.foreign_session = s.session && s.session->foreign;
    v.max_capacity = s.max_capacity;
    v.messages_waiting = static_cast<int>(s.queue.size());
    v.phantom_assigned_jobs = s.phantom_assigned;
    out.push_back(std::move(v));
  }
  return out;
}

void GithubModel::StopLongPolls() { long_polls_stopped_.store(true); }

}  // namespace mvr::emulate::github
