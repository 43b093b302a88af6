// The janitor end to end (001, duty 6), with a short janitor period: a job whose webhook was lost
// (dropped by the emulator, or sent while `mvr serve` was down) is launched by the janitor and
// completes; a VM whose runner never got a job is reaped after its strikes; a busy runner is
// never terminated although GitHub's listing lags and says it is idle, nor when its busy flag lies
// (actions/runner #4422); a launch that never
// reaches RUNNING is replaced while the janitor itself leaves the PENDING VM alone; and after `kill
// -9` in the middle of a burst and a restart, every job completes and within three janitor periods
// no VM or runner is left.
#include <csignal>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "runner_set_e2e_fixture.h"

namespace mvr::testbed {
namespace {

constexpr int kJanitorSeconds = 1;

class RunnerSetJanitor : public RunnerSetEndToEnd {
 protected:
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    UseShortJanitor(c, interval_);
    c["queue"]["visibilityTimeoutSeconds"] = 10;
    return c;
  }
  void ConfigureStack(LocalStack& stack) override { AddSlowImage(stack); }
  bool AllCompleted(const std::vector<int64_t>& jobs) {
    for (int64_t job : jobs) {
      if (!Completed(job)) return false;
    }
    return true;
  }
  int interval_ = kJanitorSeconds;
};

TEST_F(RunnerSetJanitor, JobWhoseWebhookWasDroppedIsLaunchedByTheJanitorAndCompletes) {
  ExpectJobWhoseWebhookWasDroppedIsLaunchedByTheJanitor();
}

TEST_F(RunnerSetJanitor, JobQueuedWhileServeWasDownIsLaunchedAfterTheRestart) {
  process::ExitStatus stopped = StopServe(SIGTERM);
  EXPECT_TRUE(stopped.ok());
  const int64_t id = QueueJob({"true"});
  ASSERT_TRUE(Eventually(
      [&] {
        auto d = QueuedDeliveries(id);
        return !d.empty() && d[0].value("outcome", "") != "pending";
      },
      std::chrono::seconds(20)));
  EXPECT_NE(QueuedDeliveries(id)[0].value("outcome", ""), "delivered");
  StartServe();
  ASSERT_TRUE(Eventually([&] { return Completed(id); }, std::chrono::seconds(40)));
  EXPECT_EQ(Job(id).value("conclusion", ""), "success");
  EXPECT_GE(Metric("janitor_launches_recovered"), 1);
  ExpectNothingLeft();
}

TEST_F(RunnerSetJanitor, VmWhoseRunnerNeverGotAJobIsReapedAfterItsStrikes) {
  ExpectVmWhoseRunnerNeverGotAJobIsReapedAfterItsStrikes();
}

TEST_F(RunnerSetJanitor, BusyRunnerIsNeverTerminatedWhenTheListingSaysItIsIdle) {
  ExpectBusyRunnerIsNeverTerminatedWhenTheListingSaysItIsIdle();
}

TEST_F(RunnerSetJanitor, BusyRunnerIsNeverKilledWhenItsBusyFlagLies) {
  ExpectBusyRunnerIsNeverKilledWhenItsBusyFlagLies();
}

TEST_F(RunnerSetJanitor, StatusShowsTheJobInItsSegmentAndTheLastSweep) {
  // Longer than GET /status's 5 s of caching (issue 53, item 1), so a gathering falls inside
  // the job's run.
  const int64_t id = QueueJob({"sleep 9"});
  json seen;
  ASSERT_TRUE(Eventually(
      [&] {
        http::HttpRequest req;
        req.url = StatusUrl() + "/status";
        auto res = http_.Send(req);
        if (!res.ok() || res->status != 200) return false;
        seen = json::parse(res->body, nullptr, false);
        if (!seen.is_object() || seen["janitor"]["lastSweep"].is_null()) return false;
        for (const json& j : seen["jobsInFlight"]) {
          if (j.value("jobId", int64_t{0}) == id && j.value("segment", "") == "running") {
            return true;
          }
        }
        return false;
      },
      std::chrono::seconds(30)))
      << seen.dump(2);
  EXPECT_GE(seen["liveVms"].get<int>(), 1);
  EXPECT_EQ(seen["classes"][0]["label"], kClassLabel);
  // The job queue (the daemon's SQLite queue, with its dead-letter queue): nothing dead-lettered.
  EXPECT_EQ(seen["queue"].value("deadLetters", -1), 0) << seen["queue"].dump();
  EXPECT_EQ(seen["queue"].value("deadLetterQueue", ""), "jobs-dead-letter");
  // `mvr status` asks the same endpoint and prints it for a terminal.
  process::ProcessSpec spec;
  spec.argv = {mvr_, "status", "--config", dir_ + "/serve.json"};
  spec.output_path = dir_ + "/status.txt";
  auto pid = processes_.Spawn(spec);
  ASSERT_TRUE(pid.ok());
  auto exited = processes_.Wait(*pid);
  ASSERT_TRUE(exited.ok() && exited->ok()) << ReadWholeFile(spec.output_path);
  const std::string text = ReadWholeFile(spec.output_path);
  EXPECT_NE(text.find("runner set e2e"), std::string::npos) << text;
  EXPECT_NE(text.find("jobs in flight:"), std::string::npos) << text;
  EXPECT_NE(text.find("janitor: last sweep"), std::string::npos) << text;
  EXPECT_NE(text.find("; no dead letters"), std::string::npos) << text;
  ASSERT_TRUE(Eventually([&] { return Completed(id); }, std::chrono::seconds(30)));
  ExpectNothingLeft();
}

class RunnerSetHungLaunch : public RunnerSetJanitor {
  void ConfigureStack(LocalStack& stack) override {
    RunnerSetJanitor::ConfigureStack(stack);
    std::ofstream(stack.dir() + "-microvms.json") << R"({"hangLaunches": 1})";
    stack.AddMicrovmsArgs({"--config", stack.dir() + "-microvms.json"});
  }
};

TEST_F(RunnerSetHungLaunch, LaunchThatNeverReachesRunningIsReplacedAndTheJanitorLeavesItAlone) {
  const int64_t id = QueueJob({"true"});
  ASSERT_TRUE(Eventually([&] { return Completed(id); }, std::chrono::seconds(45)));
  EXPECT_EQ(Job(id).value("conclusion", ""), "success");
  // The hung launch is replaced: the janitor re-queues the still-queued job, and that launch
  // takes the stale claim over and terminates the PENDING VM (or the first launch times out).
  EXPECT_EQ(CountOperation("RunMicrovm"), 2);
  EXPECT_EQ(Metric("janitor_orphans_terminated"), 0);
  EXPECT_EQ(Metric("janitor_vms_terminated"), 0);
  ExpectNothingLeft();
}

// A janitor period of 2 s, and a grace shorter than one period, so that a VM is struck at the
// first sweep it is old enough for and reaped at the next.
class RunnerSetJanitorBurst : public RunnerSetJanitor {
 protected:
  RunnerSetJanitorBurst() { interval_ = 2; }
  json Config() override {
    json c = RunnerSetJanitor::Config();
    c["janitor"]["graceSeconds"] = 1;
    return c;
  }
};

TEST_F(RunnerSetJanitorBurst,
       KillNineMidBurstThenRestartCompletesAllAndLeavesNothingInThreePeriods) {
  std::vector<int64_t> jobs;
  for (int i = 0; i < 12; ++i) jobs.push_back(QueueJob({"sleep 1"}));
  ASSERT_TRUE(
      Eventually([&] { return CountOperation("RunMicrovm") >= 4; }, std::chrono::seconds(30)));
  process::ExitStatus killed = StopServe(SIGKILL);
  EXPECT_TRUE(killed.signaled);
  StartServe();
  ASSERT_TRUE(Eventually([&] { return AllCompleted(jobs); }, std::chrono::seconds(60)));
  int succeeded = 0;
  for (int64_t job : jobs) succeeded += Job(job).value("conclusion", "") == "success";
  EXPECT_EQ(succeeded, 12);
  const TimePoint done = real_.clock.Now();
  Workflow::Leftovers left;
  const bool clean = Eventually(
      [&] {
        left = workflow_->CountLeftovers();
        return left.vms == 0 && left.runners == 0;
      },
      std::chrono::seconds(3 * interval_));
  EXPECT_TRUE(clean) << left.vms << " VMs and " << left.runners << " runners left after "
                     << 3 * interval_ << " s";
  std::printf("all 12 jobs completed; nothing left %.1f s later\n",
              std::chrono::duration<double>(real_.clock.Now() - done).count());
}

// deploy/grafana/runner-set.json names only metrics `mvr serve` exports (issue 32, part 2): after a
// job and a janitor sweep, every metric a panel's query names is a sample or a declared family of
// /metrics.
TEST_F(RunnerSetJanitor, TheGrafanaDashboardNamesOnlyMetricsServeExports) {
  const int64_t job = QueueJob({"true"});
  ASSERT_TRUE(Eventually([&] { return Completed(job); }, std::chrono::seconds(60)));
  ASSERT_TRUE(Eventually([&] { return Metric("janitor_sweeps") > 0; }, std::chrono::seconds(20)));
  http::HttpRequest req;
  req.url = StatusUrl() + "/metrics";
  auto res = http_.Send(req);
  ASSERT_TRUE(res.ok() && res->status == 200);
  std::set<std::string> exported;
  std::istringstream lines(res->body);
  for (std::string line; std::getline(lines, line);) {
    // A family declared with no sample yet (no deferral so far) is exported too.
    if (line.rfind("# TYPE ", 0) == 0) exported.insert(line.substr(7, line.find(' ', 7) - 7));
    if (line.empty() || line[0] == '#') continue;
    exported.insert(line.substr(0, line.find_first_of("{ ")));
  }
  json dashboard =
      json::parse(ReadWholeFile(std::string(MVR_SOURCE_DIR) + "/deploy/grafana/runner-set.json"));
  const std::regex metric("mvr_runnerset_[a-z_]+");
  size_t named = 0;
  for (const json& panel : dashboard.at("panels")) {
    for (const json& target : panel.value("targets", json::array())) {
      const std::string expr = target.value("expr", "");
      for (auto m = std::sregex_iterator(expr.begin(), expr.end(), metric);
           m != std::sregex_iterator(); ++m) {
        ++named;
        EXPECT_TRUE(exported.count(m->str()))
            << "panel \"" << panel.value("title", "") << "\" names " << m->str()
            << ", which /metrics does not export";
      }
    }
  }
  EXPECT_GT(named, 20u);
}

}  // namespace
}  // namespace mvr::testbed
