// The janitor and a job lost with its VM (issue 55, item 4) on the in-process platform: the job
// weighed is the one the runner ran, which GitHub may have handed it in place of the job it was
// launched for.
#include "janitor_fixture.h"

namespace mvr::runnerset::testing {
namespace {

class JanitorLostTest : public JanitorTest {
 protected:
  JanitorLostTest() {
    // GitHub fails a job whose runner is silent this long (the VM that ran it is gone).
    platform_.github_model_options.lost_runner_fails_job_after = Duration(150'000);
    platform_.Rebuild(mvr::testing::InProcessPlatform::DefaultOptions());
    config_.janitor.rerun_lost_jobs = true;
  }
  // Attempts GitHub holds of the run of job `job_id`.
  size_t AttemptsOf(int64_t job_id) {
    const int64_t run = JobOf(job_id).run_id;
    size_t n = 0;
    for (const emulate::github::Job& j : platform_.github_model->ListAllJobs()) {
      n += j.run_id == run;
    }
    return n;
  }
  // A job whose runner took it, and whose VM the platform ended 30 s into it; GitHub has failed
  // the job once its runner was silent for long enough.
  static std::string RunnerOf(int64_t job) {
    return "mvr-demo-" + std::to_string(job) + "-0a1b2c3d";
  }
  int64_t LoseAJobWithItsVm() {
    const int64_t job = QueueJob();
    const std::string name = RunnerOf(job);
    const Runner runner = OnlineRunner(name);
    platform_.Tick();
    const std::string vm = platform_.RunningVm();
    Launched(name, runner.id, vm, job);
    m_.clock.Advance(Duration(30'000));
    platform_.TerminateVm(vm);
    m_.clock.Advance(Duration(200'000));
    platform_.Tick();
    return job;
  }
};

// vm-lost seed 171: the runner launched for one job took another, its VM was lost under it, and
// the janitor weighed the job the runner was launched for (run elsewhere: "not lost"), removed the
// row, and the lost job was never re-run.
TEST_F(JanitorLostTest, AJobLostOnARunnerLaunchedForAnotherIsRerun) {
  const int64_t ran = QueueJob();
  const int64_t launched_for = ran + 1000;  // ran by another runner: GitHub has it no more
  const std::string name = "mvr-demo-" + std::to_string(launched_for) + "-0a1b2c3d";
  const Runner runner = OnlineRunner(name);
  platform_.Tick();
  ASSERT_EQ(JobOf(ran).runner_name, name) << "GitHub handed the runner the other job";
  const std::string vm = platform_.RunningVm();
  Launched(name, runner.id, vm, launched_for);
  ASSERT_TRUE(table_.RecordTook("octo/app", launched_for, name, "octo/app", ran).ok());
  m_.clock.Advance(Duration(30'000));
  platform_.TerminateVm(vm);  // lost half-way through the job
  m_.clock.Advance(Duration(200'000));
  platform_.Tick();
  ASSERT_EQ(JobOf(ran).conclusion, "failure") << "GitHub gave up on the silent runner";
  J().Sweep();
  EXPECT_EQ(AttemptsOf(ran), 2u) << "the job the runner ran is re-run";
  EXPECT_EQ(metrics_.GetJanitor("lost_jobs_rerun"), 1);
  EXPECT_FALSE(HasRow(name));
}

// The row's own job, when its runner took no other: weighed as before.
TEST_F(JanitorLostTest, AJobLostOnItsOwnRunnerIsRerun) {
  const int64_t job = LoseAJobWithItsVm();
  J().Sweep();
  EXPECT_EQ(AttemptsOf(job), 2u);
  EXPECT_EQ(metrics_.GetJanitor("lost_jobs_rerun"), 1);
}

// Issue 55, item 4: GitHub refuses the re-run for want of `actions: write` ("Resource not
// accessible by integration"). Asking again each sweep changes nothing: the refusal is counted
// and logged once, and the row goes.
TEST_F(JanitorLostTest, ARerunRefusedForWantOfActionsWriteIsCountedNotRetried) {
  const int64_t job = LoseAJobWithItsVm();
  // Refused once: a second request would reach GitHub and re-run the job.
  mvr::testing::RefusingApi::Refusal forbidden{"POST", "/rerun", 403, "",
                                               "Resource not accessible by integration"};
  forbidden.times = 1;
  platform_.github_api.refusals.push_back(forbidden);
  J().Sweep();
  EXPECT_EQ(metrics_.GetJanitor("lost_jobs_rerun_forbidden"), 1);
  EXPECT_FALSE(HasRow(RunnerOf(job))) << "not asked again each sweep";
  m_.clock.Advance(Duration(60'000));
  J().Sweep();
  EXPECT_EQ(AttemptsOf(job), 1u);
}

}  // namespace
}  // namespace mvr::runnerset::testing
