#include "runnerset/webhook_endpoint.h"

#include <gtest/gtest.h>

#include "../github/workflow_job_payloads.h"
#include "github/webhook_signature.h"

namespace mvr::runnerset {
namespace {

using github::testing::PayloadOptions;
using github::testing::WorkflowJobPayload;

const TimePoint kAt{Duration(1'767'225'600'000)};

WebhookSettings Settings() {
  WebhookSettings s;
  s.secret = Secret("hook-secret");
  s.class_labels = {"lambda-mvm-small", "mvr-large"};
  s.runner_name_prefix = "mvr-demo-";
  return s;
}

http::ServerRequest Signed(const std::string& body, const std::string& event = "workflow_job") {
  http::ServerRequest r;
  r.method = "POST";
  r.path = "/webhook";
  r.body = body;
  r.headers.Set("X-GitHub-Event", event);
  r.headers.Set("X-GitHub-Delivery", "d-1");
  r.headers.Set("X-Hub-Signature-256", github::WebhookSignature(Secret("hook-secret"), body));
  return r;
}

TEST(WebhookEndpoint, MissingOrWrongSignatureIs401WithNoIntent) {
  http::ServerRequest r = Signed(WorkflowJobPayload());
  r.headers.Set("X-Hub-Signature-256", github::WebhookSignature(Secret("other"), r.body));
  WebhookDecision d = DecideWebhook(r, Settings(), kAt);
  EXPECT_EQ(d.status, 401);
  EXPECT_EQ(d.decision, "bad_signature");
  EXPECT_FALSE(d.intent);
  http::ServerRequest unsigned_request = Signed(WorkflowJobPayload());
  unsigned_request.headers = http::Headers();
  unsigned_request.headers.Set("X-GitHub-Event", "workflow_job");
  EXPECT_EQ(DecideWebhook(unsigned_request, Settings(), kAt).status, 401);
}

TEST(WebhookEndpoint, QueuedJobWithAClassLabelBecomesALaunchIntent) {
  WebhookDecision d = DecideWebhook(Signed(WorkflowJobPayload()), Settings(), kAt);
  EXPECT_EQ(d.status, 202);
  EXPECT_EQ(d.decision, "launch");
  ASSERT_TRUE(d.intent);
  const auto& launch = std::get<LaunchIntent>(*d.intent);
  EXPECT_EQ(launch.repository, "octo-org/widget-service");
  EXPECT_EQ(launch.job_id, 29679449);
  EXPECT_EQ(launch.class_label, "lambda-mvm-small");
  EXPECT_EQ(launch.queued_at, kAt);
  EXPECT_EQ(launch.delivery_id, "d-1");
}

TEST(WebhookEndpoint, QueuedJobWithoutAClassLabelIsAcknowledgedAndIgnored) {
  PayloadOptions o;
  o.labels = {"ubuntu-latest"};
  WebhookDecision d = DecideWebhook(Signed(WorkflowJobPayload(o)), Settings(), kAt);
  EXPECT_EQ(d.status, 202);
  EXPECT_EQ(d.decision, "ignored_no_class");
  EXPECT_FALSE(d.intent);
}

TEST(WebhookEndpoint, CompletedJobOfThisSetsRunnerBecomesATerminateIntent) {
  PayloadOptions o;
  o.action = "completed";
  o.runner_name = "mvr-demo-29679449-0a1b2c3d";
  o.runner_id = 12;
  o.steps = 2;
  WebhookDecision d = DecideWebhook(Signed(WorkflowJobPayload(o)), Settings(), kAt);
  EXPECT_EQ(d.decision, "terminate");
  ASSERT_TRUE(d.intent);
  EXPECT_EQ(std::get<TerminateIntent>(*d.intent).runner_name, "mvr-demo-29679449-0a1b2c3d");
  o.runner_name = "lambda-mvm-abc";  // the Action's runner: not this set's
  d = DecideWebhook(Signed(WorkflowJobPayload(o)), Settings(), kAt);
  EXPECT_EQ(d.decision, "ignored_foreign_runner");
  EXPECT_FALSE(d.intent);
}

TEST(WebhookEndpoint, PingOtherEventsAndOtherActionsAre2xx) {
  EXPECT_EQ(DecideWebhook(Signed(R"({"zen":"z"})", "ping"), Settings(), kAt).status, 200);
  EXPECT_EQ(DecideWebhook(Signed("{}", "push"), Settings(), kAt).decision, "ignored_event");
  PayloadOptions o;
  o.action = "in_progress";
  o.runner_name = "mvr-demo-1-aa";
  o.runner_id = 3;
  WebhookDecision d = DecideWebhook(Signed(WorkflowJobPayload(o)), Settings(), kAt);
  EXPECT_EQ(d.decision, "ignored_action");
  EXPECT_LT(d.status, 300);
}

TEST(WebhookEndpoint, MalformedPayloadIs400) {
  WebhookDecision d = DecideWebhook(Signed("{not json"), Settings(), kAt);
  EXPECT_EQ(d.status, 400);
  EXPECT_EQ(d.decision, "malformed");
  EXPECT_FALSE(d.intent);
}

}  // namespace
}  // namespace mvr::runnerset
