// Issue 30, items 1 and 7, end to end on the emulators: runners that take another job than the one
// they were launched for (the GitHub emulator's `random` assignment, and a launch that hangs so
// that its job is taken by the next job's runner), and jobs that end with no `completed` webhook
// for the set (cancelled before any runner took them, or the delivery dropped).
#include <cstdio>
#include <fstream>

#include "runner_set_e2e_fixture.h"

namespace mvr::testbed {
namespace {

// A janitor slow enough that only the set's prompt reactions fit in the tests' waits: a sweep
// every 60 s that re-launches a job only once it has been queued 5 minutes, and strikes a VM only
// after 60 s. A launch gives up after 20 s.
class RunnerSetStolen : public RunnerSetEndToEnd {
 protected:
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    UseShortJanitor(c, interval_);
    c["janitor"]["graceSeconds"] = 60;
    c["janitor"]["stuckLaunchSeconds"] = 300;
    c["launcher"]["launchTimeoutSeconds"] = 20;
    c["launcher"]["claimTakeoverSeconds"] = 30;
    c["queue"]["visibilityTimeoutSeconds"] = 10;
    return c;
  }
  void ConfigureStack(LocalStack& stack) override {
    AddSlowImage(stack);
    if (hang_first_launch_) {
      std::ofstream(stack.dir() + "-microvms.json") << R"({"hangLaunches": 1})";
      stack.AddMicrovmsArgs({"--config", stack.dir() + "-microvms.json"});
    }
  }
  void Faults(const json& body) {
    auto set = workflow_->GitHub("POST", "/_emulator/faults", body.dump());
    ASSERT_TRUE(set.ok()) << set.status().ToString();
  }
  bool AllCompleted(const std::vector<int64_t>& jobs) {
    for (int64_t job : jobs) {
      if (!Completed(job)) return false;
    }
    return true;
  }
  int interval_ = 60;
  bool hang_first_launch_ = false;
};

// With a janitor of 2 s: a launch made for a job whose runner went elsewhere may find the job
// taken meanwhile by another job's runner; its idle VM is reaped once that job has ended.
class RunnerSetStolenRandom : public RunnerSetStolen {
 protected:
  RunnerSetStolenRandom() { interval_ = 2; }
};

TEST_F(RunnerSetStolenRandom, EveryJobCompletesWhenAnyIdleRunnerMayTakeAnyJob) {
  Faults({{"assignment", "random"}});
  std::vector<int64_t> jobs;
  for (int i = 0; i < 8; ++i) jobs.push_back(QueueJob({"sleep 1"}));
  ASSERT_TRUE(Eventually([&] { return AllCompleted(jobs); }, std::chrono::seconds(90)));
  int taken_elsewhere = 0;
  for (int64_t id : jobs) {
    const json job = Job(id);
    EXPECT_EQ(job.value("conclusion", ""), "success") << job.dump();
    const std::string runner = job.value("runner_name", "");
    taken_elsewhere += runner.find("_" + std::to_string(id) + "-") == std::string::npos;
  }
  // The figure for the log: how many jobs ran on a runner launched for another.
  std::printf("%d of %zu jobs ran on a runner launched for another job\n", taken_elsewhere,
              jobs.size());
  EXPECT_EQ(Metric("failed"), 0);
  ExpectNothingLeft();
}

// Job A's launch hangs (its VM never reaches RUNNING); job B's runner comes up and GitHub hands
// it A, the older job. B now waits with no runner coming: the `in_progress` webhook naming B's
// runner on A makes the set watch A's launch; once it outlasts the launch timeout, B gets a
// launch (released and launched again, or through A's own intent), long before the janitor's.
class RunnerSetStolenHung : public RunnerSetStolen {
 protected:
  RunnerSetStolenHung() { hang_first_launch_ = true; }
};

TEST_F(RunnerSetStolenHung, JobWhoseRunnerTookAnotherJobIsLaunchedAgainOnceTheOtherLaunchHangs) {
  const int64_t a = QueueJob({"sleep 2"});
  ASSERT_TRUE(
      Eventually([&] { return CountOperation("RunMicrovm") >= 1; }, std::chrono::seconds(10)));
  const TimePoint queued_b = real_.clock.Now();
  const int64_t b = QueueJob({"sleep 2"});
  ASSERT_TRUE(Eventually([&] { return Completed(a) && Completed(b); }, std::chrono::seconds(75)))
      << "A " << Job(a).dump() << "\nB " << Job(b).dump();
  const double took_s = static_cast<double>((real_.clock.Now() - queued_b).count()) / 1000.0;
  std::printf("B completed %.1f s after it was queued\n", took_s);
  EXPECT_EQ(Job(a).value("conclusion", ""), "success");
  EXPECT_EQ(Job(b).value("conclusion", ""), "success");
  EXPECT_NE(Job(a).value("runner_name", "").find("_" + std::to_string(b) + "-"), std::string::npos)
      << "A ran on the runner launched for B";
  // B's new runner comes from the taken intent (relaunched_taken) or, when A's launch failed at
  // its timeout first, from A's own intent coming back and following A to the waiting B; either
  // way not from the janitor, which would wait stuckLaunchSeconds (300 s here).
  EXPECT_LE(Metric("janitor_launches_recovered"), 0) << "absent (-1) or 0";
  ExpectNothingLeft();
}

// A job cancelled after its launch began and before its runner (4 s to start) took it: no
// `completed` webhook names a runner, and the emulator drops every `completed` delivery anyway.
// The janitor (a sweep every 2 s here, grace and strikes far longer) reaps the VM and removes the
// runner at its next sweep, because the jobs API says the job it was launched for has ended.
class RunnerSetLostCompleted : public RunnerSetStolen {
 protected:
  RunnerSetLostCompleted() { interval_ = 2; }
};

TEST_F(RunnerSetLostCompleted, CancelledJobsVmAndRunnerAreGoneWithinOneJanitorPeriod) {
  Faults({{"completed_webhook_loss", 1.0}});
  const int64_t id = QueueJob({"true"}, kSlowLabel);
  ASSERT_TRUE(Eventually([&] { return CountVms("RUNNING") == 1; }, std::chrono::seconds(20)));
  auto cancelled = workflow_->GitHub("POST", "/_emulator/jobs/" + std::to_string(id) + "/cancel");
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  ASSERT_EQ(Job(id).value("conclusion", ""), "cancelled");
  const TimePoint at = real_.clock.Now();
  Workflow::Leftovers left;
  ASSERT_TRUE(Eventually(
      [&] {
        left = workflow_->CountLeftovers();
        return left.vms == 0 && left.runners == 0;
      },
      std::chrono::seconds(12)))
      << left.vms << " VMs and " << left.runners << " runners left";
  std::printf("gone %.1f s after the cancel\n",
              static_cast<double>((real_.clock.Now() - at).count()) / 1000.0);
  // The sweep adds its counters once it ends.
  EXPECT_TRUE(
      Eventually([&] { return Metric("janitor_vms_terminated") == 1; }, std::chrono::seconds(5)))
      << Metric("janitor_vms_terminated");
}

TEST_F(RunnerSetLostCompleted, JobWhoseCompletedWebhookNeverComesLeavesNothingBehind) {
  Faults({{"completed_webhook_loss", 1.0}});
  const int64_t id = QueueJob({"sleep 1"});
  ASSERT_TRUE(Eventually([&] { return Completed(id); }, std::chrono::seconds(30)));
  EXPECT_EQ(Job(id).value("conclusion", ""), "success");
  Workflow::Leftovers left;
  ASSERT_TRUE(Eventually(
      [&] {
        left = workflow_->CountLeftovers();
        return left.vms == 0 && left.runners == 0;
      },
      std::chrono::seconds(12)))
      << left.vms << " VMs and " << left.runners << " runners left";
  EXPECT_EQ(Metric("terminated"), 0) << "no completed webhook reached the set";
}

}  // namespace
}  // namespace mvr::testbed
