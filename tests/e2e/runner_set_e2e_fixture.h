// The fixtures of the runner set's end-to-end tests. RunnerSetStack: both emulators as a
// LocalStack (the real supervisor and the stand-in runner in each MicroVM), the GitHub emulator
// signing its workflow_job webhooks to whatever deployment of the runner set a suite runs, jobs
// queued through the emulator's control API, and the checks every scenario shares (what the
// MicroVMs API was asked, what is left behind); the emulator knobs of the janitor and warm-pool
// suites. RunnerSetEndToEnd: that stack with a real `mvr serve` process on SQLite, and what its
// /metrics says. tests/lambda/lambda_e2e_test.cpp runs the same stack against the Lambda functions.
// Everything listens on 127.0.0.1.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/host_port.h"
#include "http/curl_client.h"
#include "process/process_runner.h"
#include "testbed/local_stack.h"
#include "testbed/workflow.h"
#include "tests/support/github_record.h"
#include "tests/support/real_seam.h"
#include "tests/support/run_body_env.h"

namespace mvr::testbed {

namespace fs = std::filesystem;
using nlohmann::json;

inline constexpr char kClassLabel[] = "mvr-small";
inline constexpr char kWebhookSecret[] = "runner-set-e2e-webhook-secret";
// A class whose stand-in runner takes 4 s to start, so that its job can be cancelled before.
inline constexpr char kSlowLabel[] = "mvr-slow";

// The janitor suites' configuration: a sweep every `interval_seconds`, a VM reaped at its second
// strike once 2 s old, launches short enough to be replaced within a test, and the slow class
// (which needs AddSlowImage on the stack).
inline void UseShortJanitor(json& config, int interval_seconds) {
  config["janitor"] = {{"intervalSeconds", interval_seconds},
                       {"strikes", 2},
                       {"graceSeconds", 2},
                       {"stuckLaunchSeconds", 1}};
  config["launcher"]["launchTimeoutSeconds"] = 10;
  config["launcher"]["claimTakeoverSeconds"] = 10;
  config["classes"].push_back({{"label", kSlowLabel}, {"image", kSlowLabel}});
}
// An organisation's set (`org`, the emulator's --org) instead of the demo repository's.
inline void UseOrganization(json& config, const std::string& org) {
  config["github"].erase("repository");
  config["github"]["organization"] = org;
}
inline void AddSlowImage(LocalStack& stack) {
  stack.AddImage(kSlowLabel, stack.StandInRunner() + " --startup-delay-ms 4000");
}

// The warm-pool suites' configuration: one suspended member of the first class, pool and janitor
// sweeps every second.
inline void UseWarmPoolOfOne(json& config) {
  config["classes"][0]["warmPoolSize"] = 1;
  config["warmPool"] = {{"intervalSeconds", 1}};
  config["janitor"] = {{"intervalSeconds", 1}, {"strikes", 2}, {"graceSeconds", 2}};
}

// The hot-pool suites' configuration: one hot member of the first class, pool and janitor sweeps
// every second.
inline void UseHotPoolOfOne(json& config) {
  config["classes"][0]["hotPoolSize"] = 1;
  config["warmPool"] = {{"intervalSeconds", 1}};
  config["janitor"] = {{"intervalSeconds", 1}, {"strikes", 2}, {"graceSeconds", 2}};
}
// GitHub shows a silent runner offline after about a minute; the hot-pool suites do not wait that.
inline void UseQuicklyOfflineRunners(LocalStack& stack) {
  stack.AddGithubArgs({"--runner-offline-after-seconds", "2"});
}

// GitHub's webhook late (as it often is, by about 2 s): 1.5 s.
inline void UseLateWebhooks(LocalStack& stack) {
  stack.AddGithubArgs({"--delivery-delay-min-ms", "1500", "--delivery-delay-max-ms", "1500"});
}

// The emulators and the checks on them, for any deployment of the runner set.
class RunnerSetStack : public ::testing::Test {
 protected:
  // A fresh directory for the test's files (kept when the test fails), with the webhook secret.
  void MakeDir(const std::string& prefix) {
    std::string tmpl = fs::temp_directory_path().string() + "/" + prefix + "-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    std::ofstream f(dir_ + "/webhook-secret");
    f << kWebhookSecret << "\n";
  }
  // Starts both emulators, the GitHub one delivering its webhooks to `webhook_url`.
  void StartStack(const std::string& webhook_url) {
    stack_ = std::make_unique<LocalStack>(real_.seam, processes_, mvr_, dir_ + "/stack");
    stack_->AddGithubArgs({"--webhook-url", webhook_url, "--webhook-secret-file",
                           dir_ + "/webhook-secret", "--tick-ms", "100"});
    // The contract test (tests/contracts/github) records the GitHub emulator's traffic.
    if (auto record = testing_support::GithubRecordPath()) {
      stack_->AddGithubArgs({"--record", *record});
    }
    stack_->SetRunBody(testing_support::E2eRunBody());
    ConfigureStack(*stack_);
    Status started = stack_->Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
    workflow_ = std::make_unique<Workflow>(real_.seam, processes_, http_, *stack_, mvr_);
  }
  // Derived fixtures stop what they started first.
  void TearDown() override {
    if (stack_) stack_->Stop();
    if (dir_.empty()) return;
    if (HasFailure() || std::getenv("MVR_E2E_KEEP_LOGS")) {
      std::printf("logs kept in %s\n", dir_.c_str());
    } else {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }

  // Emulator knobs of a suite, before the stack starts.
  virtual void ConfigureStack(LocalStack&) {}

  // The runner set's configuration without what depends on the deployment (store, queue, secrets,
  // listen address): one class, up to max_concurrent_vms_ VMs, launches of at most 30 s,
  // deferrals of 1 s.
  json SharedConfig() const {
    return json{{"runnerSetId", "e2e"},
                {"region", kDemoRegion},
                {"github", {{"apiUrl", stack_->github_url()}, {"repository", kDemoRepository}}},
                {"classes", json::array({{{"label", kClassLabel}, {"image", kDemoImage}}})},
                {"maxConcurrentVms", max_concurrent_vms_},
                {"launcher",
                 {{"concurrency", 10},
                  {"launchTimeoutSeconds", 30},
                  {"claimTakeoverSeconds", 30},
                  {"deferSeconds", 1}}}};
  }

  // A job queued on the emulator with the class label; returns its id.
  int64_t QueueJob(const std::vector<std::string>& steps, const std::string& label = kClassLabel) {
    return QueueJobIn(kDemoRepository, {"self-hosted", label}, steps);
  }
  // A job of `repository` asking for `labels`; returns its id.
  int64_t QueueJobIn(const std::string& repository, const std::vector<std::string>& labels,
                     const std::vector<std::string>& steps = {"true"}) {
    json body = {{"repository", repository}, {"labels", labels}, {"steps", steps}};
    auto job = workflow_->GitHub("POST", "/_emulator/jobs", body.dump());
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->value("id", int64_t{0}) : 0;
  }
  json Job(int64_t id) {
    auto job = workflow_->GitHub("GET", "/_emulator/jobs/" + std::to_string(id));
    return job.ok() ? *job : json::object();
  }
  bool Completed(int64_t id) { return Job(id).value("status", "") == "completed"; }

  // The queued-webhook deliveries of a job.
  std::vector<json> QueuedDeliveries(int64_t job_id) {
    std::vector<json> out;
    auto all = workflow_->GitHub("GET", "/_emulator/deliveries");
    if (!all.ok()) return out;
    const json& list = all->is_array() ? *all : all->value("deliveries", json::array());
    for (const json& d : list) {
      if (d.value("action", "") == "queued" && d.value("job_id", int64_t{0}) == job_id) {
        out.push_back(d);
      }
    }
    return out;
  }

  // Operations the MicroVMs emulator served (from its request log).
  int CountOperation(const std::string& operation) {
    std::istringstream in(ReadWholeFile(stack_->request_log()));
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      json j = json::parse(line, nullptr, false);
      if (j.is_object() && j.value("operation", "") == operation) ++n;
    }
    return n;
  }

  // The emulator's VMs in `state` ("SUSPENDED" ...); -1 when it does not answer.
  int CountVms(const std::string& state) {
    auto states = workflow_->CountVmStates();
    if (!states.ok()) return -1;
    auto it = states->find(state);
    return it == states->end() ? 0 : it->second;
  }

  void ExpectNothingLeft() {
    Workflow::Leftovers left;
    EXPECT_TRUE(Eventually(
        [&] {
          left = workflow_->CountLeftovers();
          return left.vms == 0 && left.runners == 0;
        },
        std::chrono::seconds(30)));
    EXPECT_EQ(left.vms, 0) << "MicroVMs not terminated";
    EXPECT_EQ(left.runners, 0) << "runners still registered";
  }

  bool Eventually(const std::function<bool()>& done, Duration within) {
    const TimePoint deadline = real_.clock.Now() + within;
    while (!done()) {
      if (real_.clock.Now() >= deadline) return false;
      real_.sleeper.Sleep(Duration(200));
    }
    return true;
  }

  // A counter of the deployment ("launched", "janitor_vms_terminated" ...), as its metrics show it.
  virtual int64_t Metric(const std::string& name) = 0;
  // Deliveries the webhook refused as replays of one it took (`mvr serve`'s delivery ledger,
  // issue 53 item 13); the Lambda webhook keeps none.
  virtual int64_t ReplaysRefused() { return 0; }

  // Waits until each of the deployment's counters ("janitor_sweeps", "pool_sweeps" ...) has gone
  // up by its amount in `advances` from its value now (one not shown yet counts as 0). A sweep is
  // counted as it ends, so at least N - 1 sweeps both began and ended after the call. The failure
  // names the counters that fell short.
  ::testing::AssertionResult AwaitCountersAdvance(const std::map<std::string, int64_t>& advances,
                                                  Duration within) {
    std::map<std::string, int64_t> from;
    for (const auto& advance : advances) {
      from[advance.first] = std::max<int64_t>(0, Metric(advance.first));
    }
    std::string short_of;
    const bool advanced = Eventually(
        [&] {
          short_of.clear();
          for (const auto& [name, by] : advances) {
            const int64_t now = Metric(name);
            if (now < from[name] + by) {
              short_of += " " + name + " went from " + std::to_string(from[name]) + " to " +
                          std::to_string(now) + ", not up by " + std::to_string(by) + ";";
            }
          }
          return short_of.empty();
        },
        within);
    if (advanced) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "waited " << std::chrono::duration_cast<std::chrono::milliseconds>(within).count()
           << " ms:" << short_of;
  }

  // ---- The scenarios every deployment passes (its suites configure the stack and the set).

  // A queued job runs on a fresh VM which is then terminated, and nothing is left; its id.
  int64_t ExpectJobRunsOnAFreshVmThatIsThenTerminated() {
    const int64_t job = QueueJob({"echo hello from the runner set", "test -n \"$RUNNER_NAME\""});
    EXPECT_GT(job, 0);
    EXPECT_TRUE(Eventually([&] { return Completed(job); }, std::chrono::seconds(60)))
        << Job(job).dump();
    json done = Job(job);
    EXPECT_EQ(done.value("conclusion", ""), "success") << done.dump();
    EXPECT_EQ(done.value("runner_name", "").rfind("mvr-e2e_" + std::to_string(job) + "-", 0), 0u)
        << done.dump();
    EXPECT_EQ(CountOperation("RunMicrovm"), 1);
    ExpectNothingLeft();
    EXPECT_TRUE(Eventually([&] { return Metric("terminated") == 1; }, std::chrono::seconds(15)))
        << "the terminate intent did not end the VM";
    EXPECT_EQ(Metric("launched"), 1);
    EXPECT_EQ(Metric("failed"), 0);
    return job;
  }

  // Five deliveries of one webhook launch one VM; every copy is settled: one launch, and each
  // other found the job's claim, or (once the job had started) GitHub saying it is no longer
  // queued.
  void ExpectFiveDeliveriesOfOneWebhookLaunchOneVm() {
    const int64_t job = QueueJob({"sleep 2"});
    std::vector<json> deliveries;
    ASSERT_TRUE(Eventually(
        [&] {
          deliveries = QueuedDeliveries(job);
          return !deliveries.empty() && deliveries[0].value("outcome", "") == "delivered";
        },
        std::chrono::seconds(15)));
    const std::string guid = deliveries[0].value("guid", "");
    for (int i = 0; i < 4; ++i) {
      auto redelivered =
          workflow_->GitHub("POST", "/_emulator/deliveries/" + guid + "/redeliver", "{}");
      ASSERT_TRUE(redelivered.ok()) << redelivered.status().ToString();
    }
    ASSERT_TRUE(Eventually([&] { return Completed(job); }, std::chrono::seconds(60)));
    EXPECT_EQ(Job(job).value("conclusion", ""), "success");
    // Each copy is refused at the door as a replay or reaches the launcher.
    auto settled = [&] {
      return Metric("launched") + Metric("duplicate") + Metric("dropped_not_queued") +
             ReplaysRefused();
    };
    EXPECT_TRUE(Eventually([&] { return settled() == 5; }, std::chrono::seconds(30)))
        << "launched " << Metric("launched") << ", duplicate " << Metric("duplicate")
        << ", dropped " << Metric("dropped_not_queued") << ", replays refused " << ReplaysRefused();
    EXPECT_EQ(Metric("launched"), 1);
    EXPECT_EQ(CountOperation("RunMicrovm"), 1);
    ExpectNothingLeft();
  }

  // Two workflow_job deliveries to `url`, unsigned and wrongly signed, are answered 401.
  void ExpectBadSignaturesRefusedWith401(const std::string& url) {
    const std::string body =
        R"({"action":"queued","workflow_job":{"id":9,"run_id":1,"labels":["mvr-small"]}})";
    for (const std::string& signature :
         {std::string(), std::string("sha256=") + std::string(64, '0')}) {
      http::HttpRequest req;
      req.method = "POST";
      req.url = url;
      req.body = body;
      req.headers.Set("Content-Type", "application/json");
      req.headers.Set("X-GitHub-Event", "workflow_job");
      req.headers.Set("X-GitHub-Delivery", "bad-signature-" + std::to_string(signature.size()));
      if (!signature.empty()) req.headers.Set("X-Hub-Signature-256", signature);
      auto res = http_.Send(req);
      ASSERT_TRUE(res.ok()) << res.status().ToString();
      EXPECT_EQ(res->status, 401) << res->body;
    }
    // (A deployment may count after it answers.)
    EXPECT_TRUE(Eventually([&] { return Metric("received") == 2; }, std::chrono::seconds(5)))
        << "received " << Metric("received");
  }

  // With the webhook late (UseLateWebhooks), a job cancelled before it arrives gets no VM: the
  // launcher's still-queued check drops the launch.
  void ExpectJobCancelledWhileQueuedGetsNoVm() {
    const int64_t job = QueueJob({"echo never"});
    auto cancelled =
        workflow_->GitHub("POST", "/_emulator/jobs/" + std::to_string(job) + "/cancel");
    ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
    ASSERT_TRUE(
        Eventually([&] { return Metric("dropped_not_queued") == 1; }, std::chrono::seconds(20)))
        << "dropped_not_queued " << Metric("dropped_not_queued");
    EXPECT_EQ(Job(job).value("conclusion", ""), "cancelled");
    EXPECT_EQ(CountOperation("RunMicrovm"), 0);
    EXPECT_EQ(Metric("launched"), 0);
    ExpectNothingLeft();
  }

  // With maxConcurrentVms 2, five jobs are deferred (never failed) and all run, never more than
  // two VMs at once.
  void ExpectCapDefersJobsAndLaterRunsAllOfThem() {
    std::vector<int64_t> jobs;
    for (int i = 0; i < 5; ++i) jobs.push_back(QueueJob({"sleep 2"}));
    int most = 0;
    auto all_done = [&] {
      most = std::max(most, workflow_->CountLeftovers().vms);
      for (int64_t job : jobs) {
        if (!Completed(job)) return false;
      }
      return true;
    };
    ASSERT_TRUE(Eventually(all_done, std::chrono::seconds(90)));
    for (int64_t job : jobs) EXPECT_EQ(Job(job).value("conclusion", ""), "success") << job;
    EXPECT_LE(most, 2) << "more MicroVMs at once than the cap";
    EXPECT_GT(Metric("deferred"), 0);
    EXPECT_EQ(Metric("failed"), 0);
    EXPECT_EQ(Metric("launched"), 5);
    ExpectNothingLeft();
  }

  // With UseShortJanitor: a job whose webhook the emulator drops is launched by the janitor.
  void ExpectJobWhoseWebhookWasDroppedIsLaunchedByTheJanitor() {
    json body = {{"repository", kDemoRepository},
                 {"labels", {"self-hosted", kClassLabel}},
                 {"steps", {"true"}},
                 {"drop_webhooks", true}};
    auto job = workflow_->GitHub("POST", "/_emulator/jobs", body.dump());
    ASSERT_TRUE(job.ok()) << job.status().ToString();
    const int64_t id = job->value("id", int64_t{0});
    ASSERT_TRUE(Eventually([&] { return Completed(id); }, std::chrono::seconds(40)));
    EXPECT_EQ(Job(id).value("conclusion", ""), "success");
    std::vector<json> queued = QueuedDeliveries(id);
    ASSERT_EQ(queued.size(), 1u);
    EXPECT_EQ(queued[0].value("outcome", ""), "dropped") << "the runner set never heard of the job";
    EXPECT_GE(Metric("janitor_launches_recovered"), 1);
    EXPECT_EQ(Metric("launched"), 1);
    ExpectNothingLeft();
  }

  // With UseShortJanitor: a VM whose runner never got a job (it was cancelled while the slow
  // runner started) is reaped after its strikes.
  void ExpectVmWhoseRunnerNeverGotAJobIsReapedAfterItsStrikes() {
    const int64_t id = QueueJob({"true"}, kSlowLabel);
    // The launch is committed (VM running, runner delivered); the runner is still starting.
    ASSERT_TRUE(Eventually([&] { return Metric("launched") >= 1; }, std::chrono::seconds(30)));
    auto cancelled = workflow_->GitHub("POST", "/_emulator/jobs/" + std::to_string(id) + "/cancel");
    ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
    // Its runner comes online with nothing to do; nothing else will ever terminate its VM.
    ASSERT_TRUE(Eventually([&] { return Metric("janitor_vms_terminated") >= 1; },
                           std::chrono::seconds(30)));
    EXPECT_GE(Metric("janitor_runners_removed"), 1);
    EXPECT_EQ(Metric("terminated"), 0) << "no terminate intent: the cancelled job named no runner";
    ExpectNothingLeft();
  }

  // With UseShortJanitor: a busy runner is never terminated although GitHub's listing lags and
  // says it is idle.
  void ExpectBusyRunnerIsNeverTerminatedWhenTheListingSaysItIsIdle() {
    auto lag = workflow_->GitHub("POST", "/_emulator/faults",
                                 json{{"runner_listing_lag_ms", 600'000}}.dump());
    ASSERT_TRUE(lag.ok()) << lag.status().ToString();
    const int64_t id = QueueJob({"sleep 8"});
    ASSERT_TRUE(Eventually([&] { return Completed(id); }, std::chrono::seconds(40)));
    EXPECT_EQ(Job(id).value("conclusion", ""), "success");
    EXPECT_GE(Metric("janitor_busy_spared"), 1) << "the fresh read must have found it busy";
    EXPECT_EQ(Metric("janitor_vms_terminated"), 0);
    EXPECT_EQ(Metric("janitor_runners_removed"), 0);
    ExpectNothingLeft();
  }

  // With UseShortJanitor: a runner running its job is never deregistered nor its VM terminated
  // although GitHub's listing and GET always say busy:false and a DELETE believes them
  // (actions/runner #4422): the janitor asks the jobs API first.
  void ExpectBusyRunnerIsNeverKilledWhenItsBusyFlagLies() {
    auto lies =
        workflow_->GitHub("POST", "/_emulator/faults", json{{"runner_busy_lies", 1.0}}.dump());
    ASSERT_TRUE(lies.ok()) << lies.status().ToString();
    const int64_t id = QueueJob({"sleep 8"});
    ASSERT_TRUE(Eventually([&] { return Completed(id); }, std::chrono::seconds(40)));
    EXPECT_EQ(Job(id).value("conclusion", ""), "success");
    EXPECT_GE(Metric("janitor_busy_spared"), 1) << "the jobs API must have named the runner";
    EXPECT_EQ(Metric("janitor_vms_terminated"), 0);
    EXPECT_EQ(Metric("janitor_runners_removed"), 0);
    ExpectNothingLeft();
  }

  // Returns once the deployment's pool records the member the emulator shows suspended (the
  // sweeper suspends the VM, then marks its row ready).
  virtual void AwaitPoolRecorded() = 0;

  // With UseWarmPoolOfOne: the class serves a job by resuming its suspended member, the pool
  // refills, and several janitor and pool sweeps later the new member is still there, untouched.
  void ExpectWarmPoolServesAJobByResumingAndRefills() {
    ASSERT_TRUE(Eventually([&] { return CountVms("SUSPENDED") == 1; }, std::chrono::seconds(30)));
    AwaitPoolRecorded();
    EXPECT_EQ(CountOperation("RunMicrovm"), 1);
    EXPECT_EQ(CountOperation("SuspendMicrovm"), 1);
    const int64_t id = QueueJob({"true"});
    ASSERT_TRUE(Eventually([&] { return Completed(id); }, std::chrono::seconds(40)));
    EXPECT_EQ(Job(id).value("conclusion", ""), "success");
    EXPECT_EQ(CountOperation("ResumeMicrovm"), 1) << "the job's VM is the resumed member";
    // The pool refills: one more pre-boot, and the job itself launched nothing cold.
    ASSERT_TRUE(Eventually([&] { return CountVms("SUSPENDED") == 1; }, std::chrono::seconds(30)));
    AwaitPoolRecorded();
    EXPECT_EQ(CountOperation("RunMicrovm"), 2);
    EXPECT_EQ(Metric("launched"), 1);
    const int terminated = CountOperation("TerminateMicrovm");
    // Several sweeps of the janitor (it reaps at a VM's second strike once 2 s old) and of the
    // pool later, the new member is still there.
    ASSERT_TRUE(AwaitCountersAdvance({{"janitor_sweeps", 4}, {"pool_sweeps", 3}},
                                     std::chrono::seconds(30)));
    EXPECT_EQ(CountVms("SUSPENDED"), 1);
    EXPECT_EQ(CountOperation("TerminateMicrovm"), terminated) << "nothing of the pool was reaped";
    EXPECT_EQ(Metric("janitor_orphans_terminated"), 0);
  }

  // The set's registered runners as the GitHub emulator lists them.
  std::vector<json> Runners() {
    std::vector<json> out;
    auto listed = workflow_->GitHub("GET", "/_emulator/runners");
    if (!listed.ok()) return out;
    for (const json& r : listed->value("runners", json::array())) out.push_back(r);
    return out;
  }
  // One VM suspended and one runner registered, offline and idle: a parked hot member as the
  // services show it (the deployment's pool records it as ready on its next sweep).
  bool OneHotMemberParked() {
    if (CountVms("SUSPENDED") != 1) return false;
    std::vector<json> runners = Runners();
    return runners.size() == 1 && runners[0].value("status", "") == "offline" &&
           !runners[0].value("busy", true);
  }

  // With UseHotPoolOfOne and UseQuicklyOfflineRunners: the sweeper boots a VM, registers a runner
  // with the class label and delivers it, suspends the VM once GitHub lists the runner online and
  // marks it ready once GitHub lists it offline; a queued job resumes it and its runner takes the
  // job with nothing registered or delivered; the pool refills; several janitor and pool sweeps
  // later the parked runner and its VM are untouched.
  void ExpectHotPoolServesAJobByResumingAndRefills() {
    ASSERT_TRUE(Eventually([&] { return OneHotMemberParked(); }, std::chrono::seconds(45)));
    AwaitPoolRecorded();
    EXPECT_EQ(CountOperation("RunMicrovm"), 1);
    EXPECT_EQ(CountOperation("SuspendMicrovm"), 1);
    const std::string hot_runner = Runners().at(0).value("name", "");
    EXPECT_EQ(hot_runner.rfind("mvr-e2e_hot-", 0), 0u) << hot_runner;

    const int64_t id = QueueJob({"echo on $RUNNER_NAME"});
    ASSERT_TRUE(Eventually([&] { return Completed(id); }, std::chrono::seconds(40)));
    json job = Job(id);
    EXPECT_EQ(job.value("conclusion", ""), "success");
    EXPECT_EQ(job.value("runner_name", ""), hot_runner) << "the hot runner took the job";
    EXPECT_EQ(CountOperation("ResumeMicrovm"), 1) << "the job's VM is the resumed hot member";
    // The launch may still be waiting to see its VM RUNNING when a short job is already over.
    EXPECT_TRUE(Eventually([&] { return Metric("launched") == 1; }, std::chrono::seconds(20)));
    // The pool refills with a new hot member, and the used VM is terminated on completion.
    ASSERT_TRUE(Eventually([&] { return OneHotMemberParked(); }, std::chrono::seconds(45)));
    AwaitPoolRecorded();
    EXPECT_NE(Runners().at(0).value("name", ""), hot_runner) << "a new member's runner";
    EXPECT_EQ(CountOperation("RunMicrovm"), 2) << "the job launched nothing cold";
    // The used VM ends after its job: through TerminateMicrovm on itself where its supervisor was
    // told its id (an envelope with microvmId), by powering off where it was not.
    ASSERT_TRUE(Eventually([&] { return CountVms("TERMINATED") >= 1; }, std::chrono::seconds(20)));

    const int terminated = CountOperation("TerminateMicrovm");
    // Several sweeps of the janitor (it deregisters a runner no launch owns at its second strike)
    // and of the pool (a hot pool's sweep lasts a 2 s settle round) later, the parked member is
    // untouched.
    ASSERT_TRUE(AwaitCountersAdvance({{"janitor_sweeps", 4}, {"pool_sweeps", 3}},
                                     std::chrono::seconds(30)));
    EXPECT_TRUE(OneHotMemberParked()) << "only the new member's parked runner, untouched";
    EXPECT_EQ(CountOperation("TerminateMicrovm"), terminated) << "nothing of the pool was reaped";
    EXPECT_EQ(Metric("janitor_runners_removed"), 0);
    EXPECT_EQ(Metric("janitor_orphans_terminated"), 0);
  }

  testing::RealSeam real_;
  process::PosixProcessRunner processes_;
  http::CurlHttpClient http_;
  std::string mvr_ = std::string(MVR_BINARY_DIR) + "/src/cli/mvr";
  std::string dir_;
  std::unique_ptr<LocalStack> stack_;
  std::unique_ptr<Workflow> workflow_;
  int max_concurrent_vms_ = 20;  // suites of the cap set it in their constructor
};

// The stack with `mvr serve` (SQLite store and queue) receiving its webhooks.
class RunnerSetEndToEnd : public RunnerSetStack {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(MakeDir("mvr-runnerset-e2e"));
    port_ = FreeLoopbackPort();
    ASSERT_GT(port_, 0);
    ASSERT_NO_FATAL_FAILURE(StartStack(ServeUrl() + "/webhook"));
    StartServe();
  }

  void TearDown() override {
    StopServe(SIGTERM);
    RunnerSetStack::TearDown();
  }
  // The runner set's configuration; suites change what they test.
  virtual json Config() {
    json c = SharedConfig();
    c["listen"] = "127.0.0.1:" + std::to_string(port_);
    if (status_port_ == 0) status_port_ = FreeLoopbackPort();  // kept across restarts
    c["statusListen"] = "127.0.0.1:" + std::to_string(status_port_);
    c["github"]["patFile"] = stack_->token_file();
    c["github"]["webhookSecretFile"] = dir_ + "/webhook-secret";
    c["store"] = "sqlite:" + dir_ + "/state.db";
    c["queue"] = {{"uri", "sqlite:" + dir_ + "/state.db"}, {"visibilityTimeoutSeconds", 20}};
    c["shutdownGraceSeconds"] = 10;
    return c;
  }

  std::string ServeUrl() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The status listener's "http://127.0.0.1:PORT" (statusListen).
  std::string StatusUrl() const { return "http://127.0.0.1:" + std::to_string(status_port_); }

  // Starts `mvr serve` and waits for its "listening" line.
  void StartServe() {
    {
      std::ofstream f(dir_ + "/serve.json");
      f << Config().dump(2);
    }
    process::ProcessSpec spec;
    spec.argv = {mvr_, "serve", "--config", dir_ + "/serve.json"};
    spec.env = stack_->StepEnvironment("1", "serve");
    spec.output_path = dir_ + "/serve.log";
    auto pid = processes_.Spawn(spec);
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    serve_pid_ = *pid;
    const std::string line = "mvr serve listening on " + ServeUrl();
    ASSERT_TRUE(Eventually(
        [&] {
          auto exited = processes_.TryWait(serve_pid_);
          if (exited.ok() && exited->has_value()) return true;
          return ReadWholeFile(spec.output_path).find(line) != std::string::npos;
        },
        std::chrono::seconds(20)));
    const std::string log = ReadWholeFile(spec.output_path);
    ASSERT_NE(log.find(line), std::string::npos) << log;
    ASSERT_NE(log.find("mvr serve status on " + StatusUrl()), std::string::npos) << log;
  }

  // Signals `mvr serve` and waits for it; returns its exit status.
  process::ExitStatus StopServe(int signal) {
    process::ExitStatus status;
    if (serve_pid_ <= 0) return status;
    processes_.Signal(serve_pid_, signal).IgnoreError();
    auto exited = processes_.Wait(serve_pid_);
    serve_pid_ = 0;
    return exited.ok() ? *exited : status;
  }

  // A counter of mvr serve's /metrics ("launched" → mvr_runnerset_launched_total); -1 if absent.
  int64_t Metric(const std::string& name) override {
    http::HttpRequest req;
    req.url = StatusUrl() + "/metrics";
    auto res = http_.Send(req);
    if (!res.ok() || res->status != 200) return -1;
    std::istringstream in(res->body);
    std::string line;
    const std::string key = "mvr_runnerset_" + name + "_total ";
    while (std::getline(in, line)) {
      if (line.rfind(key, 0) == 0) return std::stoll(line.substr(key.size()));
    }
    return -1;
  }
  int64_t ReplaysRefused() override {
    http::HttpRequest req;
    req.url = StatusUrl() + "/metrics";
    auto res = http_.Send(req);
    if (!res.ok() || res->status != 200) return -1;
    const std::string key =
        "mvr_runnerset_webhook_decisions_total{decision=\"ignored_duplicate_delivery\"} ";
    const size_t at = res->body.find(key);
    return at == std::string::npos ? 0 : std::stoll(res->body.substr(at + key.size()));
  }

  // mvr serve's GET /status (an empty object when it does not answer).
  json ServeStatus() {
    http::HttpRequest req;
    req.url = StatusUrl() + "/status";
    auto res = http_.Send(req);
    if (!res.ok() || res->status != 200) return json::object();
    return json::parse(res->body, nullptr, false);
  }

  // How many jobs reached `milestone` of the timeline histogram; -1 if absent.
  void AwaitPoolRecorded() override {}  // the warm-pool suite overrides it

  int64_t TimelineCount(const std::string& milestone) {
    http::HttpRequest req;
    req.url = StatusUrl() + "/metrics";
    auto res = http_.Send(req);
    if (!res.ok() || res->status != 200) return -1;
    const std::string key =
        "mvr_runnerset_job_timeline_seconds_count{milestone=\"" + milestone + "\"} ";
    size_t at = res->body.find(key);
    return at == std::string::npos ? -1 : std::stoll(res->body.substr(at + key.size()));
  }

  // A port nothing listens on now (the emulator must know the webhook URL before mvr serve runs).
  static int FreeLoopbackPort() { return PickFreeLoopbackPort().value_or(-1); }

  int port_ = 0;
  int serve_pid_ = 0;
  int status_port_ = 0;  // statusListen's, picked by the first Config()
};

}  // namespace mvr::testbed
