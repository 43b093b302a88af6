// WebhookRouter: one hand-written delivery per decision, the signature's edge cases, the body
// limit, label matching as GitHub does it, the configuration checks, and that no answer ever
// carries the secret.
#include "runnerset/intake/webhook_router.h"

#include <gtest/gtest.h>

#include <thread>

#include "base/logger.h"
#include "base/time_format.h"
#include "github/webhook_signature.h"
#include "github/workflow_job_payloads.h"  // tests/github: realistic payload builder
#include "queue/memory_queue.h"
#include "runnerset/intake/webhook_endpoint.h"

namespace mvr::runnerset {
namespace {

using github::testing::PayloadOptions;
using github::testing::WorkflowJobPayload;

constexpr char kSecretText[] = "whsec-router-fixture-6b1e0c8d4f";
const TimePoint kNow(Duration(1'767'225'600'250));

WebhookRouterConfig Config() {
  WebhookRouterConfig c;
  c.secret = Secret(kSecretText);
  c.classes = {RunnerClass{.label = "mvr-small"}, RunnerClass{.label = "mvr-large"}};
  c.runner_name_prefix = RunnerNamePrefix("demo");
  return c;
}

WebhookRouter Router(WebhookRouterConfig config = Config()) {
  auto router = WebhookRouter::Create(std::move(config));
  EXPECT_TRUE(router.ok()) << router.status().ToString();
  return std::move(router).value();
}

std::string Sign(const std::string& body) {
  return github::WebhookSignature(Secret(kSecretText), body);
}

WebhookDecision Deliver(const WebhookRouter& router, const std::string& body,
                        const std::string& event = "workflow_job") {
  std::string signature = Sign(body);
  return router.Route(
      WebhookDelivery{event, "72d3162e-cc78-11e3-81ab-4c9367dc0958", signature, body}, kNow);
}

std::string Queued(std::vector<std::string> labels) {
  PayloadOptions o;
  o.labels = std::move(labels);
  return WorkflowJobPayload(o);
}

std::string Completed(const std::string& runner_name) {
  PayloadOptions o;
  o.action = "completed";
  o.runner_name = runner_name;
  o.runner_id = runner_name.empty() ? 0 : 42;
  o.steps = runner_name.empty() ? 0 : 12;
  return WorkflowJobPayload(o);
}

void ExpectIgnored(const WebhookDecision& d, IgnoreReason reason) {
  EXPECT_EQ(d.verdict, WebhookVerdict::kIgnored) << d.message;
  EXPECT_EQ(d.ignore_reason, reason) << d.message;
  EXPECT_EQ(d.http_status, 200);
  EXPECT_TRUE(d.accepted());
  EXPECT_FALSE(d.intent.has_value());
  EXPECT_EQ(d.message.rfind("ignored: ", 0), 0u) << d.message;
}

void ExpectRefused(const WebhookDecision& d, WebhookVerdict verdict, int status) {
  EXPECT_EQ(d.verdict, verdict) << d.message;
  EXPECT_EQ(d.http_status, status) << d.message;
  EXPECT_FALSE(d.accepted());
  EXPECT_FALSE(d.intent.has_value());
  EXPECT_EQ(d.ignore_reason, IgnoreReason::kNone);
}

TEST(WebhookRouterTest, QueuedJobWithAClassLabelBecomesALaunchIntent) {
  WebhookDecision d = Deliver(Router(), Queued({"self-hosted", "linux", "mvr-large"}));
  ASSERT_EQ(d.verdict, WebhookVerdict::kLaunch) << d.message;
  EXPECT_EQ(d.http_status, 202);
  EXPECT_EQ(d.ignore_reason, IgnoreReason::kNone);
  ASSERT_TRUE(d.intent.has_value());
  LaunchIntent expected{.repository = "octo-org/widget-service",
                        .job_id = 29679449,
                        .run_id = 10843203637,
                        .run_attempt = 1,
                        .job_name = "build (arm64)",
                        .class_label = "mvr-large",
                        .labels = {"self-hosted", "linux", "mvr-large"},
                        .queued_at = kNow,
                        .delivery_id = "72d3162e-cc78-11e3-81ab-4c9367dc0958"};
  EXPECT_EQ(std::get<LaunchIntent>(*d.intent), expected);
  auto decoded = DecodeIntent(EncodeIntent(*d.intent));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, *d.intent);
  EXPECT_NE(d.message.find("29679449"), std::string::npos) << d.message;
}

// GitHub compares runs-on labels with a self-hosted runner's labels case-insensitively, so a job
// asking for "MVR-Small" is one for the class labelled "mvr-small".
// github.source both (issue 54): a job asking for a class label alone is the class's scale set's,
// which GitHub never gives a runner registered for a webhook's job; every other job is launched
// as before. With webhooks alone the same job is launched.
TEST(WebhookRouterTest, WithBothSourcesAJobAskingForAClassLabelAloneIsLeftToItsScaleSet) {
  WebhookRouterConfig both = Config();
  both.scope.source = JobSource::kBoth;
  const WebhookRouter router = Router(both);
  ExpectIgnored(Deliver(router, Queued({"MVR-small"})), IgnoreReason::kScaleSetJob);
  EXPECT_EQ(Deliver(router, Queued({"self-hosted", "mvr-small"})).verdict, WebhookVerdict::kLaunch);
  EXPECT_EQ(Deliver(Router(), Queued({"mvr-small"})).verdict, WebhookVerdict::kLaunch);
  EXPECT_STREQ(IgnoreReasonName(IgnoreReason::kScaleSetJob), "scale_set_job");
}

TEST(WebhookRouterTest, ClassLabelsMatchCaseInsensitivelyAsGitHubDoes) {
  WebhookDecision d = Deliver(Router(), Queued({"Self-Hosted", "MVR-Small"}));
  ASSERT_EQ(d.verdict, WebhookVerdict::kLaunch) << d.message;
  const auto& launch = std::get<LaunchIntent>(*d.intent);
  EXPECT_EQ(launch.class_label, "mvr-small");  // the configured spelling
  EXPECT_EQ(launch.labels, (std::vector<std::string>{"Self-Hosted", "MVR-Small"}));  // as sent
}

TEST(WebhookRouterTest, OnlyWholeLabelsMatch) {
  WebhookRouter router = Router();
  ExpectIgnored(Deliver(router, Queued({"self-hosted", "mvr-small-2"})),
                IgnoreReason::kNoClassLabel);
  ExpectIgnored(Deliver(router, Queued({"mvr"})), IgnoreReason::kNoClassLabel);
  ExpectIgnored(Deliver(router, Queued({"ubuntu-latest"})), IgnoreReason::kNoClassLabel);
  ExpectIgnored(Deliver(router, Queued({})), IgnoreReason::kNoClassLabel);
}

TEST(WebhookRouterTest, TheFirstConfiguredClassWinsWhenAJobNamesTwo) {
  WebhookRouterConfig c = Config();
  for (RunnerClass& k : c.classes) k.label_match = LabelMatch::kAny;
  WebhookDecision d = Deliver(Router(std::move(c)), Queued({"mvr-large", "mvr-small"}));
  ASSERT_EQ(d.verdict, WebhookVerdict::kLaunch) << d.message;
  EXPECT_EQ(std::get<LaunchIntent>(*d.intent).class_label, "mvr-small");
}

// labelMatch: a class takes a job only if it offers every label the job asks for (all, the
// default: its label, self-hosted, linux, arm64 and its labels), or exactly those (exact), or any
// job naming its label (any). A job no class takes is ignored with its reason (the metric's label).
TEST(WebhookRouterTest, AClassTakesAJobByItsLabelsAndLabelMatch) {
  WebhookRouterConfig c = Config();
  c.classes[0].architecture = "arm64";
  c.classes[1].labels = {"gpu", "large"};
  c.classes[1].label_match = LabelMatch::kExact;
  WebhookRouter router = Router(std::move(c));
  auto class_of = [&](std::vector<std::string> labels) {
    WebhookDecision d = Deliver(router, Queued(std::move(labels)));
    return d.verdict == WebhookVerdict::kLaunch ? std::get<LaunchIntent>(*d.intent).class_label
                                                : IgnoreReasonName(d.ignore_reason);
  };
  EXPECT_EQ(class_of({"self-hosted", "Linux", "ARM64", "mvr-small"}), "mvr-small");
  EXPECT_EQ(class_of({"mvr-small"}), "mvr-small") << "fewer labels than offered: all takes it";
  EXPECT_EQ(class_of({"self-hosted", "mvr-small", "gpu"}), "labels_not_offered");
  EXPECT_EQ(class_of({"self-hosted", "mvr-large", "arm64", "gpu", "large"}), "mvr-large");
  EXPECT_EQ(class_of({"self-hosted", "mvr-large", "gpu"}), "labels_not_offered")
      << "exact: every label the class offers";
  EXPECT_EQ(class_of({"ubuntu-latest"}), "no_class_label");
}

// Lambda MicroVMs are ARM64 Linux only (issue 52, item 6): a self-hosted job, or one naming a
// class label, that asks for another architecture or OS is refused whatever the labelMatch, with
// the label it was refused for; one not meant for self-hosted runners is not the set's concern.
TEST(WebhookRouterTest, JobsAskingForAnotherArchitectureOrOsAreRefusedAsNotArm64) {
  WebhookRouterConfig c = Config();
  for (RunnerClass& k : c.classes) k.label_match = LabelMatch::kAny;  // the loosest
  WebhookRouter router = Router(std::move(c));
  struct Case {
    std::vector<std::string> labels;
    const char* decision;  // an ignore reason, or the class launched
    const char* refused_label;
  };
  const Case cases[] = {
      {{"self-hosted", "x64"}, "not_arm64", "x64"},
      {{"self-hosted", "X64", "mvr-small"}, "not_arm64", "X64"},
      {{"self-hosted", "linux", "AMD64", "mvr-small"}, "not_arm64", "AMD64"},
      {{"mvr-small", "x86"}, "not_arm64", "x86"},
      {{"self-hosted", "arm", "mvr-small"}, "not_arm64", "arm"},
      {{"self-hosted", "Windows"}, "not_arm64", "Windows"},
      {{"self-hosted", "macOS", "mvr-large"}, "not_arm64", "macOS"},
      {{"self-hosted", "x86_64", "mvr-small"}, "not_arm64", "x86_64"},
      {{"windows-latest"}, "no_class_label", ""},
      {{"ubuntu-latest", "x64"}, "no_class_label", ""},
      {{"self-hosted", "linux", "ARM64", "mvr-small"}, "mvr-small", ""},
      {{"self-hosted", "arm64", "mvr-small"}, "mvr-small", ""},
      {{"self-hosted", "armory", "mvr-small"}, "mvr-small", ""},
  };
  for (const Case& k : cases) {
    WebhookDecision d = Deliver(router, Queued(k.labels));
    const std::string got = d.verdict == WebhookVerdict::kLaunch
                                ? std::get<LaunchIntent>(*d.intent).class_label
                                : IgnoreReasonName(d.ignore_reason);
    EXPECT_EQ(got, k.decision) << testing::PrintToString(k.labels) << ": " << d.message;
    EXPECT_EQ(d.refused.has_value(), std::string(k.refused_label) != "");
    if (d.refused) {
      EXPECT_EQ(d.refused->label, k.refused_label);
      EXPECT_EQ(d.refused->reason, "not_arm64");
      EXPECT_EQ(d.http_status, 200);
      EXPECT_NE(d.message.find("ARM64"), std::string::npos) << d.message;
    }
  }
}

// github.allowedRepositories: an organisation's set launches only their jobs; the others are
// ignored with their reason.
TEST(WebhookRouterTest, JobsOfRepositoriesNotAllowedAreIgnored) {
  WebhookRouterConfig c = Config();
  c.allowed_repositories = {"octo-org/other"};
  ExpectIgnored(Deliver(Router(c), Queued({"self-hosted", "mvr-small"})),
                IgnoreReason::kRepositoryNotAllowed);
  c.allowed_repositories = {"Octo-Org/Widget-Service"};
  EXPECT_EQ(Deliver(Router(c), Queued({"self-hosted", "mvr-small"})).verdict,
            WebhookVerdict::kLaunch)
      << "compared case-insensitively, as GitHub names are";
}

TEST(WebhookRouterTest, CompletedJobOfOneOfTheSetsRunnersBecomesATerminateIntent) {
  WebhookDecision d = Deliver(Router(), Completed("mvr-demo_29679449-a1"));
  ASSERT_EQ(d.verdict, WebhookVerdict::kTerminate) << d.message;
  EXPECT_EQ(d.http_status, 202);
  ASSERT_TRUE(d.intent.has_value());
  TerminateIntent expected{.runner_name = "mvr-demo_29679449-a1",
                           .repository = "octo-org/widget-service",
                           .job_id = 29679449,
                           .completed_at = kNow,
                           .delivery_id = "72d3162e-cc78-11e3-81ab-4c9367dc0958",
                           // The delivery's word on the job: its record needs no GET of it.
                           .created_at = ParseRfc3339("2026-11-30T03:59:58Z").value(),
                           .started_at = ParseRfc3339("2026-11-30T04:00:00Z").value(),
                           .conclusion = "success",
                           .job_name = "build (arm64)"};
  EXPECT_EQ(std::get<TerminateIntent>(*d.intent), expected);
  auto decoded = DecodeIntent(EncodeIntent(*d.intent));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, *d.intent);
}

TEST(WebhookRouterTest, CompletedJobOfAnotherRunnerIsIgnored) {
  WebhookRouter router = Router();
  ExpectIgnored(Deliver(router, Completed("GitHub Actions 5")), IgnoreReason::kForeignRunner);
  ExpectIgnored(Deliver(router, Completed("mvr-other-7")), IgnoreReason::kForeignRunner);
  ExpectIgnored(Deliver(router, Completed("mvr-demo")), IgnoreReason::kForeignRunner);
  ExpectIgnored(Deliver(router, Completed("MVR-DEMO-7")), IgnoreReason::kForeignRunner);
}

// A job cancelled while queued completes without a runner; nothing of ours ran it, so there is
// nothing to terminate (the launcher's still-queued check keeps a VM from booting for it).
TEST(WebhookRouterTest, JobCancelledWhileQueuedIsIgnored) {
  ExpectIgnored(Deliver(Router(), Completed("")), IgnoreReason::kNoRunner);
}

// Actions GitHub may add later are ignored; waiting and in_progress of a job of no class of the
// set too. Of a job of the set's classes they are recorded in its state (issue 55, item 3).
TEST(WebhookRouterTest, OtherActionsAreIgnored) {
  WebhookRouter router = Router();
  for (std::string action : {"waiting", "in_progress", "requested", "something_new"}) {
    PayloadOptions o;
    o.action = action;
    o.labels = {"lambda-mvm-small"};
    o.runner_name = action == "in_progress" ? "mvr-demo_1" : "";
    ExpectIgnored(Deliver(router, WorkflowJobPayload(o)), IgnoreReason::kOtherAction);
    o.labels = {"mvr-small"};
    WebhookDecision d = Deliver(router, WorkflowJobPayload(o));
    if (action == "waiting" || action == "in_progress") {
      ASSERT_EQ(d.verdict, WebhookVerdict::kRecord) << d.message;
      EXPECT_EQ(d.http_status, 202);
      EXPECT_EQ(std::get<JobEventIntent>(*d.intent).action, action);
    } else {
      ExpectIgnored(d, IgnoreReason::kOtherAction);
    }
  }
}

// A completed job of the set's classes that no runner of the set ran is recorded: a queued
// delivered after it launches nothing.
TEST(WebhookRouterTest, ACompletedJobOfAClassWithNoRunnerOfTheSetIsRecorded) {
  WebhookRouter router = Router();
  PayloadOptions o;
  o.action = "completed";
  o.labels = {"self-hosted", "mvr-small"};
  WebhookDecision d = Deliver(router, WorkflowJobPayload(o));
  ASSERT_EQ(d.verdict, WebhookVerdict::kRecord) << d.message;
  const JobEventIntent expected{.repository = "octo-org/widget-service",
                                .job_id = 29679449,
                                .action = "completed",
                                .delivery_id = "72d3162e-cc78-11e3-81ab-4c9367dc0958"};
  EXPECT_EQ(std::get<JobEventIntent>(*d.intent), expected);
}

// RunsOn #509: another installation's delivery is refused with a 2xx and the reason; so is one
// of a repository outside the set's.
TEST(WebhookRouterTest, DeliveriesOfAnotherInstallationOrRepositoryAreRefused) {
  WebhookRouterConfig c = Config();
  c.installation_ids = {77};
  WebhookRouter router = Router(c);
  WebhookDecision d = Deliver(router, Queued({"self-hosted", "mvr-small"}));
  ExpectIgnored(d, IgnoreReason::kForeignInstallation);
  ASSERT_TRUE(d.refused.has_value());
  EXPECT_EQ(d.refused->label, "installation 2311213");
  EXPECT_STREQ(IgnoreReasonName(d.ignore_reason), "foreign_installation");
  c.installation_ids = {2311213};
  EXPECT_EQ(Deliver(Router(c), Queued({"self-hosted", "mvr-small"})).verdict,
            WebhookVerdict::kLaunch);
  c.scope.organization = "other-org";
  d = Deliver(Router(c), Completed("mvr-demo_1"));
  ExpectIgnored(d, IgnoreReason::kForeignRepository);
  EXPECT_EQ(d.refused->reason, "foreign_repository");
  c.scope.organization = "OCTO-ORG";  // GitHub compares names case-insensitively
  EXPECT_EQ(Deliver(Router(c), Completed("mvr-demo_1")).verdict, WebhookVerdict::kTerminate);
}

// GitHub binds no job to the runner launched for it (issue 30, item 1): a job in progress on a
// runner the set launched for another job is told to the launcher; on its own runner, or on a
// runner whose name carries no job id, it is ignored.
TEST(WebhookRouterTest, InProgressOnARunnerLaunchedForAnotherJobBecomesATakenIntent) {
  WebhookRouter router = Router();
  PayloadOptions o;
  o.action = "in_progress";
  o.labels = {"mvr-small"};
  o.runner_name = "mvr-demo_1234-a1";
  WebhookDecision d = Deliver(router, WorkflowJobPayload(o));
  ASSERT_EQ(d.verdict, WebhookVerdict::kTaken) << d.message;
  EXPECT_EQ(d.http_status, 202);
  TakenIntent expected{.runner_name = "mvr-demo_1234-a1",
                       .repository = "octo-org/widget-service",
                       .job_id = 29679449,
                       .delivery_id = "72d3162e-cc78-11e3-81ab-4c9367dc0958"};
  EXPECT_EQ(std::get<TakenIntent>(*d.intent), expected);
  EXPECT_STREQ(WebhookVerdictName(d.verdict), "taken");
  // Otherwise it is only recorded in the job's state (issue 55, item 3).
  o.runner_name = "mvr-demo_29679449-a1";
  EXPECT_EQ(Deliver(router, WorkflowJobPayload(o)).verdict, WebhookVerdict::kRecord);
  for (std::string other : {"mvr-demo_hot-7", "someone-else-1234-a1", "mvr-demo_-a1", ""}) {
    o.runner_name = other;
    EXPECT_EQ(Deliver(router, WorkflowJobPayload(o)).verdict, WebhookVerdict::kRecord) << other;
  }
}

TEST(WebhookRouterTest, PingAndOtherEventsAreAcknowledged) {
  WebhookRouter router = Router();
  ExpectIgnored(Deliver(router, R"({"zen":"Keep it logically awesome.","hook_id":1})", "ping"),
                IgnoreReason::kPing);
  ExpectIgnored(Deliver(router, R"({"ref":"refs/heads/main"})", "push"), IgnoreReason::kOtherEvent);
  // Another event is not read as a workflow_job, whatever its body.
  ExpectIgnored(Deliver(router, Queued({"mvr-small"}), "workflow_run"), IgnoreReason::kOtherEvent);
}

TEST(WebhookRouterTest, SignatureIsCheckedBeforeAnythingElse) {
  WebhookRouter router = Router();
  std::string body = Queued({"mvr-small"});
  auto route = [&](std::string_view event, std::string_view signature, std::string_view b) {
    return router.Route(WebhookDelivery{event, "d-1", signature, b}, kNow);
  };
  std::string good = Sign(body);
  std::string hex = good.substr(7);
  std::string upper = "sha256=";
  for (char c : hex) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(route("workflow_job", upper, body).verdict, WebhookVerdict::kLaunch);

  for (std::string bad : std::vector<std::string>{
           "",                                              // missing
           hex,                                             // no prefix
           "sha1=" + hex,                                   // wrong prefix
           "SHA256=" + hex,                                 // the prefix is case-sensitive
           good.substr(0, good.size() - 1),                 // truncated
           good + "0",                                      // too long
           "sha256=" + std::string(64, 'g'),                // not hex
           Sign(body + " "),                                // another body
           github::WebhookSignature(Secret("other"), body)  // another secret
       }) {
    WebhookDecision d = route("workflow_job", bad, body);
    ExpectRefused(d, WebhookVerdict::kRejectedSignature, 401);
    EXPECT_NE(d.message.find("X-Hub-Signature-256"), std::string::npos) << d.message;
  }
  // Unsigned pings, other events and malformed bodies are refused as unsigned, not read.
  ExpectRefused(route("ping", "", "{}"), WebhookVerdict::kRejectedSignature, 401);
  ExpectRefused(route("push", "", "{}"), WebhookVerdict::kRejectedSignature, 401);
  ExpectRefused(route("", "", "{"), WebhookVerdict::kRejectedSignature, 401);
}

TEST(WebhookRouterTest, BodyOverTheLimitIsRefusedBeforeItIsHashed) {
  std::string body = Queued({"mvr-small"});
  WebhookRouterConfig config = Config();
  config.body_limit = body.size();
  WebhookRouter router = Router(config);
  EXPECT_EQ(Deliver(router, body).verdict, WebhookVerdict::kLaunch);  // exactly at the limit

  std::string over = body + " ";
  WebhookDecision d = Deliver(router, over);  // correctly signed, one byte over
  ExpectRefused(d, WebhookVerdict::kTooLarge, 413);
  EXPECT_NE(d.message.find(std::to_string(body.size())), std::string::npos) << d.message;
  ExpectRefused(router.Route(WebhookDelivery{"workflow_job", "d-1", "", over}, kNow),
                WebhookVerdict::kTooLarge, 413);
  EXPECT_EQ(Router().body_limit(), kDefaultWebhookBodyLimit);
}

TEST(WebhookRouterTest, SignedButUnreadableDeliveriesAreMalformed) {
  WebhookRouter router = Router();
  for (std::string body : {std::string("{"), std::string("[]"), std::string(""),
                           std::string(R"({"action":"queued","repository":{"full_name":"o/r"}})"),
                           std::string(R"({"action":"queued","workflow_job":{"id":"1","run_id":2},)"
                                       R"("repository":{"full_name":"o/r"}})")}) {
    WebhookDecision d = Deliver(router, body);
    ExpectRefused(d, WebhookVerdict::kMalformed, 400);
    EXPECT_EQ(d.message.rfind("workflow_job payload: ", 0), 0u) << d.message;
  }
}

TEST(WebhookRouterTest, MissingGitHubHeadersAreMalformed) {
  WebhookRouter router = Router();
  std::string body = Queued({"mvr-small"});
  std::string signature = Sign(body);
  WebhookDecision no_event = router.Route(WebhookDelivery{"", "d-1", signature, body}, kNow);
  ExpectRefused(no_event, WebhookVerdict::kMalformed, 400);
  EXPECT_NE(no_event.message.find("X-GitHub-Event"), std::string::npos) << no_event.message;
  WebhookDecision no_id = router.Route(WebhookDelivery{"workflow_job", "", signature, body}, kNow);
  ExpectRefused(no_id, WebhookVerdict::kMalformed, 400);
  EXPECT_NE(no_id.message.find("X-GitHub-Delivery"), std::string::npos) << no_id.message;
  std::string long_id(129, 'a');
  ExpectRefused(router.Route(WebhookDelivery{"workflow_job", long_id, signature, body}, kNow),
                WebhookVerdict::kMalformed, 400);
}

// fuzz/webhook_route (seed delivery_id_not_utf8): the signature covers the body only, so a replayed
// delivery may carry any X-GitHub-Delivery; one that was not UTF-8 made encoding the intent throw
// (JSON), which nothing on the Lambda path catches (mvr serve's HTTP server answered 500).
TEST(WebhookRouterTest, DeliveryIdThatIsNotPrintableAsciiIsMalformed) {
  WebhookRouter router = Router();
  std::string body = Queued({"mvr-small"});
  std::string signature = Sign(body);
  for (std::string id : {std::string("d-\xff"), std::string("d-\xc3\xa9"), std::string("d 1"),
                         std::string("d-\n1"), std::string(1, '\0')}) {
    WebhookDecision d = router.Route(WebhookDelivery{"workflow_job", id, signature, body}, kNow);
    ExpectRefused(d, WebhookVerdict::kMalformed, 400);
    EXPECT_NE(d.message.find("X-GitHub-Delivery"), std::string::npos) << d.message;
  }
  EXPECT_EQ(
      router.Route(WebhookDelivery{"workflow_job", "a-Z_0.9:~", signature, body}, kNow).verdict,
      WebhookVerdict::kLaunch);
}

// Found by fuzz_webhook_route: a signed body whose repository.full_name is not owner/name and has
// a two-byte character across the message's 100-byte cut. The message quoted half the character,
// and writing the JSON answer threw (nlohmann type_error 316) out of AnswerWebhook: `mvr serve`
// answered 500 and the webhook function failed the invocation, instead of a 400 naming the member.
TEST(WebhookRouterTest, ANameThatIsNotOwnerSlashNameIsQuotedAsPrintableAsciiInA400) {
  nlohmann::json payload = github::testing::WorkflowJobJson(PayloadOptions{});
  for (std::string name : {std::string(99, 'a') + "\xc9\xbe" + "b", std::string("\xc3\xa9/b/c"),
                           std::string("owner/\xe2\x80\xa8name")}) {
    payload["repository"]["full_name"] = name;
    const std::string body = payload.dump();
    http::Headers headers{{"X-GitHub-Event", "workflow_job"},
                          {"X-GitHub-Delivery", "d-1"},
                          {"X-Hub-Signature-256", Sign(body)}};
    ManualClock clock;
    ManualSleeper sleeper(clock);
    queue::MemoryQueue queue(clock, sleeper);
    Metrics metrics;
    MemorySink sink;
    Logger logger(sink, clock);
    WebhookAnswer a;
    ASSERT_NO_THROW(a = AnswerWebhook(Router(), queue, metrics, logger, headers, body, kNow));
    EXPECT_EQ(a.status, 400) << a.body;
    nlohmann::json answer = nlohmann::json::parse(a.body);
    const std::string message = answer["message"];
    EXPECT_NE(message.find("repository.full_name"), std::string::npos) << message;
    for (char c : message) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << message;
  }
}

TEST(WebhookRouterTest, HeadersAreFoundWhateverTheirCase) {
  std::string body = Queued({"mvr-small"});
  http::Headers headers{{"x-github-event", "workflow_job"},
                        {"X-GITHUB-DELIVERY", "d-9"},
                        {"x-hub-signature-256", Sign(body)},
                        {"Content-Type", "application/json"}};
  WebhookDecision d = Router().Route(headers, body, kNow);
  ASSERT_EQ(d.verdict, WebhookVerdict::kLaunch) << d.message;
  EXPECT_EQ(std::get<LaunchIntent>(*d.intent).delivery_id, "d-9");
  headers.Remove("x-hub-signature-256");
  EXPECT_EQ(Router().Route(headers, body, kNow).verdict, WebhookVerdict::kRejectedSignature);
}

TEST(WebhookRouterTest, NoAnswerEverCarriesTheSecretOrTheExpectedSignature) {
  WebhookRouter router = Router();
  std::string body = Queued({"mvr-small"});
  std::string expected_hex = Sign(body).substr(7);
  std::vector<WebhookDecision> decisions = {
      Deliver(router, body),
      Deliver(router, Completed("mvr-demo_1")),
      Deliver(router, Completed("GitHub Actions 5")),
      Deliver(router, "{}", "ping"),
      Deliver(router, "{"),
      router.Route(WebhookDelivery{"workflow_job", "d", "", body}, kNow),
      router.Route(WebhookDelivery{"workflow_job", "d", "sha256=" + std::string(64, '0'), body},
                   kNow),
      router.Route(WebhookDelivery{"workflow_job", "d", "sha256=" + expected_hex.substr(1), body},
                   kNow)};
  for (const WebhookDecision& d : decisions) {
    EXPECT_EQ(d.message.find(kSecretText), std::string::npos) << d.message;
    EXPECT_EQ(d.message.find(expected_hex.substr(0, 16)), std::string::npos) << d.message;
    if (d.intent) {
      std::string encoded = EncodeIntent(*d.intent);
      EXPECT_EQ(encoded.find(kSecretText), std::string::npos) << encoded;
    }
  }
}

TEST(WebhookRouterTest, ConfigurationMistakesAreNamed) {
  auto expect_refused = [](WebhookRouterConfig c, const std::string& words) {
    auto router = WebhookRouter::Create(std::move(c));
    ASSERT_FALSE(router.ok()) << words;
    EXPECT_EQ(router.status().code(), Code::kInvalidArgument);
    EXPECT_NE(router.status().message().find(words), std::string::npos)
        << router.status().message();
    EXPECT_EQ(router.status().message().find(kSecretText), std::string::npos);
  };
  WebhookRouterConfig c = Config();
  c.secret = Secret();
  expect_refused(c, "webhook secret: empty");
  c = Config();
  c.classes.clear();
  expect_refused(c, "classes: at least one");
  c = Config();
  c.classes = {RunnerClass{.label = "mvr-small"}, RunnerClass{.label = "MVR-Small"}};
  expect_refused(c, "classes[1].label: 'MVR-Small' is already the label of classes[0]");
  c = Config();
  c.classes = {RunnerClass{.label = "mvr-small"}, RunnerClass{.label = ""}};
  expect_refused(c, "classes[1].label: empty");
  c = Config();
  c.runner_name_prefix.clear();
  expect_refused(c, "runnerNamePrefix: empty");
  c = Config();
  c.body_limit = 0;
  expect_refused(c, "body limit");
  EXPECT_EQ(RunnerNamePrefix("demo"), "mvr-demo_");
}

TEST(WebhookRouterTest, ConcurrentDeliveriesAreEachRoutedOnTheirOwn) {
  WebhookRouter router = Router();
  constexpr int kThreads = 6;
  constexpr int kPerThread = 150;
  std::vector<std::vector<int64_t>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        PayloadOptions o;
        o.job_id = 1 + t * kPerThread + i;
        o.labels = {"mvr-small"};
        o.action = i % 3 == 0 ? "completed" : "queued";
        o.runner_name = i % 3 == 0 ? "mvr-demo_" + std::to_string(o.job_id) : "";
        o.steps = (i * 7) % 30;
        WebhookDecision d = Deliver(router, WorkflowJobPayload(o));
        if (!d.intent) continue;
        if (const auto* launch = std::get_if<LaunchIntent>(&*d.intent)) {
          seen[t].push_back(launch->job_id);
        } else {
          const auto& terminate = std::get<TerminateIntent>(*d.intent);
          if (terminate.runner_name == "mvr-demo_" + std::to_string(o.job_id)) {
            seen[t].push_back(terminate.job_id);
          }
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(seen[t].size(), static_cast<size_t>(kPerThread)) << t;
    for (int i = 0; i < kPerThread; ++i) EXPECT_EQ(seen[t][i], 1 + t * kPerThread + i);
  }
}

TEST(WebhookRouterTest, DecisionNamesAreStable) {
  EXPECT_STREQ(WebhookVerdictName(WebhookVerdict::kLaunch), "launch");
  EXPECT_STREQ(WebhookVerdictName(WebhookVerdict::kTerminate), "terminate");
  EXPECT_STREQ(WebhookVerdictName(WebhookVerdict::kIgnored), "ignored");
  EXPECT_STREQ(WebhookVerdictName(WebhookVerdict::kRejectedSignature), "rejected_signature");
  EXPECT_STREQ(WebhookVerdictName(WebhookVerdict::kMalformed), "malformed");
  EXPECT_STREQ(WebhookVerdictName(WebhookVerdict::kTooLarge), "too_large");
  EXPECT_STREQ(IgnoreReasonName(IgnoreReason::kPing), "ping");
  EXPECT_STREQ(IgnoreReasonName(IgnoreReason::kOtherEvent), "other_event");
  EXPECT_STREQ(IgnoreReasonName(IgnoreReason::kOtherAction), "other_action");
  EXPECT_STREQ(IgnoreReasonName(IgnoreReason::kNoClassLabel), "no_class_label");
  EXPECT_STREQ(IgnoreReasonName(IgnoreReason::kNoRunner), "no_runner");
  EXPECT_STREQ(IgnoreReasonName(IgnoreReason::kForeignRunner), "foreign_runner");
}

}  // namespace
}  // namespace mvr::runnerset
