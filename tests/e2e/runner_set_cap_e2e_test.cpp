// Issue 56, item 2: the concurrency cap costs no ListMicrovms call per launch. AWS (and the
// emulator, by default) keeps a TERMINATED VM in ListMicrovms for a day, 50 a page, so counting
// the cap by a listing per launch cost a call per 50 VMs of the last day on every launch. After a
// burst of 60 jobs through `mvr serve`, a second burst of 30 makes at most 0.2 ListMicrovms calls
// a launch, counted from the MicroVMs emulator's own request log (the janitor's sweeps included).
#include "runner_set_e2e_fixture.h"

namespace mvr::testbed {
namespace {

class RunnerSetCapCost : public RunnerSetEndToEnd {
 protected:
  // The cap does not bind here, and RunMicrovm is allowed 50 a second (the emulator's knob and the
  // launcher's pace), so 90 jobs take seconds, not the platform's 18 s at 5 a second.
  RunnerSetCapCost() { max_concurrent_vms_ = 100; }
  void ConfigureStack(LocalStack& stack) override {
    stack.AddMicrovmsArgs({"--run-rate", "50", "--run-burst", "50"});
  }
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    c["launcher"]["runMicrovmPerSecond"] = 50;
    c["launcher"]["concurrency"] = 30;
    return c;
  }
  void Burst(int jobs) {
    std::vector<int64_t> ids;
    for (int i = 0; i < jobs; ++i) ids.push_back(QueueJob({"true"}));
    auto all_done = [&] {
      for (int64_t id : ids) {
        if (!Completed(id)) return false;
      }
      return true;
    };
    // (Asked of GitHub's emulator: the test's own ListMicrovms calls would be counted.)
    ASSERT_TRUE(Eventually(all_done, std::chrono::seconds(180)));
  }
  // Every VM has ended (TERMINATED VMs stay listed: the next burst pages past them).
  void AllVmsEnded() {
    ASSERT_TRUE(
        Eventually([&] { return workflow_->CountLeftovers().vms == 0; }, std::chrono::seconds(60)));
  }
};

TEST_F(RunnerSetCapCost, ASecondBurstOfThirtyMakesAtMostSixListMicrovmsCalls) {
  ASSERT_NO_FATAL_FAILURE(Burst(60));
  ASSERT_NO_FATAL_FAILURE(AllVmsEnded());
  const int before = CountOperation("ListMicrovms");
  ASSERT_NO_FATAL_FAILURE(Burst(30));
  const int calls = CountOperation("ListMicrovms") - before;
  ASSERT_NO_FATAL_FAILURE(AllVmsEnded());
  std::printf("ListMicrovms: %d calls up to the second burst (with the test's own), %d during it\n",
              before, calls);
  EXPECT_LE(calls, 6) << "more than 0.2 ListMicrovms calls per launch";
  EXPECT_EQ(CountVms("TERMINATED"), 90) << "the emulator keeps the TERMINATED VMs listed";
  EXPECT_EQ(Metric("launched"), 90);
  EXPECT_EQ(Metric("failed"), 0);
  ExpectNothingLeft();
}

}  // namespace
}  // namespace mvr::testbed
