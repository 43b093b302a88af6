// The runner set end to end (issue 14): GitHub emulator → signed webhook → `mvr serve` (SQLite
// queue and store) → launcher → MicroVMs emulator → real supervisor in delivered mode → stand-in
// runner → job → completed webhook → terminate.
#include <csignal>

#include "aws/credentials.h"
#include "base/environment.h"
#include "queue/open_queue.h"
#include "runner_set_e2e_fixture.h"
#include "store/open_store.h"

namespace mvr::demo {
namespace {

TEST_F(RunnerSetEndToEnd, QueuedJobRunsOnAFreshVmThatIsThenTerminatedAndItsRunnerIsGone) {
  const int64_t job = QueueJob({"echo hello from the runner set", "test -n \"$RUNNER_NAME\""});
  ASSERT_GT(job, 0);
  ASSERT_TRUE(Eventually([&] { return Completed(job); }, std::chrono::seconds(60)))
      << Job(job).dump();
  json done = Job(job);
  EXPECT_EQ(done.value("conclusion", ""), "success") << done.dump();
  EXPECT_EQ(done.value("runner_name", "").rfind("mvr-e2e-" + std::to_string(job) + "-", 0), 0u)
      << done.dump();
  EXPECT_EQ(CountOperation("RunMicrovm"), 1);
  ExpectNothingLeft();
  EXPECT_TRUE(Eventually([&] { return Metric("terminated") == 1; }, std::chrono::seconds(15)));
  EXPECT_EQ(Metric("launched"), 1);
  EXPECT_EQ(Metric("failed"), 0);
  for (const char* milestone :
       {"claimed", "vm_running", "config_delivered", "runner_online", "job_started", "completed"}) {
    EXPECT_EQ(TimelineCount(milestone), 1) << milestone;
  }
  // Neither the webhook secret nor the GitHub token reaches mvr serve's log.
  const std::string log = ReadWholeFile(dir_ + "/serve.log");
  EXPECT_EQ(log.find(kWebhookSecret), std::string::npos);
  EXPECT_EQ(log.find(stack_->token().Reveal()), std::string::npos);
}

TEST_F(RunnerSetEndToEnd, FiveDeliveriesOfOneWebhookLaunchOneVm) {
  const int64_t job = QueueJob({"sleep 2"});
  std::vector<json> deliveries;
  ASSERT_TRUE(Eventually(
      [&] {
        deliveries = QueuedDeliveries(job);
        return !deliveries.empty() && deliveries[0].value("outcome", "") == "delivered";
      },
      std::chrono::seconds(15)));
  const std::string guid = deliveries[0].value("guid", "");
  for (int i = 0; i < 4; ++i) {
    auto redelivered =
        workflow_->GitHub("POST", "/_emulator/deliveries/" + guid + "/redeliver", "{}");
    ASSERT_TRUE(redelivered.ok()) << redelivered.status().ToString();
  }
  ASSERT_TRUE(Eventually([&] { return Completed(job); }, std::chrono::seconds(60)));
  EXPECT_EQ(Job(job).value("conclusion", ""), "success");
  // Every copy is settled: one launch; each other found the job's claim, or (once the job had
  // started) GitHub saying it is no longer queued.
  auto settled = [&] {
    return Metric("launched") + Metric("duplicate") + Metric("dropped_not_queued");
  };
  EXPECT_TRUE(Eventually([&] { return settled() == 5; }, std::chrono::seconds(30)))
      << "launched " << Metric("launched") << ", duplicate " << Metric("duplicate") << ", dropped "
      << Metric("dropped_not_queued");
  EXPECT_EQ(Metric("launched"), 1);
  EXPECT_EQ(CountOperation("RunMicrovm"), 1);
  ExpectNothingLeft();
}

TEST_F(RunnerSetEndToEnd, BadSignatureIsRefusedWith401AndNothingIsQueued) {
  const std::string body =
      R"({"action":"queued","workflow_job":{"id":9,"run_id":1,"labels":["mvr-small"]}})";
  for (const std::string& signature :
       {std::string(), std::string("sha256=") + std::string(64, '0')}) {
    http::HttpRequest req;
    req.method = "POST";
    req.url = ServeUrl() + "/webhook";
    req.body = body;
    req.headers.Set("Content-Type", "application/json");
    req.headers.Set("X-GitHub-Event", "workflow_job");
    req.headers.Set("X-GitHub-Delivery", "bad-signature-" + std::to_string(signature.size()));
    if (!signature.empty()) req.headers.Set("X-Hub-Signature-256", signature);
    auto res = http_.Send(req);
    ASSERT_TRUE(res.ok()) << res.status().ToString();
    EXPECT_EQ(res->status, 401) << res->body;
  }
  EXPECT_EQ(Metric("received"), 2);
  // A clean stop, then the queue itself: nothing was put on it.
  process::ExitStatus stopped = StopServe(SIGTERM);
  EXPECT_TRUE(stopped.ok()) << "mvr serve exit code " << stopped.code;
  aws::StaticCredentialsProvider none(aws::AwsCredentials{});
  MapEnvironment env;
  store::OpenDeps deps{real_.seam, env, http_, none, std::nullopt};
  auto queue = queue::OpenQueue("sqlite:" + dir_ + "/state.db", deps);
  ASSERT_TRUE(queue.ok()) << queue.status().ToString();
  auto got = (*queue)->Receive(queue::ReceiveOptions{});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(got->empty());
  EXPECT_EQ(CountOperation("RunMicrovm"), 0);
}

// GitHub's webhook is late (as it often is, by about 2 s): the job is cancelled before it
// arrives, and the launcher's still-queued check drops the launch.
class RunnerSetLateWebhook : public RunnerSetEndToEnd {
  void ConfigureStack(LocalStack& stack) override {
    stack.AddGithubArgs({"--delivery-delay-min-ms", "1500", "--delivery-delay-max-ms", "1500"});
  }
};

TEST_F(RunnerSetLateWebhook, JobCancelledWhileQueuedGetsNoVm) {
  const int64_t job = QueueJob({"echo never"});
  auto cancelled = workflow_->GitHub("POST", "/_emulator/jobs/" + std::to_string(job) + "/cancel");
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  ASSERT_TRUE(
      Eventually([&] { return Metric("dropped_not_queued") == 1; }, std::chrono::seconds(20)))
      << "dropped_not_queued " << Metric("dropped_not_queued");
  EXPECT_EQ(Job(job).value("conclusion", ""), "cancelled");
  EXPECT_EQ(CountOperation("RunMicrovm"), 0);
  EXPECT_EQ(Metric("launched"), 0);
  ExpectNothingLeft();
}

}  // namespace
}  // namespace mvr::demo
