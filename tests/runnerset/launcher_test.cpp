// The launcher's steps and failure handling over the in-process platform: the MicroVMs and GitHub
// models behind the real clients, a stand-in supervisor in every VM, an in-memory store and a
// manual clock. Each test asserts on what the models and the table hold afterwards.
#include "runnerset/launch/launcher.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "platform_fixture.h"
#include "supervisor/run_payload.h"
#include "support/store_text.h"

namespace mvr::runnerset::testing {
namespace {

class LauncherTest : public RunnerSetTest {
 protected:
  // The still-queued check decided from what GitHub said, not by failing open.
  bool FailedOpen() {
    return m_.sink.Joined().find("could not tell whether the job is still queued") !=
           std::string::npos;
  }
  // The name a runner launched for `job_id` by an attempt whose token starts with `token8`.
  std::string RunnerFor(int64_t job_id, const std::string& token8 = "0a1b2c3d") {
    return "mvr-demo-" + std::to_string(job_id) + "-" + token8;
  }
  // Jobs a, b, c queued; the runner launched for c takes a, then a's runner takes b: c waits.
  struct Chain {
    int64_t a = 0, b = 0, c = 0;
    Runner ra, rc;
  };
  Chain TakenChain() {
    Chain ch;
    ch.a = QueueJob();
    ch.b = QueueJob();
    ch.c = QueueJob();
    ch.rc = OnlineRunner(RunnerFor(ch.c));
    platform_.Tick();  // c's runner takes a
    ch.ra = OnlineRunner(RunnerFor(ch.a));
    platform_.Tick();  // a's runner takes b
    return ch;
  }
};

TEST_F(LauncherTest, LaunchRegistersRunsDeliversAndCommits) {
  const int64_t job = QueueJob();
  LaunchOutcome o = L().Handle(Intent(job));
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(o.runner_name.rfind("mvr-demo-" + std::to_string(job) + "-", 0), 0u);
  // The VM: RUNNING, of the class's image, with its maximum duration and no execution role.
  const nlohmann::json vm = platform_.microvms->Describe(o.microvm_id).value();
  EXPECT_EQ(vm.value("state", ""), "RUNNING");
  EXPECT_EQ(vm.value("imageArn", "").find("img-1") != std::string::npos, true) << vm.dump();
  EXPECT_EQ(vm.value("maximumDurationInSeconds", 0), 600) << vm.dump();
  EXPECT_FALSE(vm.contains("executionRoleArn")) << vm.dump();
  EXPECT_EQ(platform_.ClientTokenOf(o.microvm_id).rfind("mvr-launch-", 0), 0u);
  auto payload = platform_.PayloadOf(o.microvm_id);
  ASSERT_TRUE(payload.ok()) << payload.status().ToString();
  EXPECT_EQ(payload->mode, supervisor::LaunchMode::kDelivered);
  // A nonce of the launch's own, delivered with the runner through the control port and kept
  // nowhere.
  const std::string nonce = payload->control_nonce.Reveal();
  EXPECT_TRUE(supervisor::CheckControlNonce(payload->control_nonce).ok()) << "no nonce";
  ASSERT_EQ(platform_.guest.control_nonces.size(), 1u);
  EXPECT_EQ(platform_.guest.control_nonces[0], nonce);
  EXPECT_EQ(platform_.guest.control_paths[0], "POST /v1/runner/start @" + o.microvm_id + ":8080");
  EXPECT_EQ(testing_support::StoreText(store_).find(nonce), std::string::npos);
  EXPECT_EQ(m_.sink.Joined().find(nonce), std::string::npos);
  EXPECT_EQ(o.detail.find(nonce), std::string::npos);
  // The runner: registered with the job's labels, connected, and handed the job.
  auto runner = platform_.RunnerNamed(o.runner_name);
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  EXPECT_TRUE(runner->online);
  EXPECT_EQ(JobOf(job).runner_name, o.runner_name);
  EXPECT_EQ(JobOf(job).status, "in_progress");
  auto row = table_.GetMapping(o.runner_name);
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ((*row)->microvm_id, o.microvm_id);
  EXPECT_EQ((*row)->runner_id, runner->id);
  EXPECT_EQ(ClaimNow(job), RunnerTable::ClaimOutcome::kLaunched);
  EXPECT_EQ(metrics_.Get(Counter::kLaunched), 1);
  ASSERT_EQ(platform_.guest.jit_configs.size(), 1u);
  EXPECT_EQ(m_.sink.Joined().find(platform_.guest.jit_configs[0]), std::string::npos);
}

TEST_F(LauncherTest, AJobNoLongerQueuedIsDroppedBeforeAnythingIsCreated) {
  const int64_t job = QueueJob();
  ASSERT_TRUE(platform_.github_model->CancelJob(job).ok());
  EXPECT_EQ(L().Handle(Intent(job)).decision, LaunchDecision::kDroppedNotQueued);
  EXPECT_EQ(metrics_.Get(Counter::kDroppedNotQueued), 1);
  EXPECT_TRUE(platform_.Runners().empty()) << "no runner was registered";
  EXPECT_TRUE(platform_.VmIds().empty()) << "no VM was launched";
  EXPECT_EQ(ClaimNow(job), RunnerTable::ClaimOutcome::kWon);  // no claim was taken
}

TEST_F(LauncherTest, AJobTakenByARunnerLaunchedForAnotherJobStillGetsItsLaunch) {
  const int64_t job = QueueJob();
  const int64_t waiting = QueueJob();
  // The runner launched for `waiting` took `job` (the older), so `waiting` has no runner.
  const Runner other = OnlineRunner(RunnerFor(waiting));
  platform_.Tick();
  ASSERT_EQ(JobOf(job).runner_name, other.name);
  LaunchOutcome o = L().Handle(Intent(job));
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(JobOf(waiting).runner_name, o.runner_name) << "the new runner serves the waiting job";
  EXPECT_FALSE(FailedOpen());
}

// The `in_progress` webhook says the runner launched for `waiting` took `job` (issue 30, item 1):
// `waiting`'s committed claim is released and it is launched again at once; a second such intent
// (a duplicate delivery) finds it launched again and does nothing; one for a runner that took
// its own job, or whose job has its runner, does nothing either.
TEST_F(LauncherTest, AJobWhoseRunnerTookAnotherJobIsLaunchedAgainAtOnce) {
  const int64_t job = QueueJob();
  const int64_t waiting = QueueJob();
  const Runner other = OnlineRunner(RunnerFor(waiting));
  Launched(other.name, other.id, platform_.RunningVm(), waiting);
  platform_.Tick();
  ASSERT_EQ(JobOf(job).runner_name, other.name);
  // The taken job's own launch began and then hung past the launch timeout: its runner will not
  // come (with no claim at all, its pending intent would serve the waiting job).
  ASSERT_TRUE(table_.ClaimJob(mvr::testing::kPlatformRepository, job).ok());
  m_.clock.Advance(config_.launch_timeout());
  const TakenIntent taken{other.name, mvr::testing::kPlatformRepository, job, "d-1"};
  LaunchOutcome o = L().Handle(taken);
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(o.runner_name.rfind(RunnerFor(waiting).substr(0, 15), 0), 0u) << o.runner_name;
  platform_.Tick();
  EXPECT_EQ(JobOf(waiting).runner_name, o.runner_name) << "the new runner serves the waiting job";
  EXPECT_EQ(metrics_.Get(Counter::kRelaunchedTaken), 1);
  EXPECT_EQ(L().Handle(taken).decision, LaunchDecision::kIgnored) << "it has its runner now";
  const TakenIntent own{o.runner_name, mvr::testing::kPlatformRepository, waiting, "d-2"};
  EXPECT_EQ(L().Handle(own).decision, LaunchDecision::kIgnored);
  EXPECT_EQ(metrics_.Get(Counter::kRelaunchedTaken), 1);
}

// A burst under oldest-first assignment (CI, stop 37: 21 VMs for 20 jobs): the runner launched
// for c takes a, a's runner takes b, runs it and is gone before either `in_progress` webhook is
// handled. c still waits, but b's own launch is committed and its runner will take c: a launch
// on "a's runner is gone" would be a second VM for c. In either order the intents find b's
// launch at the end of the chain, through what a's taken intent recorded on a's claim.
TEST_F(LauncherTest, AChainWhoseRunnersRanAndLeftEndsAtALaunchThatServesTheWaitingJob) {
  const auto [a, b, c, ra, rc] = TakenChain();
  ASSERT_EQ(JobOf(a).runner_name, rc.name);
  ASSERT_EQ(JobOf(b).runner_name, ra.name);
  ASSERT_TRUE(platform_.github_model->CancelJob(b).ok());  // b ends; a's runner is gone
  ASSERT_FALSE(HasRunner(ra.name));
  Launched(ra.name, ra.id, platform_.RunningVm(), a);
  Launched(RunnerFor(b), 9999, "mvm-b", b);  // registered, not yet online
  Launched(rc.name, rc.id, platform_.RunningVm(), c);
  const size_t vms = LiveVms();
  const TakenIntent by_c{rc.name, mvr::testing::kPlatformRepository, a, "d-c"};
  const TakenIntent by_a{ra.name, mvr::testing::kPlatformRepository, b, "d-a"};
  for (bool c_first : {true, false}) {
    SCOPED_TRACE(c_first ? "c's runner's intent first" : "a's runner's intent first");
    for (const TakenIntent& taken : c_first ? std::vector{by_c, by_a} : std::vector{by_a, by_c}) {
      LaunchOutcome o = L().Handle(taken);
      EXPECT_EQ(o.decision, LaunchDecision::kIgnored) << o.detail;
    }
  }
  EXPECT_EQ(LiveVms(), vms) << "no second VM for c";
  EXPECT_EQ(metrics_.Get(Counter::kRelaunchedTaken), 0);
  EXPECT_EQ(JobOf(c).status, "queued");
}

// The same chain, but b's launch hung (its claim never committed, older than the launch
// timeout): nothing will serve c, so c is launched again, at once.
TEST_F(LauncherTest, AChainThatEndsAtAHungLaunchLaunchesTheWaitingJobAgain) {
  const auto [a, b, c, ra, rc] = TakenChain();
  ASSERT_TRUE(platform_.github_model->CancelJob(b).ok());
  Launched(ra.name, ra.id, "mvm-a", a);
  ASSERT_TRUE(table_.ClaimJob(mvr::testing::kPlatformRepository, b).ok());  // b's launch hangs
  Launched(rc.name, rc.id, "mvm-c", c);
  const TakenIntent by_a{ra.name, mvr::testing::kPlatformRepository, b, "d-a"};
  EXPECT_EQ(L().Handle(by_a).decision, LaunchDecision::kDeferred) << "b's launch is under way";
  m_.clock.Advance(config_.launch_timeout() / 2);
  LaunchOutcome later = L().Handle(by_a);
  EXPECT_EQ(later.decision, LaunchDecision::kDeferred) << later.detail;
  EXPECT_EQ(later.retry_after, std::max(config_.launch_timeout() / 4, config_.defer_delay()))
      << "an older launch is looked at again less often";
  m_.clock.Advance(config_.launch_timeout() / 2);
  const TakenIntent by_c{rc.name, mvr::testing::kPlatformRepository, a, "d-c"};
  LaunchOutcome o = L().Handle(by_c);
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  platform_.Tick();
  EXPECT_EQ(JobOf(c).runner_name, o.runner_name) << "the new runner serves the waiting job";
  EXPECT_EQ(metrics_.Get(Counter::kRelaunchedTaken), 1);
  EXPECT_EQ(L().Handle(by_a).decision, LaunchDecision::kIgnored) << "c has its runner now";
}

// The same hung chain, but the job in its middle has run and ended before the intent that passes
// through it comes round: its runner (launched for c) is still named by GitHub, so the walk goes
// on to c, which waits (stolen-runners seed 632 left c to the janitor's stuck-launch recovery).
TEST_F(LauncherTest, AChainThroughAJobThatHasEndedStillFindsTheWaitingJob) {
  const auto [a, b, c, ra, rc] = TakenChain();
  ASSERT_TRUE(platform_.github_model->CancelJob(a).ok());  // a ran on c's runner and ended
  ASSERT_EQ(JobOf(a).status, "completed");
  ASSERT_EQ(JobOf(a).runner_name, rc.name);
  Launched(ra.name, ra.id, "mvm-a", a);
  ASSERT_TRUE(table_.ClaimJob(mvr::testing::kPlatformRepository, b).ok());  // b's launch hangs
  Launched(rc.name, rc.id, "mvm-c", c);
  m_.clock.Advance(config_.launch_timeout());
  const TakenIntent by_a{ra.name, mvr::testing::kPlatformRepository, b, "d-a"};
  LaunchOutcome o = L().Handle(by_a);
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  platform_.Tick();
  EXPECT_EQ(JobOf(c).runner_name, o.runner_name) << "the new runner serves the waiting job";
  EXPECT_EQ(metrics_.Get(Counter::kRelaunchedTaken), 1);
}

// Job X runs on the runner launched for Y, and Y on the runner an earlier attempt launched for
// X: both have runners, so this launch would only add an idle VM.
TEST_F(LauncherTest, AChainOfTakenJobsThatClosesOnThisJobNeedsNoLaunch) {
  const int64_t x = QueueJob();
  const int64_t y = QueueJob();
  OnlineRunner(RunnerFor(y));
  platform_.Tick();  // takes x
  OnlineRunner(RunnerFor(x, "deadbeef"));
  platform_.Tick();  // takes y
  ASSERT_EQ(JobOf(x).status, "in_progress");
  ASSERT_EQ(JobOf(y).status, "in_progress");
  EXPECT_EQ(L().Handle(Intent(x)).decision, LaunchDecision::kDroppedNotQueued);
  EXPECT_TRUE(platform_.VmIds().empty());
}

TEST_F(LauncherTest, AChainOfTakenJobsThatEndsWithAWaitingJobGetsTheLaunch) {
  const int64_t x = QueueJob();
  const int64_t y = QueueJob();
  const int64_t z = QueueJob();
  OnlineRunner(RunnerFor(y));
  platform_.Tick();  // x runs on y's runner
  OnlineRunner(RunnerFor(z));
  platform_.Tick();  // y runs on z's runner; z waits
  ASSERT_EQ(JobOf(z).status, "queued");
  LaunchOutcome o = L().Handle(Intent(x));
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(JobOf(z).runner_name, o.runner_name);
  EXPECT_FALSE(FailedOpen());
}

// RunMicrovm says the account's quota is spent for the class: the job is launched again at once on
// the class's fallbackClass; for a minute the class's jobs go there directly, then back.
TEST_F(LauncherTest, AClassWithoutCapacityLaunchesOnItsFallbackClass) {
  config_.classes[0].fallback_class = "mvr-large";
  config_.classes.push_back(RunnerClass{"mvr-large", mvr::testing::kPlatformImage, "", "", 600});
  config_.max_concurrent_vms = 5;
  platform_.vms_api.refusals.push_back({"POST", "/microvms", 402, "ServiceQuotaExceededException",
                                        "You have exceeded a service quota", false, 1});
  auto class_of = [&](const LaunchOutcome& o) {
    Result<std::optional<MappingRow>> row = table_.GetMapping(o.runner_name);
    return row.ok() && *row ? (*row)->class_label : std::string("(no row)");
  };
  const int64_t first = QueueJob();
  LaunchOutcome o = L().Handle(Intent(first));
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(class_of(o), "mvr-large");
  EXPECT_EQ(metrics_.Get(Counter::kCapacityFallback), 1);
  EXPECT_EQ(platform_.Calls("RunMicrovm"), 1) << "the refused call never reached the service";
  platform_.Tick();
  EXPECT_EQ(JobOf(first).runner_name, o.runner_name) << "the fallback's runner takes the job";

  LaunchOutcome second = L().Handle(Intent(QueueJob()));
  ASSERT_EQ(second.decision, LaunchDecision::kLaunched) << second.detail;
  EXPECT_EQ(class_of(second), "mvr-large") << "straight to the fallback within the minute";
  EXPECT_EQ(metrics_.Get(Counter::kCapacityFallback), 1);

  m_.clock.Advance(CapacityRoute::kCapacityMemory);
  LaunchOutcome third = L().Handle(Intent(QueueJob()));
  ASSERT_EQ(third.decision, LaunchDecision::kLaunched) << third.detail;
  EXPECT_EQ(class_of(third), "mvr-small") << "the class itself again after the minute";
}

// Without a fallbackClass the launch fails as before (and is retried from the queue).
TEST_F(LauncherTest, AClassWithoutCapacityAndNoFallbackFails) {
  platform_.vms_api.refusals.push_back({"POST", "/microvms", 402, "ServiceQuotaExceededException",
                                        "You have exceeded a service quota", false, 1});
  LaunchOutcome o = L().Handle(Intent(QueueJob()));
  EXPECT_EQ(o.decision, LaunchDecision::kFailed);
  EXPECT_NE(o.detail.find("ServiceQuotaExceededException"), std::string::npos) << o.detail;
  EXPECT_EQ(metrics_.Get(Counter::kCapacityFallback), 0);
  EXPECT_TRUE(platform_.Runners().empty()) << "the registration was removed";
}

TEST_F(LauncherTest, AJobOfARepositoryOutsideTheSetIsIgnored) {
  const int64_t job = QueueJob();
  LaunchIntent in = Intent(job);
  in.repository = "octo/other";
  EXPECT_EQ(L().Handle(in).decision, LaunchDecision::kIgnored);
  EXPECT_TRUE(platform_.Runners().empty());
  EXPECT_TRUE(platform_.VmIds().empty());
  in.repository = "OCTO/App";
  EXPECT_EQ(L().Handle(in).decision, LaunchDecision::kLaunched);
  EXPECT_EQ(platform_.Runners().size(), 1u);
}

TEST_F(LauncherTest, TheStillQueuedCheckFailsOpen) {
  const int64_t job = QueueJob();
  ASSERT_TRUE(platform_.github_model->CancelJob(job).ok());  // GitHub would say: not queued
  platform_.github_api.refusals.push_back(
      {"GET", "/actions/jobs/" + std::to_string(job), 502, "", "GitHub is having a moment"});
  EXPECT_EQ(L().Handle(Intent(job)).decision, LaunchDecision::kLaunched);
  EXPECT_EQ(LiveVms(), 1u);
  EXPECT_TRUE(FailedOpen());
}

// GitHub's rate limits are no reason to launch blind: the check waits for them (issue 30, item 4),
// rather than spend a JIT config, the scarcest of them, on a job that may have its runner.
TEST_F(LauncherTest, TheStillQueuedCheckWaitsForGitHubsRateLimitInsteadOfFailingOpen) {
  const int64_t job = QueueJob();
  platform_.github_api.refusals.push_back({"GET", "/actions/jobs/" + std::to_string(job), 429, "",
                                           "You have exceeded a secondary rate limit.", false, 1});
  LaunchOutcome o = L().Handle(Intent(job));
  EXPECT_EQ(o.decision, LaunchDecision::kDeferred) << o.detail;
  EXPECT_GT(o.retry_after, Duration(0));
  EXPECT_EQ(LiveVms(), 0u);
  EXPECT_FALSE(FailedOpen());
  EXPECT_EQ(metrics_.GetDeferrals("github_rate_limit"), 1);
  m_.clock.Advance(o.retry_after);
  o = L().Handle(Intent(job));
  EXPECT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
}

// A taken intent whose chain walk GitHub's limits hold back comes back once they allow: under a
// burst, thousands of them had counted as failed launches (the rate-limits scenario).
TEST_F(LauncherTest, ATakenIntentHeldBackByGitHubsRateLimitIsDeferredNotFailed) {
  const int64_t job = QueueJob();
  const int64_t waiting = QueueJob();
  const Runner other = OnlineRunner(RunnerFor(waiting));
  Launched(other.name, other.id, platform_.RunningVm(), waiting);
  platform_.Tick();
  ASSERT_TRUE(table_.ClaimJob(mvr::testing::kPlatformRepository, job).ok());
  m_.clock.Advance(config_.launch_timeout());
  platform_.github_api.refusals.push_back({"GET", "/actions/jobs/" + std::to_string(waiting), 429,
                                           "", "You have exceeded a secondary rate limit.", false,
                                           1});
  const TakenIntent taken{other.name, mvr::testing::kPlatformRepository, job, "d-1"};
  LaunchOutcome o = L().Handle(taken);
  EXPECT_EQ(o.decision, LaunchDecision::kDeferred) << o.detail;
  EXPECT_EQ(metrics_.Get(Counter::kFailed), 0);
  m_.clock.Advance(o.retry_after);
  o = L().Handle(taken);
  EXPECT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
}

// Which runner took a job never changes: a chain walk asks GitHub about a taken job once, and a
// job the in_progress webhook named the runner of not at all.
TEST_F(LauncherTest, AChainWalkAsksAboutATakenJobOnce) {
  std::vector<std::string> trace;
  platform_.github_api.trace = &trace;
  const int64_t job = QueueJob();
  const int64_t waiting = QueueJob();
  const Runner other = OnlineRunner(RunnerFor(waiting));
  platform_.Tick();
  ASSERT_EQ(JobOf(job).runner_name, other.name);
  auto reads_of = [&](int64_t id) {
    return std::count(trace.begin(), trace.end(),
                      "GET /repos/" + std::string(mvr::testing::kPlatformRepository) +
                          "/actions/jobs/" + std::to_string(id));
  };
  const LaunchOutcome o = L().Handle(Intent(job));
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_NE(L().Handle(Intent(job)).decision, LaunchDecision::kLaunched) << "a duplicate";
  EXPECT_EQ(reads_of(job), 1);
  // The `in_progress` webhook says the runner launched for `job` took `third`.
  const int64_t third = QueueJob();
  const TakenIntent taken{o.runner_name, mvr::testing::kPlatformRepository, third, "d-3"};
  L().Handle(taken);
  L().Handle(Intent(third));
  EXPECT_EQ(reads_of(third), 0) << "the webhook named its runner";
  platform_.github_api.trace = nullptr;
}

TEST_F(LauncherTest, AtTheCapTheLaunchIsDeferredNotFailed) {
  platform_.RunningVm();
  platform_.RunningVm();
  LaunchOutcome o = L().Handle(Intent(QueueJob()));
  EXPECT_EQ(o.decision, LaunchDecision::kDeferred);
  EXPECT_GT(o.retry_after, Duration(0));
  EXPECT_EQ(metrics_.Get(Counter::kDeferred), 1);
  EXPECT_EQ(metrics_.Get(Counter::kFailed), 0);
  EXPECT_TRUE(platform_.Runners().empty()) << "nothing registered at the cap";
  EXPECT_EQ(platform_.VmIds().size(), 2u);
}

TEST_F(LauncherTest, AFailureAfterTheVmExistsTerminatesItRemovesTheRunnerAndReleasesTheClaim) {
  platform_.guest.start_status = 400;
  platform_.guest.start_body = R"({"error":"malformed","message":"bad request","state":"IDLE"})";
  const int64_t job = QueueJob();
  LaunchOutcome o = L().Handle(Intent(job));
  EXPECT_EQ(o.decision, LaunchDecision::kFailed);
  ASSERT_EQ(platform_.VmIds().size(), 1u);
  EXPECT_EQ(State(platform_.VmIds()[0]), "TERMINATED");
  EXPECT_TRUE(platform_.Runners().empty()) << "the registration was removed";
  EXPECT_EQ(JobOf(job).status, "queued");
  EXPECT_EQ(ClaimNow(job), RunnerTable::ClaimOutcome::kWon);  // released: a retry can claim it
  EXPECT_EQ(metrics_.Get(Counter::kFailed), 1);
  EXPECT_EQ(o.detail.find("eyJ"), std::string::npos) << "no JIT config in the detail";
}

TEST_F(LauncherTest, AClaimIsKeptWhileItsVmCannotBeConfirmedGone) {
  platform_.guest.start_status = 400;
  platform_.guest.start_body = R"({"error":"malformed"})";
  platform_.vms_api.refusals.push_back({"DELETE", "", 403, "AccessDeniedException", "denied"});
  const int64_t job = QueueJob();
  EXPECT_EQ(L().Handle(Intent(job)).decision, LaunchDecision::kFailed);
  ASSERT_EQ(platform_.VmIds().size(), 1u);
  EXPECT_EQ(State(platform_.VmIds()[0]), "RUNNING");
  EXPECT_EQ(ClaimNow(job), RunnerTable::ClaimOutcome::kBusy);
}

TEST_F(LauncherTest, AFailedLaunchRemovesItsRegistration) {
  platform_.vms_api.refusals.push_back(
      {"POST", "/microvms", 400, "ValidationException", "no such image"});
  const int64_t job = QueueJob();
  EXPECT_EQ(L().Handle(Intent(job)).decision, LaunchDecision::kFailed);
  EXPECT_TRUE(platform_.Runners().empty()) << "the registration was removed";
  EXPECT_TRUE(platform_.VmIds().empty());
  EXPECT_EQ(platform_.Calls("TerminateMicrovm"), 0) << "no VM, nothing to terminate";
  EXPECT_EQ(ClaimNow(job), RunnerTable::ClaimOutcome::kWon);
}

TEST_F(LauncherTest, ADuplicateOfALaunchedJobCreatesNothing) {
  // The duplicate comes before the runner has started: the job is still queued on GitHub.
  platform_.guest.runners_connect = false;
  const int64_t job = QueueJob();
  ASSERT_EQ(L().Handle(Intent(job)).decision, LaunchDecision::kLaunched);
  EXPECT_EQ(L().Handle(Intent(job)).decision, LaunchDecision::kDuplicate);
  EXPECT_EQ(platform_.VmIds().size(), 1u);
  EXPECT_EQ(platform_.Runners().size(), 1u);
}

// A duplicate finds another attempt's claim: it looks again after deferSeconds while that claim
// is young, after half its age once it is older (each look costs GitHub calls; chaos seed 256
// spent the hourly budget polling a hung claim every 2 s), and never after the claim can be taken
// over.
TEST_F(LauncherTest, ADuplicateLooksAgainLessOftenTheLongerAClaimHasBeenHeld) {
  const int64_t job = QueueJob();
  ASSERT_EQ(ClaimNow(job), RunnerTable::ClaimOutcome::kWon);  // another attempt's
  const Duration defer = config_.defer_delay();
  const Duration takeover = config_.claim_takeover_after();
  ASSERT_GT(takeover, defer * 6) << "the fixture's times leave room for each case";
  auto retry = [&] {
    LaunchOutcome o = L().Handle(Intent(job));
    EXPECT_EQ(o.decision, LaunchDecision::kDeferred) << o.detail;
    return o.retry_after;
  };
  EXPECT_EQ(retry(), defer) << "a young claim";
  m_.clock.Advance(takeover / 2);
  EXPECT_EQ(retry(), takeover / 4) << "half the claim's age";
  m_.clock.Advance(takeover / 2 - defer - Duration(1000));
  EXPECT_EQ(retry(), defer + Duration(1000)) << "no later than the takeover";
  EXPECT_TRUE(platform_.VmIds().empty());
}

TEST_F(LauncherTest, TerminateEndsTheMappedVmAndAnUnknownRunnerIsANoOp) {
  const int64_t job = QueueJob();
  LaunchOutcome launched = L().Handle(Intent(job));
  ASSERT_EQ(launched.decision, LaunchDecision::kLaunched);
  TerminateIntent unknown;
  unknown.runner_name = "mvr-demo-9-ffffffff";
  EXPECT_EQ(L().Handle(unknown).decision, LaunchDecision::kIgnored);
  EXPECT_EQ(platform_.Calls("TerminateMicrovm"), 0);
  EXPECT_EQ(State(launched.microvm_id), "RUNNING");
  TerminateIntent done;
  done.runner_name = launched.runner_name;
  done.repository = "octo/app";
  done.job_id = job;
  EXPECT_EQ(L().Handle(done).decision, LaunchDecision::kTerminated);
  EXPECT_EQ(State(launched.microvm_id), "TERMINATED");
  EXPECT_FALSE(*table_.GetMapping(launched.runner_name));
  EXPECT_EQ(metrics_.Get(Counter::kTerminated), 1);
}

// Issue 56: the `completed` delivery carries the job's times, conclusion and name, and the job's
// record is written from them: no GET of the job (one a job, which at 1,000 jobs spent the hourly
// budget the last launches needed). A terminate intent without them still reads the job.
TEST_F(LauncherTest, TerminateRecordsTheJobFromItsDeliveryWithoutReadingIt) {
  const int64_t job = QueueJob();
  LaunchOutcome launched = L().Handle(Intent(job));
  ASSERT_EQ(launched.decision, LaunchDecision::kLaunched);
  std::vector<std::string> requests;
  platform_.github_api.trace = &requests;
  const std::string get_job = "GET /repos/octo/app/actions/jobs/" + std::to_string(job);
  TerminateIntent done;
  done.runner_name = launched.runner_name;
  done.repository = "octo/app";
  done.job_id = job;
  done.completed_at = m_.clock.Now();
  done.started_at = m_.clock.Now() - Duration(60'000);
  done.conclusion = "failure";
  done.job_name = "build (arm64)";
  EXPECT_EQ(L().Handle(done).decision, LaunchDecision::kTerminated);
  EXPECT_EQ(std::count(requests.begin(), requests.end(), get_job), 0);
  Result<std::vector<JobRecord>> records = table_.RecentJobRecords(5);
  ASSERT_TRUE(records.ok() && records->size() == 1u);
  EXPECT_EQ(records->front().conclusion, "failure");
  EXPECT_EQ(records->front().job_name, "build (arm64)");
  EXPECT_EQ(records->front().started_ms, ToUnixMillis(done.started_at));

  const int64_t other = QueueJob();
  LaunchOutcome second = L().Handle(Intent(other));
  ASSERT_EQ(second.decision, LaunchDecision::kLaunched);
  TerminateIntent bare;  // from before the fields (a message queued by an older version)
  bare.runner_name = second.runner_name;
  bare.repository = "octo/app";
  bare.job_id = other;
  requests.clear();  // the launch's own still-queued read
  EXPECT_EQ(L().Handle(bare).decision, LaunchDecision::kTerminated);
  EXPECT_EQ(std::count(requests.begin(), requests.end(),
                       "GET /repos/octo/app/actions/jobs/" + std::to_string(other)),
            1);
  platform_.github_api.trace = nullptr;
}

}  // namespace
}  // namespace mvr::runnerset::testing
