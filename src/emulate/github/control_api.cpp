#include "emulate/github/control_api.h"

#include <optional>

#include "base/json_fields.h"
#include "base/time_format.h"

#include "emulate/github/model_json.h"
#include "emulate/github/rest_api.h"

namespace mvr::emulate::github {

using http::HttpResponse;
using http::PathParams;
using http::ServerRequest;
using nlohmann::json;

namespace {

// A self-hosted runner's job may run for up to 5 days; a longer timeout is a mistake in the
// request.
constexpr int64_t kMaxJobTimeoutSeconds = 5LL * 24 * 3600;

// Reads the optional whole number `key` into *out; false when it is there but not a whole number
// in [min, max] (a float such as 1e30 is refused rather than converted).
bool NumberIn(const json& body, const char* key, int64_t min, int64_t max, int64_t* out) {
  if (!body.contains(key)) return true;
  Result<int64_t> v = JsonFields(body, "").IntInRange(key, min, max);
  if (v.ok()) *out = *v;
  return v.ok();
}

HttpResponse NoContent() {
  HttpResponse out;
  out.status = 204;
  return out;
}

Secret RunnerCredential(const ServerRequest& req) {
  auto h = req.headers.Get("Authorization");
  if (!h || h->rfind("Bearer ", 0) != 0) return Secret();
  return Secret(h->substr(7));
}

HttpResponse BadBody(const std::string& what) {
  return JsonResponse(400, ErrorJson("Problems parsing JSON: " + what));
}

// {"min_runner_version": "V"} and/or {"latest_runner_release": "V", "latest_runner_released_at":
// RFC 3339}: the runner versions GitHub accepts from now on ("" clears one); nothing else may come
// with them. 200 with the policy; 400 for a version that is not N.N.N or a bad time. nullopt: the
// body names neither key (another fault).
std::optional<HttpResponse> RunnerVersionFaults(GithubModel& model, const json& body) {
  if (!body.is_object() ||
      (!body.contains("min_runner_version") && !body.contains("latest_runner_release"))) {
    return std::nullopt;
  }
  RunnerVersionPolicy policy = model.runner_version_policy();
  for (const auto& [key, value] : body.items()) {
    if (!value.is_string()) return BadBody("\"" + key + "\" must be a string");
    const std::string text = value.get<std::string>();
    if (key == "min_runner_version") {
      policy.min_version = text;
    } else if (key == "latest_runner_release") {
      policy.latest_release = text;
    } else if (key == "latest_runner_released_at") {
      Result<TimePoint> at = ParseRfc3339(text);
      if (!at.ok()) return BadBody("latest_runner_released_at: " + at.status().message());
      policy.released_at = *at;
    } else {
      return BadBody("runner version keys may not come with \"" + key + "\"");
    }
  }
  if (Status s = model.SetRunnerVersionPolicy(policy); !s.ok()) return BadBody(s.message());
  json answer{{"min_runner_version", policy.min_version},
              {"latest_runner_release", policy.latest_release}};
  if (policy.released_at) answer["latest_runner_released_at"] = FormatRfc3339(*policy.released_at);
  return JsonResponse(200, answer);
}

// GitHub answers a runner whose version it refuses 403 with its message (actions/runner #4392).
HttpResponse RunnerError(const Status& s) {
  if (s.error_type() == kRunnerVersionRefused) {
    return JsonResponse(403, json{{"message", s.message()}});
  }
  return ErrorResponse(s);
}

}  // namespace

void ControlApi::AddRoutes(http::Router& router) {
  AddEmulatorRoutes(router);
  AddRunnerRoutes(router);
}

HttpResponse ControlApi::QueueJob(const ServerRequest& req) {
  json body = json::parse(req.body, nullptr, false);
  if (!body.is_object()) return BadBody("the body must be a JSON object");
  JobSpec spec;
  try {
    spec.repository = body.at("repository").get<std::string>();
    spec.labels = body.at("labels").get<std::vector<std::string>>();
    spec.steps = body.at("steps").get<std::vector<std::string>>();
    spec.name = body.value("name", spec.name);
    if (body.contains("env")) spec.env = body["env"].get<std::map<std::string, std::string>>();
    int64_t run_id = 0;
    if (!NumberIn(body, "run_id", 1, INT64_MAX, &run_id)) {
      return BadBody("run_id must be a whole number from 1");
    }
    if (run_id > 0) spec.run_id = run_id;
    int64_t attempt = spec.run_attempt;
    if (!NumberIn(body, "run_attempt", 1, INT32_MAX, &attempt)) {
      return BadBody("run_attempt must be a whole number from 1");
    }
    spec.run_attempt = static_cast<int>(attempt);
    int64_t seconds = -1;
    if (!NumberIn(body, "timeout_seconds", 1, kMaxJobTimeoutSeconds, &seconds)) {
      return BadBody("timeout_seconds must be a whole number from 1 to " +
                     std::to_string(kMaxJobTimeoutSeconds) + " (5 days)");
    }
    if (seconds > 0) spec.timeout = Duration(seconds * 1000);
    spec.wait_for_environment = body.value("wait_for_environment", false);
    int64_t approve_after = -1;
    if (!NumberIn(body, "approve_after_seconds", 1, int64_t{30} * 24 * 3600, &approve_after)) {
      return BadBody("approve_after_seconds must be a whole number from 1 to 2592000 (30 days)");
    }
    if (approve_after > 0) spec.approve_after = Duration(approve_after * 1000);
    spec.drop_webhooks = body.value("drop_webhooks", false);
    spec.wedge_runner = body.value("wedge_runner", false);
  } catch (const json::exception&) {
    return BadBody(
        "expected {\"repository\":\"OWNER/NAME\",\"labels\":[...],\"steps\":[\"cmd\",...]} with "
        "optional name, env, run_id, run_attempt, timeout_seconds, wait_for_environment, "
        "approve_after_seconds, drop_webhooks, wedge_runner");
  }
  auto job = model_.QueueJob(spec);
  if (!job.ok()) return ErrorResponse(job.status());
  logger_.Info("job queued", {{"job_id", job->id}, {"repository", job->repository}});
  return JsonResponse(201, JobDetailJson(*job, model_.options().base_url));
}

void ControlApi::AddEmulatorRoutes(http::Router& router) {
  router.Add("POST", "/_emulator/jobs",
             [this](const ServerRequest& r, const PathParams&) { return QueueJob(r); });
  router.Add("GET", "/_emulator/jobs", [this](const ServerRequest&, const PathParams&) {
    json list = json::array();
    for (const auto& job : model_.ListAllJobs()) {
      list.push_back(JobDetailJson(job, model_.options().base_url));
    }
    json j;
    j["jobs"] = list;
    return JsonResponse(200, j);
  });
  router.Add("GET", "/_emulator/jobs/{id}", [this](const ServerRequest&, const PathParams& p) {
    auto id = ParseId(p.at("id"));
    if (!id) return ErrorResponse(NotFound("job id must be a number"));
    auto job = model_.GetJobById(*id);
    if (!job.ok()) return ErrorResponse(job.status());
    return JsonResponse(200, JobDetailJson(*job, model_.options().base_url));
  });
  for (const char* verb : {"cancel", "approve"}) {
    const bool cancel = std::string(verb) == "cancel";
    router.Add("POST", std::string("/_emulator/jobs/{id}/") + verb,
               [this, cancel](const ServerRequest&, const PathParams& p) {
                 auto id = ParseId(p.at("id"));
                 if (!id) return ErrorResponse(NotFound("job id must be a number"));
                 Status s = cancel ? model_.CancelJob(*id) : model_.ApproveJob(*id);
                 if (!s.ok()) return ErrorResponse(s);
                 auto job = model_.GetJobById(*id);
                 if (!job.ok()) return ErrorResponse(job.status());
                 return JsonResponse(200, JobDetailJson(*job, model_.options().base_url));
               });
  }
  router.Add("GET", "/_emulator/runners", [this](const ServerRequest&, const PathParams&) {
    json list = json::array();
    for (const auto& r : model_.ListAllRunners()) {
      json rj = RunnerJson(r);
      rj["scope"] = r.scope.Name();
      rj["job_id"] = r.job_id ? json(*r.job_id) : json(nullptr);
      rj["registered_labels"] = r.registered_labels;
      list.push_back(rj);
    }
    json j;
    j["runners"] = list;
    return JsonResponse(200, j);
  });
  router.Add("GET", "/_emulator/deliveries", [this](const ServerRequest&, const PathParams&) {
    json list = json::array();
    for (const auto& d : model_.ListDeliveries()) list.push_back(DeliveryJson(d));
    json j;
    j["deliveries"] = list;
    return JsonResponse(200, j);
  });
  router.Add("POST", "/_emulator/deliveries/{guid}/redeliver",
             [this](const ServerRequest&, const PathParams& p) {
               Status s = model_.Redeliver(p.at("guid"));
               if (!s.ok()) return ErrorResponse(s);
               return JsonResponse(202, json::object());
             });
  // Faults that last until changed: {"runner_listing_lag_ms": N} makes the runner listing show
  // each runner's busy flag as it was N ms ago (GET .../runners/{id} stays current);
  // {"runner_busy_lies": P} makes a listing or GET say busy:false for a runner running a job with
  // probability P (and a DELETE believe it); {"assignment": "oldest"|"random"} chooses which idle
  // runner takes a queued job; {"completed_webhook_loss": P} drops `completed` deliveries with
  // probability P. Any of the keys; a body with none, or one bad, changes nothing. The runner
  // version policy ({"min_runner_version": V}, ...) goes alone in its call (RunnerVersionFaults).
  router.Add("POST", "/_emulator/faults",
             [this](const ServerRequest& r, const PathParams&) { return Faults(r); });
  router.Add("POST", "/_emulator/credentials",
             [this](const ServerRequest& r, const PathParams&) { return Credentials(r); });
  router.Add("POST", "/_emulator/tick", [this](const ServerRequest&, const PathParams&) {
    model_.Tick();
    return NoContent();
  });
}

// {"revoke_pat": "<token>"}: that PAT answers 401 "Bad credentials" from now on (a PAT that
// expired or was revoked). {"add_pat": "<token>"}: a PAT accepted from now on (the new one).
// {"app_key": "revoked" | "active"}: the App's key deleted (every JWT refused, installation
// tokens revoked) or in force again. The answer names what changed, never a token.
HttpResponse ControlApi::Credentials(const ServerRequest& req) {
  json body = json::parse(req.body, nullptr, false);
  const char* expected =
      "expected {\"revoke_pat\": TOKEN}, {\"add_pat\": TOKEN} or {\"app_key\": "
      "\"revoked\"|\"active\"}";
  if (!body.is_object() || body.size() != 1) return BadBody(expected);
  if (body.contains("revoke_pat") && body["revoke_pat"].is_string()) {
    Status s = auth_.RevokePat(body["revoke_pat"].get<std::string>());
    if (!s.ok()) return ErrorResponse(s);
    logger_.Info("emulator: a PAT was revoked");
    return JsonResponse(200, json{{"pat", "revoked"}});
  }
  if (body.contains("add_pat") && body["add_pat"].is_string() &&
      !body["add_pat"].get<std::string>().empty()) {
    auth_.AddPat(Secret(body["add_pat"].get<std::string>()));
    logger_.Info("emulator: a PAT was added");
    return JsonResponse(200, json{{"pat", "active"}});
  }
  if (body.contains("app_key") && body["app_key"].is_string()) {
    const std::string state = body["app_key"].get<std::string>();
    if (state != "revoked" && state != "active") return BadBody(expected);
    auth_.SetAppKeyRevoked(state == "revoked");
    logger_.Info("emulator: the App key's state changed", {{"app_key", state}});
    return JsonResponse(200, json{{"app_key", state}});
  }
  return BadBody(expected);
}

void ControlApi::AddRunnerRoutes(http::Router& router) {
  router.Add("POST", "/_runner/connect", [this](const ServerRequest& r, const PathParams&) {
    json body = json::parse(r.body, nullptr, false);
    std::string version;
    if (body.is_object() && body.contains("version") && body["version"].is_string()) {
      version = body["version"].get<std::string>();
    }
    auto session = model_.RunnerConnect(RunnerCredential(r), version);
    if (!session.ok()) return RunnerError(session.status());
    logger_.Info("runner connected",
                 {{"runner_id", session->runner_id}, {"runner_name", session->runner_name}});
    json j;
    j["runner_id"] = session->runner_id;
    j["runner_name"] = session->runner_name;
    return JsonResponse(200, j);
  });
  router.Add("GET", "/_runner/job", [this](const ServerRequest& r, const PathParams&) {
    auto job = model_.RunnerAcquireJob(RunnerCredential(r));
    if (!job.ok()) return RunnerError(job.status());
    if (!*job) return NoContent();
    return JsonResponse(200, JobAssignmentJson(**job));
  });
  router.Add("POST", "/_runner/jobs/{id}/steps/{number}",
             [this](const ServerRequest& r, const PathParams& p) {
               auto id = ParseId(p.at("id"));
               auto number = ParseId(p.at("number"));
               json body = json::parse(r.body, nullptr, false);
               if (!id || !number || !body.is_object()) return BadBody("step report");
               StepReport report;
               report.number = static_cast<int>(*number);
               try {  // value() throws when a field has another type
                 report.status = body.value("status", "completed");
                 report.conclusion = body.value("conclusion", "");
                 report.exit_code = body.value("exit_code", 0);
                 report.stdout_text = body.value("stdout", "");
                 report.stderr_text = body.value("stderr", "");
               } catch (const json::exception&) {
                 return BadBody(
                     "step report: status, conclusion, stdout, stderr are strings, "
                     "exit_code a number");
               }
               Status s = model_.RunnerReportStep(RunnerCredential(r), *id, report);
               if (!s.ok()) return ErrorResponse(s);
               return NoContent();
             });
  router.Add("POST", "/_runner/jobs/{id}/complete",
             [this](const ServerRequest& r, const PathParams& p) {
               auto id = ParseId(p.at("id"));
               json body = json::parse(r.body, nullptr, false);
               if (!id || !body.is_object()) return BadBody("completion report");
               if (body.contains("conclusion") && !body["conclusion"].is_string()) {
                 return BadBody("completion report: conclusion must be a string");
               }
               const std::string conclusion = body.value("conclusion", "");
               Status s = model_.RunnerCompleteJob(RunnerCredential(r), *id, conclusion);
               if (!s.ok()) return ErrorResponse(s);
               logger_.Info("job completed", {{"job_id", *id}, {"conclusion", conclusion}});
               return NoContent();
             });
}

HttpResponse ControlApi::Faults(const ServerRequest& r) {
  json body = json::parse(r.body, nullptr, false);
  if (auto versions = RunnerVersionFaults(model_, body)) return *versions;
  auto probability = [&](const char* key) {
    return body[key].is_number() && body[key].get<double>() >= 0 && body[key].get<double>() <= 1;
  };
  const bool object = body.is_object();
  const bool has_lag = object && body.contains("runner_listing_lag_ms");
  const bool has_lies = object && body.contains("runner_busy_lies");
  const bool has_assignment = object && body.contains("assignment");
  const bool has_loss = object && body.contains("completed_webhook_loss");
  const bool bad =
      !object || !(has_lag || has_lies || has_assignment || has_loss) ||
      (has_lag && !(body["runner_listing_lag_ms"].is_number_integer() &&
                    body["runner_listing_lag_ms"].get<int64_t>() >= 0)) ||
      (has_lies && !probability("runner_busy_lies")) ||
      (has_assignment && !(body["assignment"] == "oldest" || body["assignment"] == "random")) ||
      (has_loss && !probability("completed_webhook_loss"));
  if (bad) {
    return BadBody(
        "expected any of {\"runner_listing_lag_ms\": N} with N >= 0, {\"runner_busy_lies\": "
        "P}, {\"completed_webhook_loss\": P} with 0 <= P <= 1, {\"assignment\": "
        "\"oldest\"|\"random\"}");
  }
  json answer = json::object();
  if (has_lag) {
    const int64_t lag = body["runner_listing_lag_ms"].get<int64_t>();
    model_.SetRunnerListingLag(Duration(lag));
    answer["runner_listing_lag_ms"] = lag;
  }
  if (has_lies) {
    const double p = body["runner_busy_lies"].get<double>();
    if (Status s = model_.SetRunnerBusyLies(p); !s.ok()) return ErrorResponse(s);
    answer["runner_busy_lies"] = p;
  }
  if (has_assignment) {
    const std::string a = body["assignment"].get<std::string>();
    if (Status s = model_.SetAssignment(a); !s.ok()) return ErrorResponse(s);
    answer["assignment"] = a;
  }
  if (has_loss) {
    const double p = body["completed_webhook_loss"].get<double>();
    if (Status s = model_.SetCompletedWebhookLoss(p); !s.ok()) return ErrorResponse(s);
    answer["completed_webhook_loss"] = p;
  }
  return JsonResponse(200, answer);
}

}  // namespace mvr::emulate::github
