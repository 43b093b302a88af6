// Fleet controls end to end (issue 32, part 4): an organisation's `mvr serve` with
// github.allowedRepositories and a class of architecture x64. A job of a repository not allowed and
// a job asking for a label the class does not offer (gpu) are ignored at the webhook, with their
// reasons in /metrics, and the janitor's recovery (a sweep a second) does not launch them either; a
// job asking for the labels the class offers runs. Nothing is left behind.
#include <sstream>

#include "runner_set_e2e_fixture.h"

namespace mvr::demo {
namespace {

constexpr char kOrganization[] = "demo";
constexpr char kOtherRepository[] = "demo/other";

class RunnerSetFleetControls : public RunnerSetEndToEnd {
 protected:
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    UseShortJanitor(c, 1);
    UseOrganization(c, kOrganization);
    c["github"]["allowedRepositories"] = {"app"};  // demo/app, kDemoRepository
    c["classes"][0]["architecture"] = "x64";
    return c;
  }
  void ConfigureStack(LocalStack& stack) override {
    AddSlowImage(stack);
    stack.AddGithubArgs({"--org", kOrganization, "--repo", kOtherRepository});
  }
  // mvr_runnerset_webhook_decisions_total{decision="<decision>"} (-1 when absent).
  int64_t Decisions(const std::string& decision) {
    http::HttpRequest req;
    req.url = ServeUrl() + "/metrics";
    auto res = http_.Send(req);
    if (!res.ok()) return -1;
    std::istringstream in(res->body);
    const std::string key = "mvr_runnerset_webhook_decisions_total{decision=\"" + decision + "\"} ";
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(key, 0) == 0) return std::stoll(line.substr(key.size()));
    }
    return -1;
  }
};

TEST_F(RunnerSetFleetControls, JobsOfOtherRepositoriesOrAskingForLabelsNotOfferedAreNotLaunched) {
  const int64_t fits = QueueJobIn(kDemoRepository, {"self-hosted", "Linux", "X64", kClassLabel});
  ASSERT_TRUE(Eventually([&] { return Completed(fits); }, std::chrono::seconds(60)));
  EXPECT_EQ(Job(fits).value("conclusion", ""), "success");
  // Queued once that runner is gone: GitHub hands an organisation's runner any repository's job
  // whose labels it has (allowedRepositories says which jobs the set launches for, the runner
  // group's repository access which jobs its runners may take; docs/runner-set.md).
  const int64_t other = QueueJobIn(kOtherRepository, {"self-hosted", kClassLabel});
  const int64_t gpu = QueueJobIn(kDemoRepository, {"self-hosted", kClassLabel, "gpu"});
  EXPECT_TRUE(Eventually(
      [&] {
        return Decisions("ignored_repository_not_allowed") >= 1 &&
               Decisions("ignored_labels_not_offered") >= 1;
      },
      std::chrono::seconds(10)));
  // Several janitor sweeps later (one a second, stuck after 1 s), neither was launched.
  real_.sleeper.Sleep(Duration(5'000));
  EXPECT_EQ(Job(other).value("status", ""), "queued");
  EXPECT_EQ(Job(gpu).value("status", ""), "queued");
  EXPECT_EQ(Metric("launched"), 1) << "only the job the class takes";
  // The janitor re-queued neither (it may re-queue the one that runs, stuck after 1 s).
  const std::string log = ReadWholeFile(dir_ + "/serve.log");
  for (int64_t id : {other, gpu}) {
    EXPECT_EQ(log.find("\"job_id\":" + std::to_string(id) +
                       ",\"level\":\"info\",\"msg\":\"janitor: "
                       "re-launching"),
              std::string::npos)
        << "job " << id;
  }
  ExpectNothingLeft();
}

}  // namespace
}  // namespace mvr::demo
