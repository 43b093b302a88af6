// Start and stop in the situations real workflows create: a second start with the same identity
// after each failure point, starts that meet a VM or runner another start holds, and stops whose
// handle is stale or from another region or repository. Run against the in-process models.
#include <gtest/gtest.h>

#include "fleet/control_delivery.h"
#include "tests/action/inprocess_world.h"

namespace mvr::action {
namespace {

using nlohmann::json;

class StartRetryTest : public testing::InProcessActionTest {
 protected:
  // The clientTokens of the RunMicrovm calls the model answered, in order.
  std::vector<std::string> RunTokens() {
    std::vector<std::string> tokens;
    for (const auto& call : microvms_->calls()) {
      if (call.operation == "RunMicrovm") tokens.push_back(call.client_token);
    }
    return tokens;
  }
  StopCommand WarmStop(const std::string& microvm_id) {
    StopCommand c;
    c.server =
        EncodeServerHandle(Handle(microvm_id, clock_.Now() + std::chrono::hours(1)), control_key_);
    c.endpoints = command_.endpoints;
    return c;
  }
};

// The MicroVMs API refuses the first RunMicrovm (as for an image version that is not ACTIVE)
// without reaching the model; it records the clientToken that request carried.
class RefuseFirstRun final : public http::HttpClient {
 public:
  explicit RefuseFirstRun(http::HttpClient& inner) : inner_(inner) {}
  Result<http::HttpResponse> Send(const http::HttpRequest& request) override {
    const bool run =
        request.method == "POST" && request.body.find("runHookPayload") != std::string::npos;
    if (!run || refused) return inner_.Send(request);
    refused = true;
    token = json::parse(request.body).value("clientToken", "");
    http::HttpResponse r =
        http::HttpResponse::Json(400, R"({"message":"image version is not ACTIVE"})");
    r.headers.Set("x-amzn-ErrorType", "ValidationException");
    return r;
  }
  bool refused = false;
  std::string token;

 private:
  http::HttpClient& inner_;
};

TEST_F(StartRetryTest, RetryAfterRunMicrovmFailedLaunchesWithANewClientToken) {
  RefuseFirstRun refusing(microvms_->api());
  aws::MicrovmsClientOptions o;
  o.endpoint = {microvms_->api_url(), "us-east-1", "lambda", "test"};
  vms_ = std::make_unique<aws::MicrovmsClient>(
      o, aws::MicrovmsClientDeps{refusing, credentials_, seam_});
  ASSERT_FALSE(Start().ok());
  ASSERT_TRUE(refusing.refused);
  EXPECT_TRUE(Runners().empty());  // its runner was removed

  Result<StartResult> r = Start();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(RunTokens().size(), 1u);
  EXPECT_NE(refusing.token, RunTokens()[0])
      << "a new payload under the old clientToken is a Conflict";
  EXPECT_EQ(r->label, label_);
}

TEST_F(StartRetryTest, RetryAfterTheRunnerNeverCameOnlineSucceeds) {
  command_.startup_timeout = std::chrono::seconds(30);
  guest_.runners_connect = false;
  ASSERT_FALSE(Start().ok());
  guest_.runners_connect = true;
  Result<StartResult> r = Start();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(RunTokens().size(), 2u);
  EXPECT_NE(RunTokens()[0], RunTokens()[1]);
  EXPECT_EQ(VmState(r->microvm_id), "RUNNING");
  ASSERT_EQ(Runners().size(), 1u);
  EXPECT_EQ(Runners()[0].id, r->runner_id);
}

// The earlier attempt was killed before its cleanup: its runner is still registered, offline.
TEST_F(StartRetryTest, RetryAfterAKilledAttemptReplacesItsOfflineRunner) {
  emulate::github::JitRequest earlier;
  earlier.name = label_;
  earlier.runner_group_id = 1;
  earlier.labels = {"self-hosted"};
  ASSERT_TRUE(
      github_model_->GenerateJitConfig(emulate::github::Scope::Repo("octo", "app"), earlier).ok());
  Result<StartResult> r = Start();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(Runners().size(), 1u);
  EXPECT_EQ(Runners()[0].id, r->runner_id);
}

// GitHub registered the runner each time but its answer was lost, twice: the retry of each
// registration meets the runner it made (409), which is removed and registered again (found by
// the simulation, action-pool seed 132, where a second lost answer failed the start).
TEST_F(StartRetryTest, RegistrationsWhoseAnswersWereLostAreReplacedRoundAfterRound) {
  github_api_.refusals.push_back({"POST", "/generate-jitconfig", 502, "", "answer lost", true, 2});
  Result<StartResult> r = Start();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(Runners().size(), 1u);
  EXPECT_EQ(Runners()[0].id, r->runner_id);
  EXPECT_EQ(Runners()[0].name, label_);
}

TEST_F(StartRetryTest, AStartNeverTakesTheOnlineOrBusyRunnerOfAnotherStart) {
  for (bool busy : {false, true}) {
    Rebuild(Options());
    const int64_t other = OnlineRunner(label_, busy).id;
    Result<StartResult> r = Start();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::kConflict);
    EXPECT_NE(r.status().message().find("idempotency-key"), std::string::npos);
    EXPECT_TRUE(RunnerExists(other));         // not deleted
    EXPECT_TRUE(microvms_->calls().empty());  // nothing launched
  }
}

TEST_F(StartRetryTest, WarmRetryPassesOverTheEndedVmOfAnEarlierAttempt) {
  command_.server = "proof";
  guest_.fail_run_hook = "run hook returned 500";
  ASSERT_FALSE(Start().ok());  // its VM (same warm payload, same clientToken) ended
  guest_.fail_run_hook.clear();
  Result<StartResult> r = Start();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::vector<std::string> tokens = RunTokens();
  ASSERT_GE(tokens.size(), 2u);
  EXPECT_NE(tokens.front(), tokens.back());
  EXPECT_EQ(VmState(r->microvm_id), "RUNNING");
  EXPECT_EQ(VmIds().size(), 2u);
}

TEST_F(StartRetryTest, ResumingAVmAnotherJobHoldsIsRefusedAsBusyWithoutTouchingIt) {
  const std::string id = RunningVm();
  command_.server =
      EncodeServerHandle(Handle(id, clock_.Now() + std::chrono::hours(1)), control_key_);
  Result<StartResult> r = Start();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_EQ(r.status().error_type(), fleet::kServerBusy);
  EXPECT_NE(r.status().message().find("server busy"), std::string::npos);
  EXPECT_EQ(VmState(id), "RUNNING");
  EXPECT_TRUE(Runners().empty());
  for (const char* op : {"ResumeMicrovm", "SuspendMicrovm", "TerminateMicrovm"}) {
    EXPECT_EQ(Calls(op), 0) << op;
  }
}

TEST_F(StartRetryTest, ResumeThatLosesTheRaceRemovesOnlyItsOwnRunner) {
  const std::string id = SuspendedVm();
  command_.server =
      EncodeServerHandle(Handle(id, clock_.Now() + std::chrono::hours(1)), control_key_);
  guest_.start_status = 409;
  guest_.start_body = R"j({"error":"busy","message":"a runner is busy","state":"RUNNING"})j";
  Result<StartResult> r = Start();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("server busy"), std::string::npos);
  EXPECT_EQ(r.status().message().find("suspended MicroVM"), std::string::npos);
  EXPECT_EQ(VmState(id), "RUNNING");  // the other job keeps it
  EXPECT_TRUE(Runners().empty());
  EXPECT_EQ(Calls("SuspendMicrovm"), 0);
}

TEST_F(StartRetryTest, StaleHandleStopLeavesAVmServingANewerJobRunning) {
  const std::string id = RunningVm();
  guest_.status_state = "RUNNING";
  guest_.status_request_id = fleet::RunnerRequestId(99);
  Result<StopResult> r = StopFlow(Deps()).Run(WarmStop(id));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NE(r->outcome.find("newer job"), std::string::npos);
  EXPECT_EQ(VmState(id), "RUNNING");
  EXPECT_EQ(Calls("SuspendMicrovm"), 0);
}

TEST_F(StartRetryTest, StopWaitsForItsOwnIdleRunnerToExitThenSuspends) {
  const std::string id = RunningVm();
  // Its runner never took a job: the stop waits for the process to exit before suspending.
  guest_.status_script = {{"RUNNING", fleet::RunnerRequestId(11)},
                          {"RUNNING", fleet::RunnerRequestId(11)}};
  Result<StopResult> r = StopFlow(Deps()).Run(WarmStop(id));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->outcome, "suspended");
  EXPECT_EQ(VmState(id), "SUSPENDED");
  EXPECT_TRUE(guest_.status_script.empty());  // it read all three answers
}

TEST_F(StartRetryTest, HandleOfAnotherRegionOrRepositoryIsAClearErrorNotAlreadyGone) {
  const std::string id = RunningVm();
  StopCommand c = WarmStop(id);
  c.endpoints.region = "eu-west-1";
  Result<StopResult> r = StopFlow(Deps()).Run(c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("eu-west-1"), std::string::npos) << r.status().message();

  c.endpoints.region = "us-east-1";
  c.repository_id = "999";
  r = StopFlow(Deps()).Run(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("another repository"), std::string::npos);
  EXPECT_EQ(VmState(id), "RUNNING");
  EXPECT_TRUE(microvms_->calls().empty());  // no call at all
}

}  // namespace
}  // namespace mvr::action
