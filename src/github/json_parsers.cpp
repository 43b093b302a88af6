#include "github/json_parsers.h"
#include "base/json_text.h"

namespace mvr::github {

using nlohmann::json;

Result<Runner> ParseRunner(const JsonFields& o) {
  Runner r;
  MVR_ASSIGN_OR_RETURN(r.id, o.Int("id"));
  MVR_ASSIGN_OR_RETURN(r.name, o.String("name"));
  MVR_ASSIGN_OR_RETURN(r.os, o.OptionalString("os"));
  MVR_ASSIGN_OR_RETURN(r.status, o.OptionalString("status"));
  MVR_ASSIGN_OR_RETURN(r.busy, o.OptionalBool("busy", false));
  MVR_ASSIGN_OR_RETURN(r.labels, o.Labels("labels"));
  MVR_ASSIGN_OR_RETURN(r.runner_group_id, o.OptionalInt("runner_group_id"));
  MVR_ASSIGN_OR_RETURN(r.version, o.OptionalString("version"));
  return r;
}

Result<Job> ParseJob(const JsonFields& o) {
  Job j;
  MVR_ASSIGN_OR_RETURN(j.id, o.Int("id"));
  MVR_ASSIGN_OR_RETURN(j.run_id, o.Int("run_id"));
  MVR_ASSIGN_OR_RETURN(std::optional<int64_t> attempt, o.OptionalInt("run_attempt"));
  j.run_attempt = attempt.value_or(1);
  MVR_ASSIGN_OR_RETURN(j.name, o.OptionalString("name"));
  MVR_ASSIGN_OR_RETURN(j.workflow_name, o.OptionalString("workflow_name"));
  MVR_ASSIGN_OR_RETURN(j.head_branch, o.OptionalString("head_branch"));
  MVR_ASSIGN_OR_RETURN(j.head_sha, o.OptionalString("head_sha"));
  MVR_ASSIGN_OR_RETURN(std::string status, o.String("status"));
  j.status = ParseJobStatus(status);
  MVR_ASSIGN_OR_RETURN(j.conclusion, o.OptionalString("conclusion"));
  MVR_ASSIGN_OR_RETURN(j.labels, o.Labels("labels"));
  MVR_ASSIGN_OR_RETURN(j.runner_id, o.OptionalInt("runner_id"));
  MVR_ASSIGN_OR_RETURN(j.runner_name, o.OptionalString("runner_name"));
  MVR_ASSIGN_OR_RETURN(j.runner_group_id, o.OptionalInt("runner_group_id"));
  MVR_ASSIGN_OR_RETURN(j.runner_group_name, o.OptionalString("runner_group_name"));
  MVR_ASSIGN_OR_RETURN(j.created_at, o.OptionalTime("created_at"));
  MVR_ASSIGN_OR_RETURN(j.started_at, o.OptionalTime("started_at"));
  MVR_ASSIGN_OR_RETURN(j.completed_at, o.OptionalTime("completed_at"));
  return j;
}

Result<JitConfig> ParseJitConfig(const JsonFields& o) {
  JitConfig out;
  MVR_ASSIGN_OR_RETURN(JsonFields runner, o.Object("runner"));
  MVR_ASSIGN_OR_RETURN(out.runner, ParseRunner(runner));
  MVR_ASSIGN_OR_RETURN(std::string encoded, o.String("encoded_jit_config"));
  if (encoded.empty()) return InvalidArgument(o.MemberPath("encoded_jit_config") + ": empty");
  out.encoded_jit_config = Secret(std::move(encoded));
  return out;
}

Result<RegistrationToken> ParseTokenAnswer(const JsonFields& o) {
  RegistrationToken out;
  MVR_ASSIGN_OR_RETURN(std::string token, o.String("token"));
  if (token.empty()) return InvalidArgument(o.MemberPath("token") + ": empty");
  out.token = Secret(std::move(token));
  MVR_ASSIGN_OR_RETURN(out.expires_at, o.Time("expires_at"));
  return out;
}

Result<std::string> JitConfigRequestBody(const JitConfigRequest& request) {
  if (request.name.empty() || request.name.size() > 64) {
    return InvalidArgument("JIT runner name must be 1 to 64 characters");
  }
  if (request.labels.empty() || request.labels.size() > 100) {
    return InvalidArgument("a JIT runner needs 1 to 100 labels (got " +
                           std::to_string(request.labels.size()) + ")");
  }
  for (const auto& label : request.labels) {
    if (label.empty()) return InvalidArgument("JIT runner labels must not be empty");
  }
  if (request.runner_group_id < 1) {
    return InvalidArgument("runner_group_id must be 1 (the default group) or another group id");
  }
  json body = {{"name", request.name},
               {"runner_group_id", request.runner_group_id},
               {"labels", request.labels},
               {"work_folder", request.work_folder.empty() ? "_work" : request.work_folder}};
  return JsonText(body);
}

}  // namespace mvr::github
