// A runner version GitHub refuses, end to end (issue 30, item 5): `mvr serve` with a hot pool of
// one on mvr-small (its image bakes the stand-in runner's default version) and a fallbackClass
// mvr-new (its image bakes a newer runner). The GitHub emulator's minimum is raised past
// mvr-small's runner while its hot member is parked: a job resumes it, GitHub refuses the runner,
// the pool's refill starts a runner GitHub refuses too, and from then on `mvr status` and
// /metrics show mvr-small unhealthy, its pool is not refilled, and its jobs run on mvr-new.
#include "runner_set_e2e_fixture.h"

namespace mvr::testbed {
namespace {

constexpr char kNewLabel[] = "mvr-new";
constexpr char kNewVersion[] = "2.333.0";

class RunnerSetStaleVersion : public RunnerSetEndToEnd {
 protected:
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    UseHotPoolOfOne(c);
    c["janitor"]["stuckLaunchSeconds"] = 1;
    c["classes"][0]["fallbackClass"] = kNewLabel;
    c["classes"].push_back({{"label", kNewLabel}, {"image", kNewLabel}});
    return c;
  }
  void ConfigureStack(LocalStack& stack) override {
    UseQuicklyOfflineRunners(stack);
    stack.AddImage(kNewLabel, stack.StandInRunner() + " --version " + kNewVersion);
  }
  json SmallClass() {
    json s = ServeStatus();
    if (!s.contains("classes") || s["classes"].empty()) return json::object();
    return s["classes"][0];
  }
  int HotMembers(const std::string& state) {
    return SmallClass()
        .value("pool", json::object())
        .value("hotMembers", json::object())
        .value(state, 0);
  }
  std::string MetricsText() {
    http::HttpRequest req;
    req.url = StatusUrl() + "/metrics";
    auto res = http_.Send(req);
    return res.ok() ? res->body : "";
  }
};

TEST_F(RunnerSetStaleVersion, RefusedRunnerMakesTheClassUnhealthyStopsItsPoolAndJobsFallBack) {
  ASSERT_TRUE(Eventually([&] { return HotMembers("suspended") == 1; }, std::chrono::seconds(45)))
      << ServeStatus().dump();
  EXPECT_TRUE(SmallClass()["health"].value("healthy", false)) << SmallClass().dump();

  auto raised = workflow_->GitHub("POST", "/_emulator/faults",
                                  json{{"min_runner_version", kNewVersion}}.dump());
  ASSERT_TRUE(raised.ok()) << raised.status().ToString();
  const int64_t first = QueueJob({"echo on $RUNNER_NAME"});
  // The parked runner is refused once resumed, and so is the refill's: the set learns it.
  ASSERT_TRUE(Eventually([&] { return !SmallClass()["health"].value("healthy", true); },
                         std::chrono::seconds(60)))
      << ServeStatus().dump();
  json health = SmallClass()["health"];
  EXPECT_EQ(health.value("reason", ""), "runner_version_refused");
  EXPECT_EQ(health.value("runnerVersion", ""), "2.332.0");
  EXPECT_EQ(health.value("fallbackClass", ""), kNewLabel);
  const std::string metrics = MetricsText();
  EXPECT_NE(metrics.find("mvr_runnerset_class_healthy{class=\"mvr-small\",reason=\""
                         "runner_version_refused\"} 0"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("mvr_runnerset_class_healthy{class=\"mvr-new\",reason=\"\"} 1"),
            std::string::npos);

  // The first job, its runner refused, is launched again by the janitor, on mvr-new.
  ASSERT_TRUE(Eventually([&] { return Completed(first); }, std::chrono::seconds(60)))
      << Job(first).dump();
  EXPECT_EQ(Job(first).value("conclusion", ""), "success");
  const int64_t second = QueueJob({"true"});
  ASSERT_TRUE(Eventually([&] { return Completed(second); }, std::chrono::seconds(40)));
  EXPECT_EQ(Job(second).value("conclusion", ""), "success");

  // mvr-small's pool is not refilled from its image: several pool sweeps later, nothing booted.
  const int runs = CountOperation("RunMicrovm");
  ASSERT_TRUE(AwaitCountersAdvance({{"pool_sweeps", 3}}, std::chrono::seconds(30)));
  EXPECT_TRUE(SmallClass()["pool"]["hotMembers"].empty()) << SmallClass().dump();
  EXPECT_EQ(CountOperation("RunMicrovm"), runs) << "nothing booted while nothing is queued";
  // `mvr status` says so on the class's line.
  process::ProcessSpec spec;
  spec.argv = {mvr_, "status", "--config", dir_ + "/serve.json"};
  spec.output_path = dir_ + "/status.txt";
  auto pid = processes_.Spawn(spec);
  ASSERT_TRUE(pid.ok());
  auto exited = processes_.Wait(*pid);
  ASSERT_TRUE(exited.ok() && exited->ok()) << ReadWholeFile(spec.output_path);
  const std::string text = ReadWholeFile(spec.output_path);
  EXPECT_NE(text.find("UNHEALTHY: GitHub refuses its runner version 2.332.0"), std::string::npos)
      << text;
  EXPECT_NE(text.find("its jobs fall back to mvr-new"), std::string::npos) << text;
}

}  // namespace
}  // namespace mvr::testbed
