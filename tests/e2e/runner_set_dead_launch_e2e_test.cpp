// A launch that dies between its runner's delivery and its commit (issue 53, item 3), end to end
// with real processes. The MicroVMs emulator holds its answer to /v1/runner/start
// (ingressAnswerDelayMs), so `mvr serve` is killed with SIGKILL once the runner it delivered runs
// the job and before the launch commits; then it is restarted. The job is not killed: the busy
// runner's VM is adopted (its mapping row written: by the janitor for a cold launch, by the
// warm-pool sweeper for a warm one), the job completes, its terminate intent ends the VM, and
// nothing is left: no VM of the job, no runner, no mapping row.
#include <csignal>
#include <fstream>
#include <string>

#include "runner_set_e2e_fixture.h"

namespace mvr::testbed {
namespace {

// Longer than the runner takes to start and take its job: the answer reaches a dead `mvr serve`.
constexpr int kHeldDeliveryMs = 8000;
// The dead launch's claim is settled once this old (launchTimeoutSeconds, no shorter), and the
// job outlasts that and a sweep after the restart by a few seconds.
constexpr int kTakeoverSeconds = 6;
constexpr char kJobStep[] = "sleep 10";
// The line the janitor (cold) and the warm-pool sweeper (warm) log when they adopt.
constexpr char kAdoptedLine[] = "died before its commit runs a job; adopted, its VM kept";

class RunnerSetDeadLaunch : public RunnerSetEndToEnd {
 protected:
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    c["launcher"]["launchTimeoutSeconds"] = kTakeoverSeconds;
    c["launcher"]["claimTakeoverSeconds"] = kTakeoverSeconds;
    c["janitor"] = {{"intervalSeconds", 1}, {"strikes", 2}, {"graceSeconds", 2}};
    if (warm_) UseWarmPoolOfOne(c);
    return c;
  }
  void ConfigureStack(LocalStack& stack) override {
    const std::string file = stack.dir() + "-microvms.json";
    std::ofstream(file) << json{{"ingressAnswerDelayMs", {{"/v1/runner/start", kHeldDeliveryMs}}}};
    stack.AddMicrovmsArgs({"--config", file});
  }
  std::string ServeLog() const { return ReadWholeFile(dir_ + "/serve.log"); }

  // Queues a job; once its runner runs it (the launch's delivery still unanswered, nothing
  // committed) kills `mvr serve` with SIGKILL and restarts it; then checks that the runner was
  // adopted on the `path` ("cold", "warm") and that the job completed, its VM ended by its
  // terminate intent.
  void ExpectDeadLaunchsBusyRunnerAdopted(const std::string& path) {
    const int64_t id = QueueJob({kJobStep});
    ASSERT_GT(id, 0);
    ASSERT_TRUE(Eventually([&] { return Job(id).value("status", "") == "in_progress"; },
                           std::chrono::seconds(20)))
        << Job(id).dump();
    int64_t launched = -1;  // -1 while /metrics does not answer
    ASSERT_TRUE(
        Eventually([&] { return (launched = Metric("launched")) >= 0; }, std::chrono::seconds(5)));
    ASSERT_EQ(launched, 0) << "the launch committed: the delivery was not held";
    ASSERT_TRUE(StopServe(SIGKILL).signaled);
    const std::string runner = Job(id).value("runner_name", "");
    EXPECT_EQ(runner.rfind("mvr-e2e_" + std::to_string(id) + "-", 0), 0u) << runner;
    StartServe();

    EXPECT_TRUE(Eventually([&] { return ServeLog().find(kAdoptedLine) != std::string::npos; },
                           std::chrono::seconds(20)))
        << "the busy runner of the dead launch was not adopted";
    ASSERT_TRUE(Eventually([&] { return Completed(id); }, std::chrono::seconds(30)));
    EXPECT_EQ(Job(id).value("conclusion", ""), "success") << Job(id).dump();
    EXPECT_EQ(Job(id).value("runner_name", ""), runner);
    // The completed webhook's terminate intent found the adopted mapping row, ended its VM and
    // deleted the row (counted only then).
    EXPECT_TRUE(Eventually([&] { return Metric("terminated") == 1; }, std::chrono::seconds(15)))
        << "the terminate intent found no mapping row for " << runner;
    EXPECT_EQ(Metric("janitor_orphans_terminated"), 0);
    EXPECT_EQ(Metric("janitor_vms_terminated"), 0);
    // Asked once, so gathered now: no job in flight, the job finished on its path.
    const json status = ServeStatus();
    EXPECT_TRUE(status.value("jobsInFlight", json::array()).empty()) << status.dump(2);
    bool finished = false;
    for (const json& j : status.value("finishedJobs", json::array())) {
      if (j.value("jobId", int64_t{0}) != id) continue;
      finished = true;
      EXPECT_EQ(j.value("path", ""), path) << j.dump();
      EXPECT_EQ(j.value("runnerName", ""), runner) << j.dump();
      EXPECT_EQ(j.value("conclusion", ""), "success") << j.dump();
    }
    EXPECT_TRUE(finished) << status.dump(2);
    EXPECT_TRUE(Eventually([&] { return CountVms("RUNNING") == 0 && Runners().empty(); },
                           std::chrono::seconds(20)))
        << CountVms("RUNNING") << " VMs running, " << Runners().size() << " runners registered";
  }

  bool warm_ = false;
};

TEST_F(RunnerSetDeadLaunch, ColdLaunchKilledAfterDeliveryHasItsBusyRunnerAdoptedNotKilled) {
  ASSERT_NO_FATAL_FAILURE(ExpectDeadLaunchsBusyRunnerAdopted("cold"));
  EXPECT_EQ(CountOperation("RunMicrovm"), 1);
  ExpectNothingLeft();
}

class RunnerSetDeadWarmLaunch : public RunnerSetDeadLaunch {
 protected:
  RunnerSetDeadWarmLaunch() { warm_ = true; }
  // The class's suspended pool members as GET /status shows them.
  int SuspendedMembers() {
    json s = ServeStatus();
    if (!s.contains("classes") || s["classes"].empty()) return -1;
    return s["classes"][0]["pool"]["members"].value("suspended", 0);
  }
};

TEST_F(RunnerSetDeadWarmLaunch, WarmLaunchKilledAfterDeliveryHasItsBusyRunnerAdoptedNotKilled) {
  // The launch finds a member the pool records as ready.
  ASSERT_TRUE(Eventually([&] { return SuspendedMembers() == 1; }, std::chrono::seconds(40)))
      << ServeStatus().dump();
  ASSERT_NO_FATAL_FAILURE(ExpectDeadLaunchsBusyRunnerAdopted("warm"));
  EXPECT_EQ(CountOperation("ResumeMicrovm"), 1) << "the job's VM is the resumed member";
}

}  // namespace
}  // namespace mvr::testbed
