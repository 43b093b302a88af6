#include "emulate/github/model_json.h"

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

json RepositoryJson(const Repository& repo, const std::string& base_url) {
  json owner;
  owner["login"] = repo.owner;
  owner["id"] = repo.owner_id;
  owner["type"] = repo.owner_is_org ? "Organization" : "User";
  json j;
  j["id"] = repo.id;
  j["node_id"] = "R_emu" + std::to_string(repo.id);
  j["name"] = repo.name;
  j["full_name"] = repo.FullName();
  j["private"] = true;
  j["owner"] = owner;
  j["html_url"] = base_url + "/" + repo.FullName();
  j["url"] = base_url + "/repos/" + repo.FullName();
  j["default_branch"] = "main";
  return j;
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

}  // namespace mvr::emulate::github
