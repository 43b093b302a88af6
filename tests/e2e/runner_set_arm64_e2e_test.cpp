// ARM64 only, end to end (issue 52, item 6): Lambda MicroVMs are ARM64, so `mvr serve` never
// launches a VM for a job asking for x64, whether it names a class label or not; the status page,
// GET /status and /metrics say why; and the runner of an ARM64 job is registered with ARM64
// labels (self-hosted, linux, ARM64, the class label), never x64, so GitHub cannot hand it an x64
// job either. Nothing is left behind.
#include <set>
#include <sstream>

#include "runner_set_e2e_fixture.h"

namespace mvr::testbed {
namespace {

class RunnerSetArm64 : public RunnerSetEndToEnd {
 protected:
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    UseShortJanitor(c, 1);  // the janitor's recovery must not launch the x64 jobs either
    return c;
  }
  void ConfigureStack(LocalStack& stack) override { AddSlowImage(stack); }
  std::string Get(const std::string& path) {
    http::HttpRequest req;
    req.url = StatusUrl() + path;  // the status routes' own listener
    auto res = http_.Send(req);
    return res.ok() ? res->body : "";
  }
  // mvr_runnerset_webhook_decisions_total{decision="<decision>"} (-1 when absent).
  int64_t Decisions(const std::string& decision) {
    std::istringstream in(Get("/metrics"));
    const std::string key = "mvr_runnerset_webhook_decisions_total{decision=\"" + decision + "\"} ";
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(key, 0) == 0) return std::stoll(line.substr(key.size()));
    }
    return -1;
  }
  // The labels the set's one runner was registered with ({} while there is none).
  std::vector<std::string> RegisteredLabels() {
    for (const json& r : Runners()) {
      auto labels = r.value("registered_labels", std::vector<std::string>{});
      if (!labels.empty()) return labels;
    }
    return {};
  }
};

TEST_F(RunnerSetArm64, X64JobsGetNoVmAndTheStatusSaysWhyWhileAnArm64JobRunsOnArm64Labels) {
  // Queued first, so that GitHub (the emulator assigns the oldest job first) would hand them to
  // the ARM64 job's runner if its labels allowed it.
  const int64_t bare = QueueJobIn(kDemoRepository, {"self-hosted", "x64"}, {"echo never"});
  const int64_t named = QueueJobIn(kDemoRepository, {"self-hosted", "X64", kClassLabel});
  const int64_t arm =
      QueueJobIn(kDemoRepository, {"self-hosted", "Linux", "ARM64", kClassLabel}, {"sleep 3"});
  std::vector<std::string> registered;
  ASSERT_TRUE(Eventually(
      [&] {
        if (registered.empty()) registered = RegisteredLabels();
        return Completed(arm);
      },
      std::chrono::seconds(60)))
      << Job(arm).dump() << ReadWholeFile(dir_ + "/serve.log");
  EXPECT_EQ(Job(arm).value("conclusion", ""), "success");
  // What the set asked generate-jitconfig for (the emulator adds nothing to this list).
  EXPECT_EQ(registered, (std::vector<std::string>{"self-hosted", "linux", "ARM64", kClassLabel}));
  EXPECT_TRUE(
      Eventually([&] { return Decisions("ignored_not_arm64") == 2; }, std::chrono::seconds(10)))
      << Get("/metrics");
  // GET /status is gathered at most once per 5 s: a gathering after both refusals shows them.
  json status;
  std::set<int64_t> refused;
  EXPECT_TRUE(Eventually(
      [&] {
        status = json::parse(Get("/status"), nullptr, false);
        refused.clear();
        for (const json& r :
             status.is_object() ? status.value("refusedJobs", json::array()) : json::array()) {
          if (r.value("reason", "") == "not_arm64") refused.insert(r.value("jobId", int64_t{0}));
        }
        return refused == std::set<int64_t>{bare, named};
      },
      std::chrono::seconds(15)))
      << status.dump();
  const std::string page = Get("/");
  EXPECT_NE(page.find("Jobs refused: not ARM64 (2)"), std::string::npos) << page;
  // Several janitor sweeps later (one a second, a job stuck after 1 s), neither was launched.
  ASSERT_TRUE(AwaitCountersAdvance({{"janitor_sweeps", 4}}, std::chrono::seconds(30)));
  EXPECT_EQ(Job(bare).value("status", ""), "queued");
  EXPECT_EQ(Job(named).value("status", ""), "queued");
  EXPECT_EQ(Metric("launched"), 1) << "only the ARM64 job";
  ExpectNothingLeft();
}

}  // namespace
}  // namespace mvr::testbed
