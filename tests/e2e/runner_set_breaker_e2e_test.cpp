// Issue 55, item 4, end to end through `mvr serve` and both emulators: a class whose VMs keep
// failing to boot (the MicroVMs emulator's bootFailuresByImage: the class image's first 3 VMs)
// is paused by its circuit breaker. /status, /metrics and `mvr status` say so; its jobs are
// deferred, not dropped; no VM is launched for it while paused, a `kill -9` and a start keep the
// pause; once the pause ends one probe launches (its VM fails: paused again, still one VM), then
// the next probe boots, the class closes and every deferred job runs; nothing is left behind.
#include "base/time_format.h"
#include "runner_set_e2e_fixture.h"

namespace mvr::testbed {
namespace {

constexpr int kPauseSeconds = 5;

class RunnerSetBreaker : public RunnerSetEndToEnd {
 protected:
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    c["classes"][0]["circuitBreaker"] = {
        {"failures", 2}, {"windowSeconds", 60}, {"pauseSeconds", kPauseSeconds}};
    c["launcher"]["launchTimeoutSeconds"] = 10;
    return c;
  }
  void ConfigureStack(LocalStack& stack) override {
    std::ofstream(stack.dir() + "-microvms.json")
        << json{{"bootFailuresByImage", {{kDemoImage, 3}}}}.dump();
    stack.AddMicrovmsArgs({"--config", stack.dir() + "-microvms.json"});
  }
  // The class's breaker as /status shows it: {"circuitBreaker", "pausedUntilMs"} (or {}).
  json Breaker() {
    const json s = ServeStatus();
    for (const json& c : s.value("classes", json::array())) {
      if (c.value("label", "") == kClassLabel) return c.value("health", json::object());
    }
    return json::object();
  }
  int64_t PausedUntilMs() { return Breaker().value("pausedUntilMs", int64_t{0}); }
  std::string MetricsText() {
    http::HttpRequest req;
    req.url = StatusUrl() + "/metrics";
    auto res = http_.Send(req);
    return res.ok() ? res->body : "";
  }
  // The times of the RunMicrovm calls the emulator served (its request log), oldest first.
  std::vector<TimePoint> RunMicrovmTimes() {
    std::vector<TimePoint> out;
    std::istringstream in(ReadWholeFile(stack_->request_log()));
    for (std::string line; std::getline(in, line);) {
      json j = json::parse(line, nullptr, false);
      if (!j.is_object() || j.value("operation", "") != "RunMicrovm") continue;
      if (auto t = ParseRfc3339(j.value("ts", "")); t.ok()) out.push_back(*t);
    }
    return out;
  }
  std::string MvrStatus() {
    process::ProcessSpec spec;
    spec.argv = {mvr_, "status", "--config", dir_ + "/serve.json"};
    spec.output_path = dir_ + "/status.txt";
    auto pid = processes_.Spawn(spec);
    if (!pid.ok()) return "";
    (void)processes_.Wait(*pid);
    return ReadWholeFile(spec.output_path);
  }
};

TEST_F(RunnerSetBreaker, AClassWhoseVmsKeepFailingPausesProbesOnceAndRunsEveryDeferredJob) {
  // One job first, so that its launches fail one after another: its first VM and its retry's
  // fail while they boot, and the class is paused with exactly two VMs launched.
  std::vector<int64_t> jobs = {QueueJob({"true"})};
  ASSERT_TRUE(Eventually([&] { return PausedUntilMs() > 0; }, std::chrono::seconds(30)))
      << ReadWholeFile(dir_ + "/serve.log");
  const int64_t until = PausedUntilMs();
  EXPECT_EQ(Breaker().value("circuitBreaker", ""), "open");
  EXPECT_EQ(CountOperation("RunMicrovm"), 2);
  const std::string metrics = MetricsText();
  EXPECT_NE(metrics.find("mvr_runnerset_class_paused{class=\"mvr-small\"} 1"), std::string::npos)
      << metrics;
  EXPECT_NE(MvrStatus().find("PAUSED by its circuit breaker"), std::string::npos)
      << ReadWholeFile(dir_ + "/status.txt");
  for (int i = 0; i < 4; ++i) jobs.push_back(QueueJob({"true"}));
  // Killed while paused and started again: the pause is in the store.
  // (Their webhooks answered: their intents are in the set's queue, which survives the kill.)
  ASSERT_TRUE(Eventually(
      [&] {
        for (size_t i = 1; i < jobs.size(); ++i) {
          std::vector<json> d = QueuedDeliveries(jobs[i]);
          if (d.empty() || d[0].value("outcome", "") != "delivered") return false;
        }
        return true;
      },
      std::chrono::seconds(10)));
  StopServe(SIGKILL);
  ASSERT_NO_FATAL_FAILURE(StartServe());
  EXPECT_TRUE(Eventually([&] { return PausedUntilMs() == until; }, std::chrono::seconds(2)))
      << "the restarted set keeps the pause: " << Breaker().dump();
  // No VM for the paused class until its pause ends.
  while (real_.clock.Now() < TimePoint(Duration(until))) {
    EXPECT_EQ(CountOperation("RunMicrovm"), 2) << "a VM launched while paused";
    real_.sleeper.Sleep(Duration(200));
  }
  // Half-open: one probe (the image's third VM, which fails too) pauses it again.
  ASSERT_TRUE(Eventually([&] { return PausedUntilMs() > until; }, std::chrono::seconds(20)))
      << ReadWholeFile(dir_ + "/serve.log");
  const int64_t again = PausedUntilMs();
  while (real_.clock.Now() < TimePoint(Duration(again))) {
    EXPECT_EQ(CountOperation("RunMicrovm"), 3) << "one probe only, then paused again";
    real_.sleeper.Sleep(Duration(200));
  }
  // The next probe boots: the class closes and every job runs.
  ASSERT_TRUE(Eventually(
      [&] {
        for (int64_t job : jobs) {
          if (!Completed(job)) return false;
        }
        return true;
      },
      std::chrono::seconds(60)))
      << ReadWholeFile(dir_ + "/serve.log");
  for (int64_t job : jobs) EXPECT_EQ(Job(job).value("conclusion", ""), "success") << job;
  EXPECT_EQ(CountOperation("RunMicrovm"), 3 + 5) << "three failed boots and one VM per job";
  const std::vector<TimePoint> runs = RunMicrovmTimes();
  ASSERT_EQ(runs.size(), 8u);
  EXPECT_GE(runs[3], TimePoint(Duration(again))) << "the fourth VM is the second pause's probe";
  EXPECT_TRUE(Eventually([&] { return Breaker().value("circuitBreaker", "") == "closed"; },
                         std::chrono::seconds(15)))
      << Breaker().dump();
  EXPECT_NE(MetricsText().find("mvr_runnerset_class_paused{class=\"mvr-small\"} 0"),
            std::string::npos);
  const std::string log = ReadWholeFile(dir_ + "/serve.log");
  EXPECT_NE(log.find("class paused by its circuit breaker: its VMs keep failing"),
            std::string::npos);
  ExpectNothingLeft();
}

}  // namespace
}  // namespace mvr::testbed
