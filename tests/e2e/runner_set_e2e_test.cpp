// The runner set end to end (issue 14): GitHub emulator → signed webhook → `mvr serve` (SQLite
// queue and store) → launcher → MicroVMs emulator → real supervisor in delivered mode → stand-in
// runner → job → completed webhook → terminate.
#include <csignal>

#include "aws/signing/credentials.h"
#include "base/environment.h"
#include "queue/open_queue.h"
#include "runner_set_e2e_fixture.h"
#include "store/open_store.h"

namespace mvr::testbed {
namespace {

TEST_F(RunnerSetEndToEnd, QueuedJobRunsOnAFreshVmThatIsThenTerminatedAndItsRunnerIsGone) {
  ExpectJobRunsOnAFreshVmThatIsThenTerminated();
  for (const char* milestone :
       {"claimed", "vm_running", "config_delivered", "runner_online", "job_started", "completed"}) {
    EXPECT_EQ(TimelineCount(milestone), 1) << milestone;
  }
  // Neither the webhook secret nor the GitHub token reaches mvr serve's log.
  const std::string log = ReadWholeFile(dir_ + "/serve.log");
  EXPECT_EQ(log.find(kWebhookSecret), std::string::npos);
  EXPECT_EQ(log.find(stack_->token().Reveal()), std::string::npos);
}

// `mvr status --html` as an operator of a stopped daemon (or of the Lambda deployment) runs it:
// from the store, the MicroVMs API and GitHub alone, with no server to ask.
TEST_F(RunnerSetEndToEnd, StatusHtmlIsWrittenFromTheStoreWithTheDaemonStopped) {
  const int64_t job = ExpectJobRunsOnAFreshVmThatIsThenTerminated();
  EXPECT_EQ(StopServe(SIGTERM).code, 0);
  const std::string page = dir_ + "/status.html";
  process::ProcessSpec status;
  status.argv = {mvr_, "status", "--config", dir_ + "/serve.json", "--html", page};
  status.env = stack_->StepEnvironment("1", "status");
  process::RunOptions options;
  options.timeout = Duration(30'000);
  options.capture_stderr = true;
  auto ran = processes_.Run(status, options);
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  EXPECT_EQ(ran->exit.code, 0) << ran->output << ran->error_output;
  EXPECT_NE(ran->output.find("wrote " + page + " (0 jobs in flight, 1 finished)"),
            std::string::npos)
      << ran->output;
  const std::string html = ReadWholeFile(page);
  EXPECT_NE(html.find(std::string(kDemoRepository) + "#" + std::to_string(job)), std::string::npos)
      << "a row for the job";
  EXPECT_NE(html.find("success"), std::string::npos) << "its outcome";
  EXPECT_EQ(html.find("could not be read"), std::string::npos) << "every listing was read";
  for (const std::string& secret : {std::string(kWebhookSecret), stack_->token().Reveal()}) {
    EXPECT_EQ(html.find(secret), std::string::npos);
    EXPECT_EQ(ran->output.find(secret), std::string::npos);
    EXPECT_EQ(ran->error_output.find(secret), std::string::npos);
  }
}

TEST_F(RunnerSetEndToEnd, FiveDeliveriesOfOneWebhookLaunchOneVm) {
  ExpectFiveDeliveriesOfOneWebhookLaunchOneVm();
  // mvr serve's delivery ledger refuses the four copies at the door (issue 53, item 13).
  EXPECT_EQ(ReplaysRefused(), 4);
}

TEST_F(RunnerSetEndToEnd, BadSignatureIsRefusedWith401AndNothingIsQueued) {
  ExpectBadSignaturesRefusedWith401(ServeUrl() + "/webhook");
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

// GitHub's webhook is late: the job is cancelled before it arrives.
class RunnerSetLateWebhook : public RunnerSetEndToEnd {
  void ConfigureStack(LocalStack& stack) override { UseLateWebhooks(stack); }
};

TEST_F(RunnerSetLateWebhook, JobCancelledWhileQueuedGetsNoVm) {
  ExpectJobCancelledWhileQueuedGetsNoVm();
}

}  // namespace
}  // namespace mvr::testbed
