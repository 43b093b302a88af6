#include "emulate/github/scaleset/scaleset_json.h"

#include "base/encoding.h"
#include "base/json_text.h"
#include "base/time_format.h"

namespace mvr::emulate::github {

using nlohmann::json;

namespace {

// Go's encoding of a time.Time never set, which `actions/scaleset` decodes as the zero time.
constexpr const char* kZeroTime = "0001-01-01T00:00:00Z";

json TimeOrZero(const std::optional<TimePoint>& t) {
  return t ? json(FormatRfc3339(*t)) : json(kZeroTime);
}

std::string ActionsServiceUrl(const std::string& base_url) {
  return base_url + "/_services/pipelines";
}

}  // namespace

json ScaleSetStatisticsJson(const ScaleSetStatistics& s) {
  return json{{"totalAvailableJobs", s.total_available_jobs},
              {"totalAcquiredJobs", s.total_acquired_jobs},
              {"totalAssignedJobs", s.total_assigned_jobs},
              {"totalRunningJobs", s.total_running_jobs},
              {"totalRegisteredRunners", s.total_registered_runners},
              {"totalBusyRunners", s.total_busy_runners},
              {"totalIdleRunners", s.total_idle_runners}};
}

json ScaleSetJson(const ScaleSet& set, const std::string& base_url) {
  json labels = json::array();
  labels.push_back(json{{"name", set.name}, {"type", "System"}});
  for (const auto& l : set.labels) labels.push_back(json{{"name", l}, {"type", "System"}});
  const std::string self =
      ActionsServiceUrl(base_url) + "/_apis/runtime/runnerscalesets/" + std::to_string(set.id);
  return json{
      {"id", set.id},
      {"name", set.name},
      {"runnerGroupId", set.runner_group_id},
      {"runnerGroupName", set.runner_group_name},
      {"labels", labels},
      {"RunnerSetting",
       {{"ephemeral", set.ephemeral}, {"isElastic", true}, {"disableUpdate", set.disable_update}}},
      {"createdOn", FormatRfc3339(set.created_on)},
      {"runnerJitConfigUrl", self + "/generatejitconfig"},
      {"statistics", ScaleSetStatisticsJson(set.statistics)}};
}

json ScaleSetSessionJson(const ScaleSetSession& session, const std::string& base_url) {
  return json{{"sessionId", session.session_id},
              {"ownerName", session.owner_name},
              {"runnerScaleSet", ScaleSetJson(session.scale_set, base_url)},
              {"messageQueueUrl", session.message_queue_url},
              {"messageQueueAccessToken", session.message_queue_access_token.Reveal()},
              {"statistics", ScaleSetStatisticsJson(session.statistics)}};
}

json ScaleSetEventJson(const ScaleSetJobEvent& e, const std::string& acquire_url) {
  json j{{"messageType", e.message_type},
         {"runnerRequestId", e.runner_request_id},
         {"repositoryName", e.repository_name},
         {"ownerName", e.owner_name},
         {"jobId", e.job_id},
         {"jobWorkflowRef", e.job_workflow_ref},
         {"jobDisplayName", e.job_display_name},
         {"workflowRunId", e.workflow_run_id},
         {"eventName", e.event_name},
         {"requestLabels", e.request_labels},
         {"queueTime", FormatRfc3339(e.queue_time)},
         {"scaleSetAssignTime", TimeOrZero(e.scale_set_assign_time)},
         {"runnerAssignTime", TimeOrZero(e.runner_assign_time)},
         {"finishTime", TimeOrZero(e.finish_time)}};
  if (e.message_type == "JobAvailable") j["acquireJobUrl"] = acquire_url;
  if (e.message_type == "JobStarted" || e.message_type == "JobCompleted") {
    j["runnerId"] = e.runner_id;
    j["runnerName"] = e.runner_name;
  }
  if (e.message_type == "JobCompleted") j["result"] = e.result;
  return j;
}

json ScaleSetMessageJson(const ScaleSetMessage& m, int64_t scale_set_id,
                         const std::string& base_url) {
  const std::string acquire = ActionsServiceUrl(base_url) + "/_apis/runtime/runnerscalesets/" +
                              std::to_string(scale_set_id) + "/acquirejobs";
  json events = json::array();
  for (const auto& e : m.events) events.push_back(ScaleSetEventJson(e, acquire));
  return json{{"messageId", m.message_id},
              {"messageType", "RunnerScaleSetJobMessages"},
              {"body", JsonText(events)},
              {"statistics", ScaleSetStatisticsJson(m.statistics)}};
}

Result<ScaleSetSpec> ParseScaleSetSpec(std::string_view body) {
  json j = json::parse(body, nullptr, false);
  if (!j.is_object()) return InvalidArgument("the body is not a JSON object (a RunnerScaleSet)");
  ScaleSetSpec spec;
  if (!j.contains("name") || !j["name"].is_string()) {
    return InvalidArgument("name is required and must be a string");
  }
  spec.name = j["name"].get<std::string>();
  if (j.contains("runnerGroupId")) {
    if (!j["runnerGroupId"].is_number_integer()) {
      return InvalidArgument("runnerGroupId must be a whole number");
    }
    spec.runner_group_id = j["runnerGroupId"].get<int64_t>();
  }
  if (j.contains("labels")) {
    if (!j["labels"].is_array()) return InvalidArgument("labels must be an array of {name, type}");
    for (const auto& l : j["labels"]) {
      if (!l.is_object() || !l.contains("name") || !l["name"].is_string()) {
        return InvalidArgument("each label must be an object with a string name");
      }
      const std::string name = l["name"].get<std::string>();
      if (AsciiLower(name) == AsciiLower(spec.name)) continue;  // the name is a label already
      spec.labels.push_back(name);
    }
  }
  if (j.contains("RunnerSetting")) {
    const json& rs = j["RunnerSetting"];
    if (!rs.is_object()) return InvalidArgument("RunnerSetting must be an object");
    if (rs.contains("ephemeral") && rs["ephemeral"].is_boolean()) {
      spec.ephemeral = rs["ephemeral"].get<bool>();
    }
    if (rs.contains("disableUpdate") && rs["disableUpdate"].is_boolean()) {
      spec.disable_update = rs["disableUpdate"].get<bool>();
    }
  }
  return spec;
}

json ActionsErrorJson(const std::string& type_name, const std::string& message) {
  return json{{"$id", "1"},
              {"innerException", nullptr},
              {"message", message},
              {"typeName", type_name},
              {"typeKey", type_name.substr(type_name.rfind('.') + 1)},
              {"errorCode", 0},
              {"eventId", 3000}};
}

}  // namespace mvr::emulate::github
