// Hot pools end to end against both emulators and a real `mvr serve`: the sweeper boots a VM,
// registers a runner with the class label, delivers it to the real supervisor, suspends the VM
// once GitHub lists the runner online (the supervisor freezes a runner that has taken no job),
// and marks it ready once GitHub lists it offline; a queued job then resumes it, its runner
// reconnects and takes the job with nothing registered or delivered, and the pool refills; the
// janitor (on a short period) leaves the parked runner alone.
#include "runner_set_e2e_fixture.h"

namespace mvr::testbed {
namespace {

class RunnerSetHotPool : public RunnerSetEndToEnd {
 protected:
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    UseHotPoolOfOne(c);
    return c;
  }
  void ConfigureStack(LocalStack& stack) override { UseQuicklyOfflineRunners(stack); }

  // The class's hot members in `state` as GET /status shows them.
  int HotMembers(const std::string& state) {
    json s = ServeStatus();
    if (!s.contains("classes") || s["classes"].empty()) return -1;
    return s["classes"][0]["pool"]["hotMembers"].value(state, 0);
  }
  void AwaitPoolRecorded() override {
    EXPECT_TRUE(Eventually([&] { return HotMembers("suspended") == 1; }, std::chrono::seconds(10)))
        << ServeStatus().dump();
  }
};

TEST_F(RunnerSetHotPool, ClassServesAJobByResumingAHotVmAndThePoolRefills) {
  ExpectHotPoolServesAJobByResumingAndRefills();
  // GET /status shows the same pool.
  EXPECT_EQ(HotMembers("suspended"), 1) << ServeStatus().dump();
  EXPECT_EQ(ServeStatus()["classes"][0]["pool"]["hotTarget"], 1);
}

// Issue 55: GitHub collects a parked runner's registration (here 5 s after its last poll, where
// GitHub takes minutes to an hour). The stale member is recycled, never served, and a job queued
// once its runner is gone still runs, on a runner that has a registration.
class RunnerSetHotPoolExpiry : public RunnerSetHotPool {
 protected:
  void ConfigureStack(LocalStack& stack) override {
    UseQuicklyOfflineRunners(stack);
    stack.AddGithubArgs({"--offline-registration-expiry-seconds", "5"});
  }
  bool Listed(const std::string& name) {
    for (const json& r : Runners()) {
      if (r.value("name", "") == name) return true;
    }
    return false;
  }
};

TEST_F(RunnerSetHotPoolExpiry, AJobQueuedAfterTheParkedRunnersRegistrationExpiredStillRuns) {
  ASSERT_TRUE(Eventually([&] { return OneHotMemberParked(); }, std::chrono::seconds(45)));
  const std::string stale = Runners().at(0).value("name", "");
  ASSERT_TRUE(Eventually([&] { return !Listed(stale); }, std::chrono::seconds(20)))
      << "GitHub still lists " << stale;
  const int64_t id = QueueJob({"echo on $RUNNER_NAME"});
  ASSERT_TRUE(Eventually([&] { return Completed(id); }, std::chrono::seconds(60)))
      << Job(id).dump();
  json job = Job(id);
  EXPECT_EQ(job.value("conclusion", ""), "success");
  EXPECT_NE(job.value("runner_name", ""), stale) << "a runner without a registration ran nothing";
  EXPECT_GE(CountOperation("TerminateMicrovm"), 1) << "the stale member was recycled";
}

}  // namespace
}  // namespace mvr::testbed
