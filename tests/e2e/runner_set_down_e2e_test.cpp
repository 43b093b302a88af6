// Work that arrived while the runner set was down (issue 30, item 2), end to end at organisation
// scope: `mvr serve` is killed with SIGKILL, 20 jobs are queued meanwhile over two repositories
// of the organisation (one the set has never launched for), and the GitHub emulator records each
// `queued` delivery as failed, since nothing listens. GitHub never redelivers and the test sends
// nothing either: after the restart the janitor reads the organisation hook's failed deliveries,
// scans the queued runs of every repository the set can see, and all 20 jobs complete.
#include <csignal>

#include "runner_set_e2e_fixture.h"

namespace mvr::testbed {
namespace {

constexpr char kOrganization[] = "demo";
constexpr char kUnseenRepository[] = "demo/unseen";

class RunnerSetDownWhileQueued : public RunnerSetEndToEnd {
 protected:
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    UseShortJanitor(c, 1);
    UseOrganization(c, kOrganization);
    c["github"]["hookId"] = 1;  // the emulator's one webhook
    c["queue"]["visibilityTimeoutSeconds"] = 10;
    return c;
  }
  void ConfigureStack(LocalStack& stack) override {
    AddSlowImage(stack);
    stack.AddGithubArgs({"--org", kOrganization, "--repo", kUnseenRepository});
  }
  int64_t QueueJobIn(const std::string& repository) {
    return RunnerSetEndToEnd::QueueJobIn(repository, {"self-hosted", kClassLabel});
  }
  int OrgRunners() {
    auto listed = workflow_->GitHub(
        "GET", std::string("/orgs/") + kOrganization + "/actions/runners?per_page=100");
    return listed.ok() ? listed->value("total_count", -1) : -1;
  }
};

TEST_F(RunnerSetDownWhileQueued, TwentyJobsQueuedWhileServeWasKilledAllCompleteAfterTheRestart) {
  process::ExitStatus killed = StopServe(SIGKILL);
  EXPECT_TRUE(killed.signaled);
  std::vector<int64_t> jobs;
  for (int i = 0; i < 20; ++i) {
    jobs.push_back(QueueJobIn(i % 2 == 0 ? std::string(kDemoRepository) : kUnseenRepository));
  }
  // GitHub's record: each queued delivery attempted and failed (nothing listened).
  ASSERT_TRUE(Eventually(
      [&] {
        for (int64_t id : jobs) {
          auto d = QueuedDeliveries(id);
          if (d.empty() || d[0].value("outcome", "") == "pending") return false;
        }
        return true;
      },
      std::chrono::seconds(30)));
  for (int64_t id : jobs) EXPECT_EQ(QueuedDeliveries(id)[0].value("outcome", ""), "failed");
  auto failed = workflow_->GitHub(
      "GET", std::string("/orgs/") + kOrganization + "/hooks/1/deliveries?per_page=100");
  ASSERT_TRUE(failed.ok()) << failed.status().ToString();
  ASSERT_TRUE(failed->is_array());
  EXPECT_GE(failed->size(), 20u);
  for (const json& d : *failed) EXPECT_EQ(d.value("status_code", -1), 0);

  StartServe();
  ASSERT_TRUE(Eventually(
      [&] {
        for (int64_t id : jobs) {
          if (!Completed(id)) return false;
        }
        return true;
      },
      std::chrono::seconds(120)));
  int succeeded = 0;
  for (int64_t id : jobs) succeeded += Job(id).value("conclusion", "") == "success";
  EXPECT_EQ(succeeded, 20);
  // No webhook was sent again: one queued delivery per job, none a redelivery.
  for (int64_t id : jobs) {
    const std::vector<json> sent = QueuedDeliveries(id);
    EXPECT_EQ(sent.size(), 1u);
    if (!sent.empty()) {
      EXPECT_FALSE(sent[0].value("redelivery", true));
    }
  }
  EXPECT_GE(Metric("janitor_deliveries_failed"), 20);
  EXPECT_GE(Metric("janitor_repositories_scanned"), 2);
  EXPECT_GE(Metric("janitor_launches_recovered"), 20);
  EXPECT_TRUE(Eventually([&] { return OrgRunners() == 0; }, std::chrono::seconds(30)))
      << OrgRunners() << " organisation runners left";
  ExpectNothingLeft();
}

}  // namespace
}  // namespace mvr::testbed
