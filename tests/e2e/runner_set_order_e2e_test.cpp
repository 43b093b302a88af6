// Issue 55, item 3, end to end through `mvr serve` and both emulators: a job behind an
// environment's approval (delivered queued, waiting, then queued again) gets no VM until it is
// approved; deliveries out of order (the GitHub emulator's reorder knob, and a job's deliveries
// redelivered completed-first) run every job once and launch nothing for a job that is over; and
// deliveries of another installation's repository are refused with a 2xx and counted.
#include "runner_set_e2e_fixture.h"

namespace mvr::testbed {
namespace {

class RunnerSetOrder : public RunnerSetEndToEnd {
 protected:
  void ConfigureStack(LocalStack& stack) override {
    stack.AddGithubArgs(
        {"--delivery-reorder", "0.5", "--reorder-delay-ms", "1500", "--foreign-deliveries", "0.5"});
  }
  // A job of the class that waits for an environment's approval; its id.
  int64_t GatedJob() {
    json body = {{"repository", kDemoRepository},
                 {"labels", {"self-hosted", kClassLabel}},
                 {"steps", {"true"}},
                 {"wait_for_environment", true}};
    auto job = workflow_->GitHub("POST", "/_emulator/jobs", body.dump());
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->value("id", int64_t{0}) : 0;
  }
  std::vector<json> Deliveries(int64_t job_id) {
    std::vector<json> out;
    auto all = workflow_->GitHub("GET", "/_emulator/deliveries");
    if (!all.ok()) return out;
    const json& list = all->is_array() ? *all : all->value("deliveries", json::array());
    for (const json& d : list) {
      if (d.value("job_id", int64_t{0}) == job_id) out.push_back(d);
    }
    return out;
  }
  bool AllDelivered(int64_t job_id, size_t count) {
    std::vector<json> ds = Deliveries(job_id);
    if (ds.size() < count) return false;
    for (const json& d : ds) {
      if (d.value("outcome", "") != "delivered" && d.value("outcome", "") != "dropped") {
        return false;
      }
    }
    return true;
  }
  int64_t Decisions(const std::string& decision) {
    http::HttpRequest req;
    req.url = StatusUrl() + "/metrics";
    auto res = http_.Send(req);
    if (!res.ok() || res->status != 200) return -1;
    const std::string key = "mvr_runnerset_webhook_decisions_total{decision=\"" + decision + "\"} ";
    const size_t at = res->body.find(key);
    return at == std::string::npos ? 0 : std::stoll(res->body.substr(at + key.size()));
  }
};

// Queued, then waiting: the set launches nothing while the job waits; once approved (queued
// again) it runs on one VM, which then goes.
TEST_F(RunnerSetOrder, AJobWaitingForApprovalGetsNoVmUntilApproved) {
  const int64_t job = GatedJob();
  ASSERT_TRUE(Eventually([&] { return AllDelivered(job, 2); }, std::chrono::seconds(20)));
  // Several of the launch's deferrals (deferSeconds 1) while GitHub says the job waits.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(CountOperation("RunMicrovm"), 0) << "a VM for a job waiting for its approval";
  EXPECT_EQ(workflow_->CountLeftovers().runners, 0) << "a runner for a waiting job";
  EXPECT_EQ(Job(job).value("status", ""), "waiting");
  ASSERT_TRUE(
      workflow_->GitHub("POST", "/_emulator/jobs/" + std::to_string(job) + "/approve").ok());
  ASSERT_TRUE(Eventually([&] { return Completed(job); }, std::chrono::seconds(60)));
  EXPECT_EQ(Job(job).value("conclusion", ""), "success");
  EXPECT_EQ(CountOperation("RunMicrovm"), 1);
  ExpectNothingLeft();
}

// Deliveries reordered and half of them copied as another installation's: every job runs once,
// the copies are refused with a 2xx (GitHub shows them delivered) and counted, and none launches.
TEST_F(RunnerSetOrder, ReorderedDeliveriesRunEveryJobOnceAndForeignOnesAreRefused) {
  std::vector<int64_t> jobs;
  for (int i = 0; i < 4; ++i) jobs.push_back(QueueJob({"sleep 1"}));
  ASSERT_TRUE(Eventually(
      [&] {
        for (int64_t id : jobs) {
          if (!Completed(id)) return false;
        }
        return true;
      },
      std::chrono::seconds(90)));
  for (int64_t id : jobs) EXPECT_EQ(Job(id).value("conclusion", ""), "success");
  EXPECT_EQ(CountOperation("RunMicrovm"), 4) << "one VM per job";
  EXPECT_TRUE(Eventually([&] { return Decisions("ignored_foreign_repository") > 0; },
                         std::chrono::seconds(20)));
  auto all = workflow_->GitHub("GET", "/_emulator/deliveries");
  ASSERT_TRUE(all.ok());
  const json& list = all->is_array() ? *all : all->value("deliveries", json::array());
  int foreign = 0;
  for (const json& d : list) {
    if (d.value("job_id", int64_t{0}) < 900'000'000'000) continue;
    ++foreign;
    if (d.value("outcome", "") == "delivered") {
      EXPECT_EQ(d.value("status_code", 0), 200) << d.dump();
    }
  }
  EXPECT_GT(foreign, 0);
  const json refused = ServeStatus().value("refusedJobs", json::array());
  bool listed = false;
  for (const json& r : refused) listed = listed || r.value("reason", "") == "foreign_repository";
  EXPECT_TRUE(listed) << refused.dump();
  ExpectNothingLeft();
}

// RunsOn #539's order, forced: a job's deliveries never sent, then redelivered completed first
// (the job cancelled while queued), queued last. The late queued launches nothing, and the
// launcher says why without asking GitHub.
TEST_F(RunnerSetOrder, AQueuedDeliveredAfterItsJobCompletedLaunchesNothing) {
  json body = {{"repository", kDemoRepository},
               {"labels", {"self-hosted", kClassLabel}},
               {"steps", {"true"}},
               {"drop_webhooks", true}};
  auto queued = workflow_->GitHub("POST", "/_emulator/jobs", body.dump());
  ASSERT_TRUE(queued.ok());
  const int64_t job = queued->value("id", int64_t{0});
  ASSERT_TRUE(workflow_->GitHub("POST", "/_emulator/jobs/" + std::to_string(job) + "/cancel").ok());
  std::string queued_guid, completed_guid;
  for (const json& d : Deliveries(job)) {
    (d.value("action", "") == "queued" ? queued_guid : completed_guid) = d.value("guid", "");
  }
  ASSERT_FALSE(queued_guid.empty());
  ASSERT_FALSE(completed_guid.empty());
  for (const std::string& guid : {completed_guid, queued_guid}) {
    ASSERT_TRUE(workflow_->GitHub("POST", "/_emulator/deliveries/" + guid + "/redeliver").ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(1700));  // past the reorder delay
  }
  ASSERT_TRUE(Eventually(
      [&] { return ReadWholeFile(dir_ + "/serve.log").find("a late queued") != std::string::npos; },
      std::chrono::seconds(20)))
      << ReadWholeFile(dir_ + "/serve.log");
  EXPECT_EQ(CountOperation("RunMicrovm"), 0);
  EXPECT_EQ(workflow_->CountLeftovers().runners, 0);
}

}  // namespace
}  // namespace mvr::testbed
