// Issue 55, items 4 and 5, end to end through `mvr serve` and both emulators: a MicroVM lost while
// its job runs (terminated under it, as the platform does at its 8-hour limit) leaves the job to
// fail once GitHub gives up on the runner, and the set re-runs it once; a runner that wedges before
// reading its job (the GitHub emulator's `wedge_runner`: actions/runner #4598) is ended by the
// janitor and its job launched again, long before the idle reaping's grace.
#include "runner_set_e2e_fixture.h"

namespace mvr::testbed {
namespace {

class RunnerSetLost : public RunnerSetEndToEnd {
 protected:
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    UseShortJanitor(c, 1);
    // Only the features under test end a VM or launch a job again within the tests' waits.
    c["janitor"]["graceSeconds"] = 600;
    c["janitor"]["stuckLaunchSeconds"] = 600;
    c["janitor"]["rerunLostJobs"] = true;
    c["janitor"]["wedgedRunnerSeconds"] = 4;
    return c;
  }
  void ConfigureStack(LocalStack& stack) override {
    AddSlowImage(stack);  // UseShortJanitor's second class
    // Past the 15 s by which a lost job's failure must follow its VM's end (lost_job.h).
    stack.AddGithubArgs(
        {"--lost-runner-fails-job-seconds", "18", "--assignment-pickup-timeout-seconds", "2"});
  }
  // The MicroVMs the emulator lists RUNNING.
  std::vector<std::string> RunningVms() {
    std::vector<std::string> ids;
    http::HttpRequest req;
    req.url = stack_->microvms_url() + "/2025-09-09/microvms?maxResults=50";
    auto res = http_.Send(req);
    if (!res.ok() || res->status != 200) return ids;
    json j = json::parse(res->body, nullptr, false);
    if (!j.is_object()) return ids;
    for (const json& item : j.value("items", json::array())) {
      if (item.value("state", "") == "RUNNING") ids.push_back(item.value("microvmId", ""));
    }
    return ids;
  }
  // The jobs of `run_id`, every attempt.
  std::vector<json> RunJobs(int64_t run_id) {
    std::vector<json> out;
    auto all = workflow_->GitHub("GET", "/_emulator/jobs");
    if (!all.ok()) return out;
    const json& list = all->is_array() ? *all : all->value("jobs", json::array());
    for (const json& j : list) {
      if (j.value("run_id", int64_t{0}) == run_id) out.push_back(j);
    }
    return out;
  }
};

// The job's one step is shorter than the 18 s GitHub waits on a silent runner: the stand-in runner
// makes contact when a step starts and ends, not during one.
TEST_F(RunnerSetLost, AJobWhoseVmIsLostMidJobIsRerunOnceAndCompletes) {
  const int64_t job = QueueJob({"sleep 10"});
  ASSERT_TRUE(Eventually([&] { return Job(job).value("status", "") == "in_progress"; },
                         std::chrono::seconds(60)));
  std::vector<std::string> vms;
  ASSERT_TRUE(Eventually(
      [&] {
        vms = RunningVms();
        return vms.size() == 1;
      },
      std::chrono::seconds(10)));
  // The platform ends the VM under its job (TerminateMicrovm, as at the 8-hour limit).
  http::HttpRequest del;
  del.method = "DELETE";
  del.url = stack_->microvms_url() + "/2025-09-09/microvms/" + vms.front();
  auto ended = http_.Send(del);
  ASSERT_TRUE(ended.ok() && ended->status == 200) << (ended.ok() ? ended->body : "");
  ASSERT_TRUE(Eventually([&] { return Completed(job); }, std::chrono::seconds(60)));
  const json lost = Job(job);
  EXPECT_EQ(lost.value("conclusion", ""), "failure") << lost.dump();
  const int64_t run = lost.value("run_id", int64_t{0});
  // GitHub re-runs it as attempt 2 of its run, under a new id, and the set runs that.
  json rerun;
  ASSERT_TRUE(Eventually(
      [&] {
        for (const json& j : RunJobs(run)) {
          if (j.value("run_attempt", 0) == 2 && j.value("status", "") == "completed") rerun = j;
        }
        return !rerun.is_null();
      },
      std::chrono::seconds(90)))
      << ReadWholeFile(dir_ + "/serve.log");
  EXPECT_EQ(rerun.value("conclusion", ""), "success") << rerun.dump();
  EXPECT_EQ(RunJobs(run).size(), 2u) << "re-run once";
  EXPECT_EQ(Metric("janitor_lost_jobs_rerun"), 1);
  EXPECT_EQ(CountOperation("RunMicrovm"), 2);
  ExpectNothingLeft();
}

TEST_F(RunnerSetLost, AWedgedRunnerIsEndedAndItsJobLaunchedAgain) {
  json body = {{"repository", kDemoRepository},
               {"labels", {"self-hosted", kClassLabel}},
               {"steps", {"true"}},
               {"wedge_runner", true}};
  auto queued = workflow_->GitHub("POST", "/_emulator/jobs", body.dump());
  ASSERT_TRUE(queued.ok()) << queued.status().ToString();
  const int64_t job = queued->value("id", int64_t{0});
  ASSERT_TRUE(Eventually([&] { return Completed(job); }, std::chrono::seconds(60)))
      << ReadWholeFile(dir_ + "/serve.log");
  EXPECT_EQ(Job(job).value("conclusion", ""), "success");
  EXPECT_GE(Metric("janitor_wedged_runners_ended"), 1);
  EXPECT_EQ(Metric("janitor_wedged_jobs_relaunched"), 1);
  EXPECT_EQ(CountOperation("RunMicrovm"), 2) << "the wedged runner's VM and one more";
  ExpectNothingLeft();
}

}  // namespace
}  // namespace mvr::testbed
