// The GitHub emulator's signed workflow_job deliveries through the WebhookRouter: what the
// emulator sends for a job's life (queued, in_progress, completed; and a job cancelled while
// queued) is what the router must understand, so `mvr demo` exercises the real path.
#include <gtest/gtest.h>

#include "emulate/github/github_model.h"
#include "emulate/github/jit_config.h"
#include "runnerset/intake/webhook_router.h"

namespace mvr::runnerset {
namespace {

namespace emu = mvr::emulate::github;

constexpr char kSecretText[] = "whsec-emulator-router-fixture";

class EmulatorWebhookTest : public ::testing::Test {
 protected:
  EmulatorWebhookTest() : model_(Options(), seam_, nullptr) {
    WebhookRouterConfig c;
    c.secret = Secret(kSecretText);
    c.classes = {RunnerClass{.label = "mvr-small"}};
    c.runner_name_prefix = RunnerNamePrefix("demo");
    auto router = WebhookRouter::Create(std::move(c));
    EXPECT_TRUE(router.ok()) << router.status().ToString();
    router_ = std::make_unique<WebhookRouter>(std::move(router).value());
  }

  static emu::GithubModelOptions Options() {
    emu::GithubModelOptions o;
    o.repositories = {"octo-org/widget-service"};
    o.base_url = "http://127.0.0.1:9";
    o.webhook_secret = Secret(kSecretText);
    return o;
  }

  int64_t Queue() {
    emu::JobSpec spec;
    spec.repository = "octo-org/widget-service";
    spec.labels = {"self-hosted", "mvr-small"};
    spec.steps = {"true"};
    auto job = model_.QueueJob(spec);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->id : 0;
  }

  // The router's decision on the emulator's delivery of `action` for `job_id`.
  WebhookDecision Route(int64_t job_id, const std::string& action) {
    for (const emu::Delivery& d : model_.ListDeliveries()) {
      if (d.job_id == job_id && d.action == action) {
        return router_->Route(d.headers, d.payload, clock_.Now());
      }
    }
    ADD_FAILURE() << "the emulator sent no " << action << " delivery for job " << job_id;
    return {};
  }

  ManualClock clock_;
  ManualSleeper sleeper_{clock_};
  SeededRandom random_{3};
  SeededRandom secure_random_{4};
  MemorySink sink_;
  Logger logger_{sink_, clock_};
  Seam seam_{clock_, sleeper_, random_, secure_random_, logger_};
  emu::GithubModel model_;
  std::unique_ptr<WebhookRouter> router_;
};

TEST_F(EmulatorWebhookTest, AJobsLifeIsLaunchThenTerminate) {
  emu::JitRequest jit;
  jit.name = "mvr-demo_1";
  jit.runner_group_id = 1;
  jit.labels = {"mvr-small"};
  auto reg = model_.GenerateJitConfig(emu::Scope::Repo("octo-org", "widget-service"), jit);
  ASSERT_TRUE(reg.ok()) << reg.status().ToString();
  auto contents = emu::DecodeJitConfig(reg->encoded_jit_config);
  ASSERT_TRUE(contents.ok());
  ASSERT_TRUE(model_.RunnerConnect(contents->credential).ok());

  int64_t job_id = Queue();
  WebhookDecision queued = Route(job_id, "queued");
  ASSERT_EQ(queued.verdict, WebhookVerdict::kLaunch) << queued.message;
  const auto& launch = std::get<LaunchIntent>(*queued.intent);
  EXPECT_EQ(launch.job_id, job_id);
  EXPECT_EQ(launch.repository, "octo-org/widget-service");
  EXPECT_EQ(launch.class_label, "mvr-small");

  model_.Tick();
  auto assignment = model_.RunnerAcquireJob(contents->credential);
  ASSERT_TRUE(assignment.ok() && assignment->has_value()) << assignment.status().ToString();
  // Recorded in the job's state, so a late queued launches nothing (issue 55, item 3).
  WebhookDecision started = Route(job_id, "in_progress");
  ASSERT_EQ(started.verdict, WebhookVerdict::kRecord) << started.message;
  EXPECT_EQ(std::get<JobEventIntent>(*started.intent).action, "in_progress");

  ASSERT_TRUE(model_.RunnerCompleteJob(contents->credential, job_id, "success").ok());
  WebhookDecision completed = Route(job_id, "completed");
  ASSERT_EQ(completed.verdict, WebhookVerdict::kTerminate) << completed.message;
  EXPECT_EQ(std::get<TerminateIntent>(*completed.intent).runner_name, "mvr-demo_1");
  EXPECT_EQ(std::get<TerminateIntent>(*completed.intent).job_id, job_id);
}

// It terminates nothing, but is recorded: a queued delivered after it launches nothing.
TEST_F(EmulatorWebhookTest, AJobCancelledWhileQueuedTerminatesNothing) {
  int64_t job_id = Queue();
  ASSERT_TRUE(model_.CancelJob(job_id).ok());
  WebhookDecision completed = Route(job_id, "completed");
  ASSERT_EQ(completed.verdict, WebhookVerdict::kRecord) << completed.message;
  const auto& event = std::get<JobEventIntent>(*completed.intent);
  EXPECT_EQ(event.action, "completed");
  EXPECT_EQ(event.job_id, job_id);
}

// A job behind an environment's approval: queued, then waiting, then queued again once approved
// (CloudSnorkel/cdk-github-runners #416). The waiting delivery launches nothing.
TEST_F(EmulatorWebhookTest, AJobBehindAnApprovalIsQueuedWaitingThenQueuedAgain) {
  emu::JobSpec spec;
  spec.repository = "octo-org/widget-service";
  spec.labels = {"self-hosted", "mvr-small"};
  spec.steps = {"true"};
  spec.wait_for_environment = true;
  const int64_t job_id = model_.QueueJob(spec).value().id;
  ASSERT_TRUE(model_.ApproveJob(job_id).ok());
  std::vector<std::string> verdicts;
  for (const emu::Delivery& d : model_.ListDeliveries()) {
    if (d.job_id != job_id) continue;
    WebhookDecision decision = router_->Route(d.headers, d.payload, clock_.Now());
    verdicts.push_back(d.action + ":" + WebhookVerdictName(decision.verdict));
  }
  EXPECT_EQ(verdicts,
            (std::vector<std::string>{"queued:launch", "waiting:record", "queued:launch"}));
}

// RunsOn #509: deliveries of another installation reach the App's webhook. A set that knows its
// installation refuses them with a 2xx (GitHub must not show them failed) and names why.
TEST_F(EmulatorWebhookTest, AnotherInstallationsDeliveryIsRefused) {
  WebhookRouterConfig c;
  c.secret = Secret(kSecretText);
  c.classes = {RunnerClass{.label = "mvr-small"}};
  c.runner_name_prefix = RunnerNamePrefix("demo");
  c.installation_ids = {Options().installation_id};
  c.scope.repository = "octo-org/widget-service";
  WebhookRouter router = WebhookRouter::Create(std::move(c)).value();
  ASSERT_TRUE(model_.SetForeignDeliveries(1).ok());
  const int64_t job_id = Queue();
  int foreign = 0, own = 0;
  for (const emu::Delivery& d : model_.ListDeliveries()) {
    WebhookDecision decision = router.Route(d.headers, d.payload, clock_.Now());
    if (d.job_id == job_id) {
      ++own;
      EXPECT_EQ(decision.verdict, WebhookVerdict::kLaunch) << decision.message;
      continue;
    }
    ++foreign;
    EXPECT_EQ(decision.http_status, 200) << decision.message;
    EXPECT_EQ(decision.ignore_reason, IgnoreReason::kForeignInstallation) << decision.message;
    EXPECT_FALSE(decision.intent.has_value());
    ASSERT_TRUE(decision.refused.has_value());
    EXPECT_EQ(decision.refused->reason, "foreign_installation");
    EXPECT_NE(decision.message.find("installation 999001"), std::string::npos) << decision.message;
  }
  EXPECT_EQ(own, 1);
  EXPECT_EQ(foreign, 1);
  // Without the installation check, the repository check still refuses it.
  c = WebhookRouterConfig{};
  c.secret = Secret(kSecretText);
  c.classes = {RunnerClass{.label = "mvr-small"}};
  c.runner_name_prefix = RunnerNamePrefix("demo");
  c.scope.organization = "octo-org";
  WebhookRouter by_repository = WebhookRouter::Create(std::move(c)).value();
  for (const emu::Delivery& d : model_.ListDeliveries()) {
    if (d.job_id == job_id) continue;
    WebhookDecision decision = by_repository.Route(d.headers, d.payload, clock_.Now());
    EXPECT_EQ(decision.ignore_reason, IgnoreReason::kForeignRepository) << decision.message;
  }
}

}  // namespace
}  // namespace mvr::runnerset
