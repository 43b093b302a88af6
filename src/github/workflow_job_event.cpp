#include "github/workflow_job_event.h"

#include "base/json_fields.h"
#include "github/json_parsers.h"

namespace mvr::github {
namespace {

Result<WorkflowJobAction> ParseAction(const std::string& action) {
  if (action == "queued") return WorkflowJobAction::kQueued;
  if (action == "waiting") return WorkflowJobAction::kWaiting;
  if (action == "in_progress") return WorkflowJobAction::kInProgress;
  if (action == "completed") return WorkflowJobAction::kCompleted;
  std::string shown = action.size() > 40 ? action.substr(0, 40) + "..." : action;
  return InvalidArgument("action: '" + shown +
                         "' is not one of queued, waiting, in_progress, completed")
      .WithErrorType("UnsupportedAction");
}

// full_name is the name GitHub routes by; owner.login and name are its parts, read when it is
// absent. GitHub's own example payloads have a full_name that differs from owner.login/name (a
// transferred repository), so they are not cross-checked: a delivery is never refused over
// members the runner set does not need.
Result<WebhookRepository> ParseRepository(const JsonFields& o) {
  WebhookRepository r;
  MVR_ASSIGN_OR_RETURN(std::optional<int64_t> id, o.OptionalInt("id"));
  r.id = id.value_or(0);
  MVR_ASSIGN_OR_RETURN(r.name, o.OptionalString("name"));
  MVR_ASSIGN_OR_RETURN(r.full_name, o.OptionalString("full_name"));
  MVR_ASSIGN_OR_RETURN(std::optional<JsonFields> owner, o.OptionalObject("owner"));
  if (owner) {
    MVR_ASSIGN_OR_RETURN(r.owner_login, owner->OptionalString("login"));
  }
  MVR_ASSIGN_OR_RETURN(r.is_private, o.OptionalBool("private", false));
  if (r.full_name.empty()) {
    if (r.name.empty() || r.owner_login.empty()) {
      return InvalidArgument("repository: full_name, or owner.login and name, are required");
    }
    r.full_name = r.owner_login + "/" + r.name;
  }
  size_t slash = r.full_name.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == r.full_name.size() ||
      r.full_name.find('/', slash + 1) != std::string::npos) {
    std::string shown = r.full_name.substr(0, 100);
    return InvalidArgument("repository.full_name: '" + shown + "' is not owner/name");
  }
  return r;
}

Result<WorkflowJobEvent> ParseEvent(const JsonFields& o) {
  WorkflowJobEvent e;
  MVR_ASSIGN_OR_RETURN(std::string action, o.String("action"));
  MVR_ASSIGN_OR_RETURN(e.action, ParseAction(action));
  MVR_ASSIGN_OR_RETURN(JsonFields job, o.Object("workflow_job"));
  MVR_ASSIGN_OR_RETURN(e.workflow_job, ParseJob(job));
  if (e.workflow_job.id <= 0 || e.workflow_job.run_id <= 0) {
    return InvalidArgument("workflow_job: id and run_id must be positive");
  }
  MVR_ASSIGN_OR_RETURN(JsonFields repo, o.Object("repository"));
  MVR_ASSIGN_OR_RETURN(e.repository, ParseRepository(repo));
  MVR_ASSIGN_OR_RETURN(std::optional<JsonFields> org, o.OptionalObject("organization"));
  if (org) {
    MVR_ASSIGN_OR_RETURN(e.organization_login, org->String("login"));
  }
  MVR_ASSIGN_OR_RETURN(std::optional<JsonFields> installation, o.OptionalObject("installation"));
  if (installation) {
    MVR_ASSIGN_OR_RETURN(e.installation_id, installation->Int("id"));
  }
  MVR_ASSIGN_OR_RETURN(std::optional<JsonFields> sender, o.OptionalObject("sender"));
  if (sender) {
    MVR_ASSIGN_OR_RETURN(e.sender_login, sender->OptionalString("login"));
  }
  return e;
}

}  // namespace

const char* WorkflowJobActionName(WorkflowJobAction action) {
  switch (action) {
    case WorkflowJobAction::kQueued:
      return "queued";
    case WorkflowJobAction::kWaiting:
      return "waiting";
    case WorkflowJobAction::kInProgress:
      return "in_progress";
    case WorkflowJobAction::kCompleted:
      return "completed";
  }
  return "queued";
}

Result<WorkflowJobEvent> ParseWorkflowJobEvent(std::string_view event_name,
                                               std::string_view delivery_id,
                                               std::string_view body) {
  if (event_name.empty()) {
    return InvalidArgument(std::string(kEventHeader) + " is missing; is this a GitHub webhook?");
  }
  if (event_name != "workflow_job") {
    std::string shown(event_name.substr(0, 40));
    return InvalidArgument("event '" + shown +
                           "' is not workflow_job; subscribe the webhook to workflow jobs only")
        .WithErrorType("UnsupportedEvent");
  }
  if (delivery_id.empty()) {
    return InvalidArgument(std::string(kDeliveryHeader) + " is missing");
  }
  if (delivery_id.size() > 128) {
    return InvalidArgument(std::string(kDeliveryHeader) + " is longer than 128 characters");
  }
  Result<WorkflowJobEvent> event =
      ParseObjectBody<WorkflowJobEvent>(body, "the workflow_job payload", ParseEvent);
  if (!event.ok()) {
    return Status(event.status()).Annotate("workflow_job payload");
  }
  event->delivery_id = std::string(delivery_id);
  return event;
}

Result<WorkflowJobEvent> ParseWorkflowJobEvent(const http::Headers& headers,
                                               std::string_view body) {
  return ParseWorkflowJobEvent(headers.GetOr(kEventHeader, ""), headers.GetOr(kDeliveryHeader, ""),
                               body);
}

}  // namespace mvr::github
