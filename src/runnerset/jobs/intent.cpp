#include "runnerset/jobs/intent.h"

#include <nlohmann/json.hpp>

#include "base/json_fields.h"
#include "base/json_text.h"

namespace mvr::runnerset {
namespace {

using nlohmann::json;

constexpr int64_t kVersion = 1;

json EncodeLaunch(const LaunchIntent& launch) {
  json j{{"v", kVersion},
         {"kind", "launch"},
         {"repository", launch.repository},
         {"jobId", launch.job_id},
         {"runId", launch.run_id},
         {"runAttempt", launch.run_attempt},
         {"jobName", launch.job_name},
         {"classLabel", launch.class_label},
         {"labels", launch.labels},
         {"queuedAtMs", ToUnixMillis(launch.queued_at)},
         {"deliveryId", launch.delivery_id}};
  if (launch.scale_set_id != 0) j["scaleSetId"] = launch.scale_set_id;
  return j;
}

json EncodeTerminate(const TerminateIntent& terminate) {
  return json{{"v", kVersion},
              {"kind", "terminate"},
              {"runnerName", terminate.runner_name},
              {"repository", terminate.repository},
              {"jobId", terminate.job_id},
              {"completedAtMs", ToUnixMillis(terminate.completed_at)},
              {"deliveryId", terminate.delivery_id},
              {"createdAtMs", ToUnixMillis(terminate.created_at)},
              {"startedAtMs", ToUnixMillis(terminate.started_at)},
              {"conclusion", terminate.conclusion},
              {"jobName", terminate.job_name}};
}

json EncodeTaken(const TakenIntent& taken) {
  return json{{"v", kVersion},
              {"kind", "taken"},
              {"runnerName", taken.runner_name},
              {"repository", taken.repository},
              {"jobId", taken.job_id},
              {"deliveryId", taken.delivery_id}};
}

Result<TakenIntent> DecodeTaken(const JsonFields& fields) {
  TakenIntent taken;
  MVR_ASSIGN_OR_RETURN(taken.runner_name, fields.String("runnerName"));
  MVR_ASSIGN_OR_RETURN(taken.repository, fields.String("repository"));
  MVR_ASSIGN_OR_RETURN(taken.job_id, fields.Int("jobId"));
  MVR_ASSIGN_OR_RETURN(taken.delivery_id, fields.OptionalString("deliveryId"));
  if (taken.runner_name.empty() || taken.repository.empty() || taken.job_id <= 0) {
    return InvalidArgument(
        "taken intent: runnerName, repository and a positive jobId are required");
  }
  return taken;
}

json EncodeJobEvent(const JobEventIntent& event) {
  return json{{"v", kVersion},         {"kind", "job"},          {"repository", event.repository},
              {"jobId", event.job_id}, {"action", event.action}, {"deliveryId", event.delivery_id}};
}

Result<JobEventIntent> DecodeJobEvent(const JsonFields& fields) {
  JobEventIntent event;
  MVR_ASSIGN_OR_RETURN(event.repository, fields.String("repository"));
  MVR_ASSIGN_OR_RETURN(event.job_id, fields.Int("jobId"));
  MVR_ASSIGN_OR_RETURN(event.action, fields.String("action"));
  MVR_ASSIGN_OR_RETURN(event.delivery_id, fields.OptionalString("deliveryId"));
  if (event.repository.empty() || event.job_id <= 0) {
    return InvalidArgument("job intent: repository and a positive jobId are required");
  }
  if (event.action != "waiting" && event.action != "in_progress" && event.action != "completed") {
    return InvalidArgument("job intent: action must be waiting, in_progress or completed, got \"" +
                           event.action + "\"");
  }
  return event;
}

Result<LaunchIntent> DecodeLaunch(const JsonFields& fields) {
  LaunchIntent launch;
  MVR_ASSIGN_OR_RETURN(launch.repository, fields.String("repository"));
  MVR_ASSIGN_OR_RETURN(launch.job_id, fields.Int("jobId"));
  MVR_ASSIGN_OR_RETURN(launch.run_id, fields.Int("runId"));
  MVR_ASSIGN_OR_RETURN(launch.run_attempt, fields.Int("runAttempt"));
  MVR_ASSIGN_OR_RETURN(launch.job_name, fields.OptionalString("jobName"));
  MVR_ASSIGN_OR_RETURN(launch.class_label, fields.String("classLabel"));
  MVR_ASSIGN_OR_RETURN(launch.labels, fields.Labels("labels"));
  MVR_ASSIGN_OR_RETURN(int64_t queued_ms, fields.Int("queuedAtMs"));
  launch.queued_at = TimePoint(Duration(queued_ms));
  MVR_ASSIGN_OR_RETURN(launch.delivery_id, fields.OptionalString("deliveryId"));
  MVR_ASSIGN_OR_RETURN(std::optional<int64_t> set, fields.OptionalInt("scaleSetId"));
  launch.scale_set_id = set.value_or(0);
  if (launch.scale_set_id < 0) return InvalidArgument("launch intent: scaleSetId must be positive");
  if (launch.repository.empty() || launch.class_label.empty() || launch.job_id <= 0) {
    return InvalidArgument(
        "launch intent: repository, classLabel and a positive jobId are required");
  }
  return launch;
}

Result<TerminateIntent> DecodeTerminate(const JsonFields& fields) {
  TerminateIntent terminate;
  MVR_ASSIGN_OR_RETURN(terminate.runner_name, fields.String("runnerName"));
  MVR_ASSIGN_OR_RETURN(terminate.repository, fields.OptionalString("repository"));
  MVR_ASSIGN_OR_RETURN(auto job_id, fields.OptionalInt("jobId"));
  terminate.job_id = job_id.value_or(0);
  MVR_ASSIGN_OR_RETURN(auto completed_ms, fields.OptionalInt("completedAtMs"));
  terminate.completed_at = TimePoint(Duration(completed_ms.value_or(0)));
  MVR_ASSIGN_OR_RETURN(terminate.delivery_id, fields.OptionalString("deliveryId"));
  MVR_ASSIGN_OR_RETURN(auto created_ms, fields.OptionalInt("createdAtMs"));
  terminate.created_at = TimePoint(Duration(created_ms.value_or(0)));
  MVR_ASSIGN_OR_RETURN(auto started_ms, fields.OptionalInt("startedAtMs"));
  terminate.started_at = TimePoint(Duration(started_ms.value_or(0)));
  MVR_ASSIGN_OR_RETURN(terminate.conclusion, fields.OptionalString("conclusion"));
  MVR_ASSIGN_OR_RETURN(terminate.job_name, fields.OptionalString("jobName"));
  if (terminate.runner_name.empty()) {
    return InvalidArgument("terminate intent: runnerName is required");
  }
  return terminate;
}

}  // namespace

std::string EncodeIntent(const Intent& intent) {
  if (const auto* launch = std::get_if<LaunchIntent>(&intent))
    return JsonText(EncodeLaunch(*launch));
  if (const auto* taken = std::get_if<TakenIntent>(&intent)) return JsonText(EncodeTaken(*taken));
  if (const auto* event = std::get_if<JobEventIntent>(&intent)) {
    return JsonText(EncodeJobEvent(*event));
  }
  return JsonText(EncodeTerminate(std::get<TerminateIntent>(intent)));
}

Result<Intent> DecodeIntent(std::string_view body) {
  MVR_ASSIGN_OR_RETURN(json document, ParseJsonDocument(body, "intent"));
  MVR_ASSIGN_OR_RETURN(JsonFields fields, JsonFields::Of(document, "intent"));
  MVR_ASSIGN_OR_RETURN(int64_t version, fields.Int("v"));
  if (version != kVersion) {
    return InvalidArgument(
        "intent: version " + std::to_string(version) +
        " is not one this mvr reads (1); drain the queue with the mvr that wrote it");
  }
  MVR_ASSIGN_OR_RETURN(std::string kind, fields.String("kind"));
  if (kind == "launch") {
    MVR_ASSIGN_OR_RETURN(LaunchIntent launch, DecodeLaunch(fields));
    return Intent(std::move(launch));
  }
  if (kind == "terminate") {
    MVR_ASSIGN_OR_RETURN(TerminateIntent terminate, DecodeTerminate(fields));
    return Intent(std::move(terminate));
  }
  if (kind == "taken") {
    MVR_ASSIGN_OR_RETURN(TakenIntent taken, DecodeTaken(fields));
    return Intent(std::move(taken));
  }
  if (kind == "job") {
    MVR_ASSIGN_OR_RETURN(JobEventIntent event, DecodeJobEvent(fields));
    return Intent(std::move(event));
  }
  return InvalidArgument(
      "intent.kind: expected \"launch\", \"terminate\", \"taken\" or \"job\", got \"" + kind +
      "\"");
}

LaunchIntent LaunchIntentForJob(const std::string& repository, const github::Job& job,
                                const std::string& class_label, TimePoint now,
                                std::string delivery_id) {
  LaunchIntent intent;
  intent.repository = repository;
  intent.job_id = job.id;
  intent.run_id = job.run_id;
  intent.run_attempt = job.run_attempt;
  intent.job_name = job.name;
  intent.class_label = class_label;
  intent.labels = job.labels;
  intent.queued_at = now;
  intent.delivery_id = std::move(delivery_id);
  return intent;
}

}  // namespace mvr::runnerset
