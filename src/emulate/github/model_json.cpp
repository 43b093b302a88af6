#include "emulate/github/model_json.h"

#include "base/json_text.h"
#include "base/numbers.h"
#include "base/time_format.h"

namespace mvr::emulate::github {

using nlohmann::json;

json ErrorJson(const std::string& message, const std::string& doc_path) {
  json j;
  j["message"] = message;
  j["documentation_url"] = "https://docs.github.com" + doc_path;
  return j;
}

json TimeOrNull(const std::optional<TimePoint>& t) {
  return t ? json(FormatRfc3339(*t)) : json(nullptr);
}

json RunnerJson(const Runner& runner) {
  json labels = json::array();
  for (const auto& l : runner.labels) {
    json lj;
    lj["id"] = l.id;
    lj["name"] = l.name;
    lj["type"] = l.type;
    labels.push_back(lj);
  }
  json j;
  j["id"] = runner.id;
  j["name"] = runner.name;
  j["os"] = runner.os;
  j["status"] = runner.online ? "online" : "offline";
  j["busy"] = runner.busy;
  j["ephemeral"] = runner.ephemeral;
  j["runner_group_id"] = runner.group_id;
  j["labels"] = labels;
  // GitHub: "only set if the runner has connected to the service at least once".
  j["version"] = runner.version.empty() ? json(nullptr) : json(runner.version);
  return j;
}

namespace {

json StepsJson(const Job& job, bool detail) {
  json steps = json::array();
  for (const auto& s : job.steps) {
    json sj;
    sj["name"] = s.name;
    sj["number"] = s.number;
    sj["status"] = s.status;
    sj["conclusion"] = s.conclusion.empty() ? json(nullptr) : json(s.conclusion);
    sj["started_at"] = TimeOrNull(s.started_at);
    sj["completed_at"] = TimeOrNull(s.completed_at);
    if (detail) {
      sj["command"] = s.command;
      sj["exit_code"] = s.exit_code;
      sj["stdout"] = s.stdout_text;
      sj["stderr"] = s.stderr_text;
    }
    steps.push_back(sj);
  }
  return steps;
}

json JobJsonImpl(const Job& job, const std::string& base_url, bool detail) {
  const std::string api = base_url + "/repos/" + job.repository + "/actions";
  json j;
  j["id"] = job.id;
  j["run_id"] = job.run_id;
  j["run_attempt"] = job.run_attempt;
  j["run_url"] = api + "/runs/" + std::to_string(job.run_id);
  j["node_id"] = "CR_emu" + std::to_string(job.id);
  j["head_sha"] = job.head_sha;
  j["head_branch"] = job.head_branch;
  j["url"] = api + "/jobs/" + std::to_string(job.id);
  j["html_url"] = base_url + "/" + job.repository + "/actions/runs/" + std::to_string(job.run_id) +
                  "/job/" + std::to_string(job.id);
  j["check_run_url"] =
      base_url + "/repos/" + job.repository + "/check-runs/" + std::to_string(job.id);
  j["status"] = job.status;
  j["conclusion"] = job.conclusion.empty() ? json(nullptr) : json(job.conclusion);
  j["created_at"] = FormatRfc3339(job.created_at);
  // GitHub shows started_at as the creation time until a runner starts the job.
  j["started_at"] = FormatRfc3339(job.started_at.value_or(job.created_at));
  j["completed_at"] = TimeOrNull(job.completed_at);
  j["name"] = job.name;
  j["workflow_name"] = job.workflow_name;
  j["labels"] = job.labels;
  j["runner_id"] = job.runner_id ? json(*job.runner_id) : json(nullptr);
  j["runner_name"] = job.runner_id ? json(job.runner_name) : json(nullptr);
  j["runner_group_id"] = job.runner_group_id ? json(*job.runner_group_id) : json(nullptr);
  j["runner_group_name"] = job.runner_group_id ? json(job.runner_group_name) : json(nullptr);
  j["steps"] = StepsJson(job, detail);
  return j;
}

}  // namespace

RunState RunStateOf(const std::vector<const Job*>& jobs) {
  auto rank = [](const std::string& s) {
    return s == "waiting" ? 0 : s == "queued" ? 1 : s == "in_progress" ? 2 : 3;
  };
  RunState p{jobs.front()->status, "success", jobs.front()->created_at};
  for (const Job* job : jobs) {
    if (rank(job->status) < rank(p.status)) p.status = job->status;
    if (job->conclusion == "failure" || job->conclusion == "cancelled") {
      if (p.conclusion != "failure") p.conclusion = job->conclusion;
    }
    for (const auto& t : {std::optional(job->created_at), job->started_at, job->completed_at}) {
      if (t && *t > p.updated) p.updated = *t;
    }
  }
  return p;
}

namespace {

// The commit a run is for (simple-commit); the emulator's commits are all by one author.
json HeadCommitJson(const Job& job) {
  json person = {{"name", "mvr emulator"}, {"email", "mvr-emulator@users.noreply.github.com"}};
  return {{"id", job.head_sha},
          {"tree_id", job.head_sha},
          {"message", job.workflow_name + " run " + std::to_string(job.run_id)},
          {"timestamp", FormatRfc3339(job.created_at)},
          {"author", person},
          {"committer", person}};
}

}  // namespace

json WorkflowRunJson(const std::vector<const Job*>& jobs, const Repository& repo,
                     const std::string& base_url) {
  const Job& first = *jobs.front();
  const RunState progress = RunStateOf(jobs);
  const std::string id = std::to_string(first.run_id);
  const std::string api = base_url + "/repos/" + repo.FullName();
  const std::string url = api + "/actions/runs/" + id;
  const std::string workflow_path = ".github/workflows/ci.yml";
  json r;
  r["id"] = first.run_id;
  r["name"] = first.workflow_name;
  r["node_id"] = "WFR_emu" + id;
  r["check_suite_id"] = first.run_id;
  r["check_suite_node_id"] = "CS_emu" + id;
  r["head_branch"] = first.head_branch;
  r["head_sha"] = first.head_sha;
  r["path"] = workflow_path;
  r["display_title"] = first.workflow_name;
  r["run_number"] = first.run_id;
  r["run_attempt"] = first.run_attempt;
  r["event"] = "push";
  r["status"] = progress.status;
  r["conclusion"] = progress.status == "completed" ? json(progress.conclusion) : json(nullptr);
  r["workflow_id"] = 1;  // the emulator's repositories have one workflow each
  r["url"] = url;
  r["html_url"] = base_url + "/" + repo.FullName() + "/actions/runs/" + id;
  r["pull_requests"] = json::array();
  r["created_at"] = FormatRfc3339(first.created_at);
  r["updated_at"] = FormatRfc3339(progress.updated);
  r["run_started_at"] = FormatRfc3339(first.created_at);
  r["jobs_url"] = url + "/jobs";
  r["logs_url"] = url + "/logs";
  r["check_suite_url"] = api + "/check-suites/" + id;
  r["artifacts_url"] = url + "/artifacts";
  r["cancel_url"] = url + "/cancel";
  r["rerun_url"] = url + "/rerun";
  r["previous_attempt_url"] = nullptr;
  r["workflow_url"] = api + "/actions/workflows/1";
  r["head_commit"] = HeadCommitJson(first);
  r["repository"] = RepositoryJson(repo, base_url);
  r["head_repository"] = r["repository"];
  return r;
}

json JobJson(const Job& job, const std::string& base_url) {
  return JobJsonImpl(job, base_url, false);
}

json JobDetailJson(const Job& job, const std::string& base_url) {
  json j = JobJsonImpl(job, base_url, true);
  j["repository"] = job.repository;
  json timeline = json::array();
  for (const auto& t : job.timeline) {
    json tj;
    tj["at"] = FormatRfc3339Millis(t.at);
    tj["event"] = t.event;
    if (!t.detail.empty()) tj["detail"] = t.detail;
    timeline.push_back(tj);
  }
  j["timeline"] = timeline;
  return j;
}

json DeliveryJson(const Delivery& d) {
  json j;
  j["guid"] = d.guid;
  j["event"] = d.event;
  j["action"] = d.action;
  j["job_id"] = d.job_id;
  j["created_at"] = FormatRfc3339Millis(d.created_at);
  j["delivered_at"] = d.delivered_at ? json(FormatRfc3339Millis(*d.delivered_at)) : json(nullptr);
  j["status_code"] = d.response_status;
  j["outcome"] = d.outcome;
  j["copies_sent"] = d.copies_sent;
  j["redelivery"] = d.redelivery;
  j["payload"] = d.payload;
  json headers = json::object();
  for (const auto& [k, v] : d.headers) headers[k] = v;
  j["headers"] = headers;
  return j;
}

json JobAssignmentJson(const JobAssignment& a) {
  return json{{"id", a.job_id},
              {"run_id", a.run_id},
              {"run_attempt", a.run_attempt},
              {"name", a.name},
              {"repository", a.repository},
              {"workflow_name", a.workflow_name},
              {"steps", a.steps},
              {"env", a.env}};
}

Result<JobAssignment> ParseJobAssignment(std::string_view body) {
  json j = json::parse(body, nullptr, false);
  JobAssignment a;
  try {
    a.job_id = j.at("id").get<int64_t>();
    a.run_id = j.at("run_id").get<int64_t>();
    a.run_attempt = j.value("run_attempt", 1);
    a.name = j.at("name").get<std::string>();
    a.repository = j.at("repository").get<std::string>();
    a.workflow_name = j.value("workflow_name", "CI");
    a.steps = j.at("steps").get<std::vector<std::string>>();
    a.env = j.value("env", std::map<std::string, std::string>());
  } catch (const json::exception&) {
    return Internal("the emulator sent a job the runner cannot read");
  }
  return a;
}

std::optional<int64_t> ParseId(std::string_view text) {
  return ParseInt64InRange(text, 0, INT64_MAX);
}

namespace {

// What WorkflowRunJson reads: the run's first job, its state over all its jobs, the repository
// and the base URL. A field separator no field holds keeps two keys from running together.
std::string KeyOf(const std::vector<const Job*>& jobs, const Repository& repo,
                  const std::string& base_url) {
  const Job& first = *jobs.front();
  const RunState state = RunStateOf(jobs);
  constexpr char kSep = '\x1f';
  std::string key;
  for (const std::string& part :
       {std::to_string(first.run_id), std::to_string(first.run_attempt), first.workflow_name,
        first.head_branch, first.head_sha, std::to_string(ToUnixMillis(first.created_at)),
        state.status, state.conclusion, std::to_string(ToUnixMillis(state.updated)),
        std::to_string(repo.id), repo.owner, repo.name, std::to_string(repo.owner_id),
        std::string(repo.owner_is_org ? "org" : "user"),
        std::to_string(ToUnixMillis(repo.created_at)), base_url}) {
    key += part;
    key += kSep;
  }
  return key;
}

}  // namespace

std::string RunTextCache::Text(const std::vector<const Job*>& jobs, const Repository& repo,
                               const std::string& base_url) {
  const int64_t run_id = jobs.front()->run_id;
  std::string key = KeyOf(jobs, repo, base_url);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto kept = texts_.find(run_id);
    if (kept != texts_.end() && kept->second.key == key) return kept->second.text;
  }
  std::string text = JsonText(WorkflowRunJson(jobs, repo, base_url));
  std::lock_guard<std::mutex> lock(mu_);
  ++made_;
  // A long-lived emulator sees runs without end: past `capacity_` the oldest runs' texts go.
  while (texts_.size() >= capacity_ && !texts_.empty()) texts_.erase(texts_.begin());
  texts_[run_id] = Kept{std::move(key), text};
  return text;
}

size_t RunTextCache::made() const {
  std::lock_guard<std::mutex> lock(mu_);
  return made_;
}

}  // namespace mvr::emulate::github
