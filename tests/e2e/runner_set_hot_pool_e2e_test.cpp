// Hot pools end to end against both emulators and a real `mvr serve`: the sweeper boots a VM,
// registers a runner with the class label, delivers it to the real supervisor, suspends the VM
// once GitHub lists the runner online (the supervisor freezes a runner that has taken no job),
// and marks it ready once GitHub lists it offline; a queued job then resumes it, its runner
// reconnects and takes the job with nothing registered or delivered, and the pool refills; the
// janitor (on a short period) leaves the parked runner alone.
#include "runner_set_e2e_fixture.h"

namespace mvr::demo {
namespace {

class RunnerSetHotPool : public RunnerSetEndToEnd {
 protected:
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    c["classes"][0]["hotPoolSize"] = 1;
    c["warmPool"] = {{"intervalSeconds", 1}};
    c["janitor"] = {{"intervalSeconds", 1}, {"strikes", 2}, {"graceSeconds", 2}};
    return c;
  }
  void ConfigureStack(LocalStack& stack) override {
    // GitHub shows a silent runner offline after about a minute; the test does not wait that.
    stack.AddGithubArgs({"--runner-offline-after-seconds", "2"});
  }

  // The class's hot members in `state` as GET /status shows them.
  int HotMembers(const std::string& state) {
    json s = ServeStatus();
    if (!s.contains("classes") || s["classes"].empty()) return -1;
    return s["classes"][0]["pool"]["hotMembers"].value(state, 0);
  }
  // The set's registered runners as the emulator lists them.
  std::vector<json> Runners() {
    std::vector<json> out;
    auto listed = workflow_->GitHub("GET", "/_emulator/runners");
    if (!listed.ok()) return out;
    for (const json& r : listed->value("runners", json::array())) out.push_back(r);
    return out;
  }
};

TEST_F(RunnerSetHotPool, ClassServesAJobByResumingAHotVmAndThePoolRefills) {
  ASSERT_TRUE(Eventually([&] { return HotMembers("suspended") == 1; }, std::chrono::seconds(45)))
      << ServeStatus().dump();
  EXPECT_EQ(ServeStatus()["classes"][0]["pool"]["hotTarget"], 1);
  EXPECT_EQ(CountOperation("RunMicrovm"), 1);
  EXPECT_EQ(CountOperation("SuspendMicrovm"), 1);
  // The parked runner: registered with the class label, offline while its VM is frozen.
  std::vector<json> runners = Runners();
  ASSERT_EQ(runners.size(), 1u);
  const std::string hot_runner = runners[0].value("name", "");
  EXPECT_EQ(hot_runner.rfind("mvr-e2e-hot-", 0), 0u) << hot_runner;
  EXPECT_EQ(runners[0].value("status", ""), "offline");
  EXPECT_FALSE(runners[0].value("busy", true));

  const int64_t id = QueueJob({"echo on $RUNNER_NAME"});
  ASSERT_TRUE(Eventually([&] { return Completed(id); }, std::chrono::seconds(40)));
  json job = Job(id);
  EXPECT_EQ(job.value("conclusion", ""), "success");
  EXPECT_EQ(job.value("runner_name", ""), hot_runner) << "the hot runner took the job";
  EXPECT_EQ(CountOperation("ResumeMicrovm"), 1) << "the job's VM is the resumed hot member";
  // The launch may still be waiting to see its VM RUNNING when a short job is already over.
  EXPECT_TRUE(Eventually([&] { return Metric("launched") == 1; }, std::chrono::seconds(20)));
  // The pool refills with a new hot member (and the used VM is terminated on completion).
  ASSERT_TRUE(Eventually([&] { return HotMembers("suspended") == 1; }, std::chrono::seconds(45)))
      << ServeStatus().dump();
  EXPECT_EQ(CountOperation("RunMicrovm"), 2) << "the job launched nothing cold";
  ASSERT_TRUE(Eventually([&] { return CountOperation("TerminateMicrovm") >= 1; },
                         std::chrono::seconds(20)));

  // Several janitor periods later the parked runner and its VM are still there, untouched.
  const int terminated = CountOperation("TerminateMicrovm");
  real_.sleeper.Sleep(Duration(5'000));
  EXPECT_EQ(HotMembers("suspended"), 1);
  EXPECT_EQ(CountOperation("TerminateMicrovm"), terminated) << "nothing of the pool was reaped";
  EXPECT_EQ(Metric("janitor_runners_removed"), 0);
  EXPECT_EQ(Metric("janitor_orphans_terminated"), 0);
  EXPECT_EQ(Runners().size(), 1u) << "only the new member's parked runner is registered";
}

}  // namespace
}  // namespace mvr::demo
