#include "runnerset/webhook_endpoint.h"

#include "github/labels.h"
#include "github/webhook_signature.h"
#include "github/workflow_job_event.h"

namespace mvr::runnerset {
namespace {

WebhookDecision Answer(int status, std::string decision, std::string message) {
  WebhookDecision d;
  d.status = status;
  d.decision = std::move(decision);
  d.message = std::move(message);
  return d;
}

}  // namespace

WebhookDecision DecideWebhook(const http::ServerRequest& request, const WebhookSettings& settings,
                              TimePoint received_at) {
  const std::string signature = request.headers.Get(github::kSignatureHeader).value_or("");
  Status verified = github::VerifyWebhookSignature(settings.secret, signature, request.body);
  if (!verified.ok()) {
    return Answer(verified.code() == Code::kUnauthorized ? 401 : 500, "bad_signature",
                  verified.message());
  }
  const std::string event = request.headers.Get(github::kEventHeader).value_or("");
  if (event == "ping") return Answer(200, "ping", "pong");
  if (event != "workflow_job") return Answer(202, "ignored_event", "event ignored: " + event);

  Result<github::WorkflowJobEvent> parsed =
      github::ParseWorkflowJobEvent(request.headers, request.body);
  if (!parsed.ok()) {
    if (parsed.status().error_type() == "UnsupportedEvent") {
      return Answer(202, "ignored_event", parsed.status().message());
    }
    return Answer(400, "malformed", parsed.status().message());
  }
  const github::WorkflowJobEvent& e = *parsed;
  const github::Job& job = e.workflow_job;
  if (e.action == github::WorkflowJobAction::kQueued) {
    for (const std::string& label : job.labels) {
      for (const std::string& class_label : settings.class_labels) {
        if (!github::LabelEquals(label, class_label)) continue;
        LaunchIntent launch;
        launch.repository = e.repository.full_name;
        launch.job_id = job.id;
        launch.run_id = job.run_id;
        launch.run_attempt = job.run_attempt;
        launch.job_name = job.name;
        launch.class_label = class_label;
        launch.labels = job.labels;
        launch.queued_at = received_at;
        launch.delivery_id = e.delivery_id;
        WebhookDecision d = Answer(202, "launch", "launch queued");
        d.intent = Intent(std::move(launch));
        return d;
      }
    }
    return Answer(202, "ignored_no_class", "no runner class has any of the job's labels");
  }
  if (e.action == github::WorkflowJobAction::kCompleted) {
    if (job.runner_name.empty() || job.runner_name.rfind(settings.runner_name_prefix, 0) != 0) {
      return Answer(202, "ignored_foreign_runner", "the job's runner is not this set's");
    }
    TerminateIntent terminate;
    terminate.runner_name = job.runner_name;
    terminate.repository = e.repository.full_name;
    terminate.job_id = job.id;
    terminate.completed_at = received_at;
    terminate.delivery_id = e.delivery_id;
    WebhookDecision d = Answer(202, "terminate", "terminate queued");
    d.intent = Intent(std::move(terminate));
    return d;
  }
  return Answer(202, "ignored_action",
                std::string("action ignored: ") + github::WorkflowJobActionName(e.action));
}

}  // namespace mvr::runnerset
