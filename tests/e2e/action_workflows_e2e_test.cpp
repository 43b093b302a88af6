// End to end, workflows as users write them and the platform's timing: matrix legs started
// together, a long job's lifetime, a retry after a failed start, a warm server another job holds,
// a stale handle's stop, a handle from another region or repository, and GetMicrovm reporting
// RUNNING before the hook has run. Every step runs action.yml's own steps. Label: e2e.
#include <thread>

#include "tests/e2e/action_e2e_fixture.h"

namespace mvr::testbed {
namespace {

StepContext Leg(int index, const std::string& os) {
  return StepContext{
      "mvr",
      json{{"fail-fast", true}, {"job-index", index}, {"job-total", 2}, {"max-parallel", 2}}.dump(),
      json{{"os", os}}.dump()};
}

// Two legs of one matrix job (same run, same GITHUB_JOB, same step) start at the same time.
TEST_F(ActionEndToEnd, MatrixLegsStartedTogetherEachGetTheirOwnRunnerAndMicrovm) {
  StepResult legs[2];
  std::thread other([&] { legs[1] = Step("start", "matrix", {}, {}, Leg(1, "arm64")); });
  legs[0] = Step("start", "matrix", {}, {}, Leg(0, "x64"));
  other.join();
  ASSERT_TRUE(legs[0].ok()) << legs[0].Describe();
  ASSERT_TRUE(legs[1].ok()) << legs[1].Describe();
  EXPECT_NE(legs[0].outputs["label"], legs[1].outputs["label"]);
  EXPECT_NE(legs[0].outputs["microvm-id"], legs[1].outputs["microvm-id"]);
  // Neither leg removed the other's runner: both take a job.
  for (StepResult& leg : legs) {
    JobResult job = Job(leg.outputs["label"], {"echo leg on $RUNNER_NAME"});
    EXPECT_EQ(job.conclusion, "success");
    EXPECT_EQ(job.runner_name, leg.outputs["runner-name"]);
  }
  // A second call of the action in the same job and leg (another step) is another identity.
  StepContext again = Leg(0, "x64");
  again.step_id = "mvr-second";
  StepResult second = Step("start", "matrix", {}, {}, again);
  ASSERT_TRUE(second.ok()) << second.Describe();
  EXPECT_NE(second.outputs["label"], legs[0].outputs["label"]);
  for (StepResult* leg : {&legs[0], &legs[1], &second}) {
    StepResult stop = Step(
        "stop", "matrix",
        {{"MICROVM_ID", leg->outputs["microvm-id"]}, {"RUNNER_ID", leg->outputs["runner-id"]}});
    EXPECT_TRUE(stop.ok()) << stop.Describe();
  }
  ExpectNothingLeft();
}

// max-lifetime-seconds is the warm lifetime; an ephemeral VM lives as long as its job may (GitHub's
// default timeout-minutes, 360, plus the start's wait for its runner and 300 s: issue 52, item 8),
// so a job longer than two hours is not killed under its runner, and a VM whose stop step never
// runs does not outlive its job by hours.
TEST_F(ActionEndToEnd, EphemeralMicrovmLivesAsLongAsItsJobMay) {
  StepResult start = Step("start", "long-job", {});
  ASSERT_TRUE(start.ok()) << start.Describe();
  auto vm = workflow_->GetMicrovm(start.outputs["microvm-id"]);
  ASSERT_TRUE(vm.ok()) << vm.status().ToString();
  // The local stack's steps wait 120 s for their runner (startup-timeout-seconds).
  EXPECT_EQ((*vm)["maximumDurationInSeconds"], 360 * 60 + 120 + 300);
  StepResult stop = Step("stop", "long-job", {{"MICROVM_ID", start.outputs["microvm-id"]}});
  EXPECT_TRUE(stop.ok()) << stop.Describe();
}

// The first start's VM ran but its runner never came online; the same identity starts again.
TEST_F(ActionEndToEnd, RetryAfterTheRunnerNeverCameOnlineSucceeds) {
  StepResult first =
      Step("start", "retry", {{"IMAGE_ID", kSilentImage}, {"STARTUP_TIMEOUT_SECONDS", "10"}});
  ASSERT_FALSE(first.ok());
  EXPECT_NE(first.error.find("terminated MicroVM"), std::string::npos) << first.error;
  StepResult retry = Step("start", "retry", {});
  ASSERT_TRUE(retry.ok()) << retry.Describe();
  JobResult job = Job(retry.outputs["label"], {"echo retried"});
  EXPECT_EQ(job.conclusion, "success");
  StepResult stop = Step("stop", "retry", {{"MICROVM_ID", retry.outputs["microvm-id"]}});
  EXPECT_TRUE(stop.ok()) << stop.Describe();
  ExpectNothingLeft();
}

// Job A's handle, after job B resumed the server: a start with it is refused as busy, a stop with
// it leaves the VM running, and B's job and stop are unaffected.
TEST_F(ActionEndToEnd, AServerAnotherJobHoldsIsNeitherTakenNorSuspended) {
  StepResult a = Step("start", "busy-a", {{"SERVER", "shared"}});
  ASSERT_TRUE(a.ok()) << a.Describe();
  const std::string microvm_id = a.outputs["microvm-id"];
  EXPECT_EQ(Job(a.outputs["label"], {"echo A"}).conclusion, "success");
  ASSERT_TRUE(Step("stop", "busy-a", {{"SERVER", a.outputs["server"]}}).ok());
  StepResult b = Step("start", "busy-b", {{"SERVER", a.outputs["server"]}});
  ASSERT_TRUE(b.ok()) << b.Describe();
  ASSERT_EQ(StateOf(microvm_id), "RUNNING");

  const size_t before = RequestLogLines();
  StepResult c = Step("start", "busy-c", {{"SERVER", a.outputs["server"]}});
  EXPECT_FALSE(c.ok());
  EXPECT_NE(c.error.find("server busy"), std::string::npos) << c.error;
  ExpectNoLifecycleCallSince(before);
  StepResult stale = Step("stop", "busy-a", {{"SERVER", a.outputs["server"]}});
  EXPECT_TRUE(stale.ok()) << stale.Describe();
  std::vector<std::string> ops = OperationsSince(before);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "SuspendMicrovm"), 0);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "TerminateMicrovm"), 0);
  EXPECT_EQ(StateOf(microvm_id), "RUNNING");

  JobResult job = Job(b.outputs["label"], {"echo B still has its server"});
  EXPECT_EQ(job.conclusion, "success");
  EXPECT_EQ(job.runner_name, b.outputs["runner-name"]);
  ASSERT_TRUE(Step("stop", "busy-b", {{"SERVER", b.outputs["server"]}}).ok());
  EXPECT_EQ(StateOf(microvm_id), "SUSPENDED");
  ASSERT_TRUE(Step("stop", "busy-teardown", {{"MICROVM_ID", microvm_id}}).ok());
  ExpectNothingLeft();
}

// A job cancelled before its runner took it: the stop removes the runner and waits for its
// process to exit, so the supervisor suspends cleanly and the server can be resumed.
TEST_F(ActionEndToEnd, ServerParkedBeforeItsRunnerTookAJobResumesForTheNextJob) {
  StepResult a = Step("start", "unused-a", {{"SERVER", "unused"}});
  ASSERT_TRUE(a.ok()) << a.Describe();
  ASSERT_TRUE(Step("stop", "unused-a", {{"SERVER", a.outputs["server"]}}).ok());
  EXPECT_EQ(StateOf(a.outputs["microvm-id"]), "SUSPENDED");
  StepResult b = Step("start", "unused-b", {{"SERVER", a.outputs["server"]}});
  ASSERT_TRUE(b.ok()) << b.Describe();
  EXPECT_EQ(b.outputs["microvm-id"], a.outputs["microvm-id"]);
  EXPECT_EQ(Job(b.outputs["label"], {"echo resumed"}).conclusion, "success");
  ASSERT_TRUE(Step("stop", "unused-b", {{"SERVER", b.outputs["server"]}}).ok());
  ASSERT_TRUE(Step("stop", "unused-teardown", {{"MICROVM_ID", a.outputs["microvm-id"]}}).ok());
  ExpectNothingLeft();
}

TEST_F(ActionEndToEnd, StopWithAHandleOfAnotherRegionOrRepositoryFailsClearly) {
  StepResult a = Step("start", "scope", {{"SERVER", "scoped"}});
  ASSERT_TRUE(a.ok()) << a.Describe();
  const std::string handle = a.outputs["server"];
  const size_t before = RequestLogLines();
  StepResult region = Step("stop", "scope", {{"SERVER", handle}}, {{"AWS_REGION", "eu-west-1"}});
  EXPECT_FALSE(region.ok());
  EXPECT_NE(region.error.find("eu-west-1"), std::string::npos) << region.error;
  StepResult repo = Step("stop", "scope", {{"SERVER", handle}}, {{"GITHUB_REPOSITORY_ID", "2"}});
  EXPECT_FALSE(repo.ok());
  EXPECT_NE(repo.error.find("another repository"), std::string::npos) << repo.error;
  ExpectNoLifecycleCallSince(before);
  EXPECT_EQ(StateOf(a.outputs["microvm-id"]), "RUNNING");
  ASSERT_TRUE(Step("stop", "scope-teardown",
                   {{"MICROVM_ID", a.outputs["microvm-id"]}, {"RUNNER_ID", a.outputs["runner-id"]}})
                  .ok());
  ExpectNothingLeft();
}

// The MicroVMs emulator reports RUNNING 1.5 s before it calls /run or /resume in the VM.
class RunningBeforeHook : public ActionEndToEnd {
 protected:
  void ConfigureStack(LocalStack& stack) override {
    stack.AddMicrovmsArgs({"--running-before-hook-ms", "1500"});
  }
  // Ingress answers from the VM's control endpoint, from request-log line `from` on.
  std::vector<int> ControlAnswersSince(size_t from) {
    std::vector<int> out;
    std::istringstream in(ReadWholeFile(stack_->request_log()));
    std::string line;
    for (size_t n = 0; std::getline(in, line); ++n) {
      json j = json::parse(line, nullptr, false);
      if (n >= from && j.is_object() && j.value("kind", "") == "ingress" &&
          j.value("path", "") == "/v1/runner/start") {
        out.push_back(j.value("status", 0));
      }
    }
    return out;
  }
};

TEST_F(RunningBeforeHook, ControlDeliveryWaitsOutTheHookAfterRunAndResume) {
  StepResult first = Step("start", "race-first", {{"SERVER", "racy"}});
  ASSERT_TRUE(first.ok()) << first.Describe();
  std::vector<int> answers = ControlAnswersSince(0);
  ASSERT_FALSE(answers.empty());
  EXPECT_NE(answers.front() / 100, 2) << "the race was not met: RUNNING came after /run";
  EXPECT_EQ(answers.back() / 100, 2);
  // Its runner takes a job and exits, so the supervisor is IDLE and suspends cleanly.
  EXPECT_EQ(Job(first.outputs["label"], {"echo before the suspend"}).conclusion, "success");
  ASSERT_TRUE(Step("stop", "race-first", {{"SERVER", first.outputs["server"]}}).ok());

  const size_t before = RequestLogLines();
  StepResult second = Step("start", "race-second", {{"SERVER", first.outputs["server"]}});
  ASSERT_TRUE(second.ok()) << second.Describe();
  answers = ControlAnswersSince(before);
  ASSERT_FALSE(answers.empty());
  EXPECT_NE(answers.front() / 100, 2) << "the race was not met: RUNNING came after /resume";
  JobResult job = Job(second.outputs["label"], {"echo after the race"});
  EXPECT_EQ(job.conclusion, "success");
  ASSERT_TRUE(Step("stop", "race-second", {{"SERVER", second.outputs["server"]}}).ok());
  ASSERT_TRUE(Step("stop", "race-teardown", {{"MICROVM_ID", first.outputs["microvm-id"]}}).ok());
  ExpectNothingLeft();
}

}  // namespace
}  // namespace mvr::testbed
