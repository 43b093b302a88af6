#include "github/scaleset_client.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "base/json_text.h"

namespace mvr::github {

using nlohmann::json;

namespace {

constexpr const char* kApiVersion = "api-version=6.0-preview";
constexpr const char* kSets = "/_apis/runtime/runnerscalesets";

ScaleSetStatistics StatisticsOf(const json& j) {
  ScaleSetStatistics s;
  if (!j.is_object()) return s;
  auto n = [&](const char* key) {
    return j.contains(key) && j[key].is_number_integer() ? j[key].get<int>() : 0;
  };
  s.available_jobs = n("totalAvailableJobs");
  s.acquired_jobs = n("totalAcquiredJobs");
  s.assigned_jobs = n("totalAssignedJobs");
  s.running_jobs = n("totalRunningJobs");
  s.registered_runners = n("totalRegisteredRunners");
  s.busy_runners = n("totalBusyRunners");
  s.idle_runners = n("totalIdleRunners");
  return s;
}

std::string Text(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

int64_t Int(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : 0;
}

Result<ScaleSetInfo> SetFrom(const json& j) {
  if (!j.is_object() || !j.contains("id") || !j["id"].is_number_integer()) {
    return Internal("the runner scale set in GitHub's answer has no id");
  }
  ScaleSetInfo s;
  s.id = j["id"].get<int64_t>();
  s.name = Text(j, "name");
  s.runner_group_id = Int(j, "runnerGroupId");
  if (j.contains("statistics")) s.statistics = StatisticsOf(j["statistics"]);
  return s;
}

ScaleSetJobEvent EventFrom(const json& e) {
  ScaleSetJobEvent out;
  out.type = Text(e, "messageType");
  out.runner_request_id = Int(e, "runnerRequestId");
  out.job_id = Text(e, "jobId");
  out.repository = Text(e, "ownerName") + "/" + Text(e, "repositoryName");
  out.display_name = Text(e, "jobDisplayName");
  out.workflow_run_id = Int(e, "workflowRunId");
  if (e.contains("requestLabels") && e["requestLabels"].is_array()) {
    for (const auto& l : e["requestLabels"]) {
      if (l.is_string()) out.labels.push_back(l.get<std::string>());
    }
  }
  out.runner_id = Int(e, "runnerId");
  out.runner_name = Text(e, "runnerName");
  out.result = Text(e, "result");
  return out;
}

json SetBody(const std::string& name, const std::vector<std::string>& labels, int64_t group) {
  json l = json::array();
  l.push_back(json{{"name", name}, {"type", "System"}});
  for (const auto& label : labels) {
    if (AsciiLower(label) != AsciiLower(name))
      l.push_back(json{{"name", label}, {"type", "System"}});
  }
  return json{{"name", name},
              {"runnerGroupId", group},
              {"labels", l},
              {"RunnerSetting", {{"ephemeral", true}, {"disableUpdate", true}}}};
}

bool SameLabels(const json& set, const json& wanted) {
  std::vector<std::string> have, want;
  for (const auto& l : set.value("labels", json::array()))
    have.push_back(AsciiLower(Text(l, "name")));
  for (const auto& l : wanted["labels"]) want.push_back(AsciiLower(Text(l, "name")));
  std::sort(have.begin(), have.end());
  std::sort(want.begin(), want.end());
  return have == want;
}

}  // namespace

Status ActionsStatus(const http::HttpResponse& r, const std::string& what) {
  json body = json::parse(r.body, nullptr, false);
  std::string message = body.is_object() ? Text(body, "message") : "";
  if (message.empty()) message = "HTTP " + std::to_string(r.status);
  const std::string text = what + ": " + message;
  Status s = Internal(text);
  if (r.status == 409) s = Conflict(text);
  if (r.status == 401) s = Unauthorized(text);
  if (r.status == 404) s = NotFound(text);
  if (r.status == 400 || r.status == 422) s = InvalidArgument(text);
  if (r.status == 429 || r.status >= 500) s = Transient(text);
  const std::string type = body.is_object() ? Text(body, "typeName") : "";
  return type.empty() ? s : s.WithErrorType(type);
}

ScaleSetClient::ScaleSetClient(http::HttpClient& http, const Clock& clock, GitHub& github,
                               RunnerScope scope, ScaleSetClientOptions options)
    : http_(http),
      clock_(clock),
      github_(github),
      scope_(std::move(scope)),
      options_(std::move(options)) {}

Result<http::HttpResponse> ScaleSetClient::Send(http::HttpRequest request) {
  Result<http::HttpResponse> r = http_.Send(request);
  if (!r.ok()) return Transient("the scale-set API did not answer: " + r.status().message());
  return r;
}

Result<ScaleSetClient::Admin> ScaleSetClient::AdminConnection() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (admin_ && clock_.Now() + Duration(60'000) < admin_->expires) return *admin_;
  }
  MVR_ASSIGN_OR_RETURN(RegistrationToken token, github_.CreateRegistrationToken(scope_));
  http::HttpRequest req;
  req.method = "POST";
  req.url = options_.api_base_url + "/actions/runner-registration";
  req.timeout = options_.request_timeout;
  req.headers.Set("Authorization", "RemoteAuth " + token.token.Reveal());
  req.headers.Set("Content-Type", "application/json");
  req.body = JsonText(json{{"url", options_.config_url}, {"runner_event", "register"}});
  MVR_ASSIGN_OR_RETURN(http::HttpResponse res, Send(std::move(req)));
  if (res.status < 200 || res.status > 299) {
    return ActionsStatus(res, "exchanging the registration token at /actions/runner-registration");
  }
  json body = json::parse(res.body, nullptr, false);
  if (!body.is_object() || Text(body, "url").empty() || Text(body, "token").empty()) {
    return Internal("/actions/runner-registration answered without url and token");
  }
  Admin admin;
  admin.url = Text(body, "url");
  while (!admin.url.empty() && admin.url.back() == '/') admin.url.pop_back();
  admin.token = Secret(Text(body, "token"));
  admin.expires = clock_.Now() + Duration(3'600'000);  // unless the JWT says otherwise
  const std::string jwt = admin.token.Reveal();
  const size_t a = jwt.find('.'), b = jwt.find('.', a == std::string::npos ? 0 : a + 1);
  if (a != std::string::npos && b != std::string::npos) {
    Result<std::string> claims = Base64UrlDecode(jwt.substr(a + 1, b - a - 1));
    json c = claims.ok() ? json::parse(*claims, nullptr, false) : json();
    if (c.is_object() && c.contains("exp") && c["exp"].is_number_integer()) {
      admin.expires = FromUnixSeconds(c["exp"].get<int64_t>());
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  admin_ = admin;
  return admin;
}

Result<http::HttpResponse> ScaleSetClient::ActionsCall(const std::string& method,
                                                       const std::string& path,
                                                       const std::string& query,
                                                       const std::string& body) {
  MVR_ASSIGN_OR_RETURN(Admin admin, AdminConnection());
  http::HttpRequest req;
  req.method = method;
  req.url = admin.url + path + "?" + (query.empty() ? "" : query + "&") + kApiVersion;
  req.timeout = options_.request_timeout;
  req.headers.Set("Authorization", "Bearer " + admin.token.Reveal());
  req.headers.Set("Content-Type", "application/json");
  req.body = body;
  MVR_ASSIGN_OR_RETURN(http::HttpResponse res, Send(std::move(req)));
  if (res.status == 401) {  // the admin token was refused: ask for a new one next time
    std::lock_guard<std::mutex> lock(mu_);
    admin_.reset();
  }
  return res;
}

Result<ScaleSetInfo> ScaleSetClient::EnsureScaleSet(const std::string& name,
                                                    const std::vector<std::string>& labels,
                                                    int64_t runner_group_id) {
  const json wanted = SetBody(name, labels, runner_group_id);
  const std::string query =
      "runnerGroupId=" + std::to_string(runner_group_id) + "&name=" + UriEncode(name);
  MVR_ASSIGN_OR_RETURN(http::HttpResponse found, ActionsCall("GET", kSets, query, ""));
  if (found.status != 200) return ActionsStatus(found, "finding runner scale set " + name);
  json list = json::parse(found.body, nullptr, false);
  if (list.is_object() && Int(list, "count") > 0 && list["value"].is_array() &&
      !list["value"].empty()) {
    const json& set = list["value"][0];
    if (SameLabels(set, wanted)) return SetFrom(set);
    MVR_ASSIGN_OR_RETURN(
        http::HttpResponse updated,
        ActionsCall("PATCH", std::string(kSets) + "/" + std::to_string(Int(set, "id")), "",
                    JsonText(wanted)));
    if (updated.status != 200) return ActionsStatus(updated, "updating runner scale set " + name);
    return SetFrom(json::parse(updated.body, nullptr, false));
  }
  MVR_ASSIGN_OR_RETURN(http::HttpResponse created,
                       ActionsCall("POST", kSets, "", JsonText(wanted)));
  if (created.status != 200) return ActionsStatus(created, "creating runner scale set " + name);
  return SetFrom(json::parse(created.body, nullptr, false));
}

Result<std::optional<ScaleSetInfo>> ScaleSetClient::FindScaleSet(const std::string& name,
                                                                 int64_t runner_group_id) {
  const std::string query =
      "runnerGroupId=" + std::to_string(runner_group_id) + "&name=" + UriEncode(name);
  MVR_ASSIGN_OR_RETURN(http::HttpResponse found, ActionsCall("GET", kSets, query, ""));
  if (found.status != 200) return ActionsStatus(found, "finding runner scale set " + name);
  json list = json::parse(found.body, nullptr, false);
  if (!list.is_object() || Int(list, "count") <= 0 || !list["value"].is_array() ||
      list["value"].empty()) {
    return std::optional<ScaleSetInfo>();
  }
  MVR_ASSIGN_OR_RETURN(ScaleSetInfo set, SetFrom(list["value"][0]));
  return std::optional<ScaleSetInfo>(std::move(set));
}

Result<JitConfig> ScaleSetClient::GenerateJitConfig(int64_t scale_set_id,
                                                    const std::string& runner_name) {
  MVR_ASSIGN_OR_RETURN(
      http::HttpResponse res,
      ActionsCall("POST",
                  std::string(kSets) + "/" + std::to_string(scale_set_id) + "/generatejitconfig",
                  "", JsonText(json{{"name", runner_name}, {"workFolder", "_work"}})));
  if (res.status != 200) return ActionsStatus(res, "registering runner " + runner_name);
  json body = json::parse(res.body, nullptr, false);
  if (!body.is_object() || !body.contains("runner") || Text(body, "encodedJITConfig").empty()) {
    return Internal("generatejitconfig answered without runner and encodedJITConfig");
  }
  JitConfig out;
  out.runner.id = Int(body["runner"], "id");
  out.runner.name = Text(body["runner"], "name");
  out.encoded_jit_config = Secret(Text(body, "encodedJITConfig"));
  return out;
}

Result<ScaleSetSessionInfo> ScaleSetClient::SessionFrom(int64_t scale_set_id,
                                                        const http::HttpResponse& res) {
  json body = json::parse(res.body, nullptr, false);
  if (!body.is_object() || Text(body, "sessionId").empty() ||
      Text(body, "messageQueueUrl").empty() || Text(body, "messageQueueAccessToken").empty()) {
    return Internal("the session in GitHub's answer lacks sessionId or its message queue");
  }
  ScaleSetSessionInfo s;
  s.scale_set_id = scale_set_id;
  s.session_id = Text(body, "sessionId");
  s.message_queue_url = Text(body, "messageQueueUrl");
  s.message_queue_token = Secret(Text(body, "messageQueueAccessToken"));
  if (body.contains("statistics")) s.statistics = StatisticsOf(body["statistics"]);
  return s;
}

Result<ScaleSetSessionInfo> ScaleSetClient::CreateSession(int64_t scale_set_id,
                                                          const std::string& owner) {
  MVR_ASSIGN_OR_RETURN(
      http::HttpResponse res,
      ActionsCall("POST", std::string(kSets) + "/" + std::to_string(scale_set_id) + "/sessions", "",
                  JsonText(json{{"ownerName", owner}})));
  if (res.status != 200) return ActionsStatus(res, "creating the scale set's session");
  return SessionFrom(scale_set_id, res);
}

Result<ScaleSetSessionInfo> ScaleSetClient::RefreshSession(const ScaleSetSessionInfo& session) {
  MVR_ASSIGN_OR_RETURN(http::HttpResponse res,
                       ActionsCall("PATCH",
                                   std::string(kSets) + "/" + std::to_string(session.scale_set_id) +
                                       "/sessions/" + session.session_id,
                                   "", ""));
  if (res.status != 200) return ActionsStatus(res, "refreshing the scale set's session");
  return SessionFrom(session.scale_set_id, res);
}

Status ScaleSetClient::DeleteSession(const ScaleSetSessionInfo& session) {
  MVR_ASSIGN_OR_RETURN(http::HttpResponse res,
                       ActionsCall("DELETE",
                                   std::string(kSets) + "/" + std::to_string(session.scale_set_id) +
                                       "/sessions/" + session.session_id,
                                   "", ""));
  if (res.status != 204 && res.status != 404) {
    return ActionsStatus(res, "deleting the scale set's session");
  }
  return Status::Ok();
}

Result<std::optional<ScaleSetMessage>> ScaleSetClient::GetMessage(
    const ScaleSetSessionInfo& session, int64_t last_message_id, int max_capacity) {
  http::HttpRequest req;
  req.url = session.message_queue_url;
  if (last_message_id > 0) req.url += "?lastMessageId=" + std::to_string(last_message_id);
  req.timeout = options_.poll_timeout;
  req.headers.Set("Authorization", "Bearer " + session.message_queue_token.Reveal());
  req.headers.Set("Accept", "application/json; api-version=6.0-preview");
  req.headers.Set("X-ScaleSetMaxCapacity", std::to_string(std::max(0, max_capacity)));
  MVR_ASSIGN_OR_RETURN(http::HttpResponse res, Send(std::move(req)));
  if (res.status == 202) return std::optional<ScaleSetMessage>();
  if (res.status != 200) return ActionsStatus(res, "reading the scale set's messages");
  json body = json::parse(res.body, nullptr, false);
  if (!body.is_object() || Text(body, "messageType") != "RunnerScaleSetJobMessages") {
    return Internal("a scale-set message is not RunnerScaleSetJobMessages");
  }
  ScaleSetMessage m;
  m.message_id = Int(body, "messageId");
  if (body.contains("statistics")) m.statistics = StatisticsOf(body["statistics"]);
  json events = json::parse(Text(body, "body"), nullptr, false);
  if (events.is_array()) {
    for (const auto& e : events) {
      ScaleSetJobEvent ev = EventFrom(e);
      if (ev.type == "JobAvailable" || ev.type == "JobAssigned" || ev.type == "JobStarted" ||
          ev.type == "JobCompleted") {
        m.events.push_back(std::move(ev));
      }
    }
  }
  return std::optional<ScaleSetMessage>(std::move(m));
}

Status ScaleSetClient::DeleteMessage(const ScaleSetSessionInfo& session, int64_t message_id) {
  http::HttpRequest req;
  req.method = "DELETE";
  req.url = session.message_queue_url + "/" + std::to_string(message_id);
  req.timeout = options_.request_timeout;
  req.headers.Set("Authorization", "Bearer " + session.message_queue_token.Reveal());
  req.headers.Set("Content-Type", "application/json");
  MVR_ASSIGN_OR_RETURN(http::HttpResponse res, Send(std::move(req)));
  // 404: already acknowledged (a retried delete whose first answer was lost).
  if (res.status == 204 || res.status == 404) return Status::Ok();
  return ActionsStatus(res, "acknowledging message " + std::to_string(message_id));
}

Result<std::vector<int64_t>> ScaleSetClient::AcquireJobs(const ScaleSetSessionInfo& session,
                                                         const std::vector<int64_t>& ids) {
  MVR_ASSIGN_OR_RETURN(Admin admin, AdminConnection());
  http::HttpRequest req;
  req.method = "POST";
  req.url = admin.url + kSets + "/" + std::to_string(session.scale_set_id) + "/acquirejobs?" +
            kApiVersion;
  req.timeout = options_.request_timeout;
  req.headers.Set("Authorization", "Bearer " + session.message_queue_token.Reveal());
  req.headers.Set("Content-Type", "application/json");
  req.body = JsonText(json(ids));
  MVR_ASSIGN_OR_RETURN(http::HttpResponse res, Send(std::move(req)));
  if (res.status != 200) return ActionsStatus(res, "acquiring jobs");
  json body = json::parse(res.body, nullptr, false);
  std::vector<int64_t> out;
  if (body.is_object() && body.contains("value") && body["value"].is_array()) {
    for (const auto& v : body["value"]) {
      if (v.is_number_integer()) out.push_back(v.get<int64_t>());
    }
  }
  return out;
}

}  // namespace mvr::github
