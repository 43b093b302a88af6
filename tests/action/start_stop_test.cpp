#include "action/start_stop.h"

#include <gtest/gtest.h>

#include "base/encoding.h"
#include "supervisor/run_payload.h"
#include "tests/action/start_stop_fixture.h"

namespace mvr::action {
namespace {

TEST_F(StartStopTest, EphemeralStartRegistersLaunchesAndWaitsForTheExactRunner) {
  ExpectJit();
  aws::RunMicrovmRequest sent;
  EXPECT_CALL(vms_, RunMicrovm(_)).WillOnce(Invoke([&](const aws::RunMicrovmRequest& r) {
    sent = r;
    return Result<aws::Microvm>(Vm(aws::MicrovmState::kPending));
  }));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1"))
      .WillOnce(Return(Vm(aws::MicrovmState::kPending)))
      .WillOnce(Return(Vm(aws::MicrovmState::kRunning)));
  github::Runner offline = OnlineRunner(label_);
  offline.status = "offline";
  EXPECT_CALL(github_, GetRunner(_, kRunnerId))
      .WillOnce(Return(offline))
      .WillOnce(Return(OnlineRunner(label_)));

  Result<StartResult> r = StartFlow(Deps()).Run(command_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->label, label_);
  EXPECT_EQ(r->runner_id, kRunnerId);
  EXPECT_EQ(r->microvm_id, "mvm-1");
  EXPECT_TRUE(r->server.empty());
  EXPECT_EQ(sent.client_token,
            LaunchClientToken(DeriveIdentity(command_.identity).value(), "runner:77"));
  // A job may run as long as the platform allows; max-lifetime-seconds is the warm lifetime.
  EXPECT_EQ(sent.maximum_duration_in_seconds, 28'800);
  EXPECT_LE(sent.run_hook_payload.size(), 4096u);
  auto payload = supervisor::DecodeRunPayload(sent.run_hook_payload.Reveal()).value();
  EXPECT_EQ(payload.mode, supervisor::LaunchMode::kEphemeral);
  EXPECT_EQ(payload.jit_config.Reveal(), kJitFixture);
  ASSERT_FALSE(secrets_.empty());
  EXPECT_EQ(secrets_.front(), kJitFixture);
}

TEST_F(StartStopTest, QuotaExceededFailsAtOnceAndRemovesTheRunner) {
  ExpectJit();
  EXPECT_CALL(vms_, RunMicrovm(_)).WillOnce(Return(QuotaExceeded("memory quota")));
  EXPECT_CALL(github_, DeleteRunner(_, kRunnerId)).WillOnce(Return(Status::Ok()));
  Result<StartResult> r = StartFlow(Deps()).Run(command_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kQuotaExceeded);
  EXPECT_NE(r.status().message().find("capacity exhausted"), std::string::npos);
  EXPECT_NE(r.status().message().find("removed JIT runner"), std::string::npos);
  ExpectNoSecrets(r.status());
}

TEST_F(StartStopTest, ThrottledRunIsRetriedWithTheSameClientToken) {
  ExpectJit();
  std::vector<std::string> tokens;
  EXPECT_CALL(vms_, RunMicrovm(_))
      .WillOnce(Invoke([&](const aws::RunMicrovmRequest& r) {
        tokens.push_back(r.client_token);
        return Result<aws::Microvm>(Throttled("slow down").WithRetryAfter(Duration(2000)));
      }))
      .WillOnce(Invoke([&](const aws::RunMicrovmRequest& r) {
        tokens.push_back(r.client_token);
        return Result<aws::Microvm>(Vm(aws::MicrovmState::kRunning));
      }));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1")).WillOnce(Return(Vm(aws::MicrovmState::kRunning)));
  EXPECT_CALL(github_, GetRunner(_, kRunnerId)).WillOnce(Return(OnlineRunner(label_)));
  ASSERT_TRUE(StartFlow(Deps()).Run(command_).ok());
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0], tokens[1]);
  EXPECT_GE(sleeper_.total().count(), 2000);
}

TEST_F(StartStopTest, VmThatDiesWhileBootingFailsWithItsReasonAndIsCleanedUp) {
  ExpectJit();
  EXPECT_CALL(vms_, RunMicrovm(_)).WillOnce(Return(Vm(aws::MicrovmState::kPending)));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1"))
      .WillOnce(Return(Vm(aws::MicrovmState::kTerminated, "run hook returned 500")))
      .WillRepeatedly(Return(Vm(aws::MicrovmState::kTerminated, "run hook returned 500")));
  EXPECT_CALL(vms_, TerminateMicrovm("mvm-1")).WillOnce(Return(Status::Ok()));
  EXPECT_CALL(github_, DeleteRunner(_, kRunnerId)).WillOnce(Return(Status::Ok()));
  Result<StartResult> r = StartFlow(Deps()).Run(command_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("run hook returned 500"), std::string::npos);
  EXPECT_NE(r.status().message().find("terminated MicroVM mvm-1"), std::string::npos);
  EXPECT_NE(r.status().message().find("removed JIT runner"), std::string::npos);
}

TEST_F(StartStopTest, RunnerThatNeverComesOnlineTimesOutAndEverythingIsCleaned) {
  command_.startup_timeout = std::chrono::seconds(60);
  ExpectJit();
  EXPECT_CALL(vms_, RunMicrovm(_)).WillOnce(Return(Vm(aws::MicrovmState::kRunning)));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1"))
      .WillOnce(Return(Vm(aws::MicrovmState::kRunning)))
      .WillRepeatedly(Return(Vm(aws::MicrovmState::kTerminated)));
  github::Runner offline = OnlineRunner(label_);
  offline.status = "offline";
  EXPECT_CALL(github_, GetRunner(_, kRunnerId)).WillRepeatedly(Return(offline));
  EXPECT_CALL(vms_, TerminateMicrovm("mvm-1")).WillOnce(Return(Status::Ok()));
  EXPECT_CALL(github_, DeleteRunner(_, kRunnerId)).WillOnce(Return(Status::Ok()));
  TimePoint start = clock_.Now();
  Result<StartResult> r = StartFlow(Deps()).Run(command_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("timed out waiting for runner"), std::string::npos);
  EXPECT_NE(r.status().message().find("cleaned up"), std::string::npos);
  EXPECT_GE(clock_.Now() - start, std::chrono::seconds(60));
  ExpectNoSecrets(r.status());
}

TEST_F(StartStopTest, JitFailureLaunchesNothing) {
  EXPECT_CALL(github_, GenerateJitConfig(_, _)).WillOnce(Return(Unauthorized("bad credentials")));
  Result<StartResult> r = StartFlow(Deps()).Run(command_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnauthorized);
}

TEST_F(StartStopTest, OversizedPayloadIsRefusedBeforeAnyVmExists) {
  EXPECT_CALL(github_, GenerateJitConfig(_, _)).WillOnce(Invoke([&](auto&, auto& req) {
    github::JitConfig jit;
    jit.runner = OnlineRunner(req.name);
    jit.encoded_jit_config = Secret(Base64Encode(random_.Bytes(9000)));  // incompressible
    return Result<github::JitConfig>(jit);
  }));
  EXPECT_CALL(github_, DeleteRunner(_, kRunnerId)).WillOnce(Return(Status::Ok()));
  Result<StartResult> r = StartFlow(Deps()).Run(command_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("run-hook payload"), std::string::npos);
}

TEST_F(StartStopTest, LeftoverRunnerFromAnEarlierAttemptIsReplaced) {
  EXPECT_CALL(github_, GenerateJitConfig(_, _))
      .WillOnce(Return(Conflict("Already exists")))
      .WillOnce(Invoke([](auto&, const github::JitConfigRequest& r) {
        github::JitConfig jit;
        jit.runner = OnlineRunner(r.name);
        jit.encoded_jit_config = Secret(kJitFixture);
        return Result<github::JitConfig>(jit);
      }));
  github::Runner old = OnlineRunner(label_);
  old.id = 5;
  old.status = "offline";
  EXPECT_CALL(github_, ListRunners(_, _)).WillOnce(Return(std::vector<github::Runner>{old}));
  EXPECT_CALL(github_, DeleteRunner(_, 5)).WillOnce(Return(Status::Ok()));
  EXPECT_CALL(vms_, RunMicrovm(_)).WillOnce(Return(Vm(aws::MicrovmState::kRunning)));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1")).WillOnce(Return(Vm(aws::MicrovmState::kRunning)));
  EXPECT_CALL(github_, GetRunner(_, kRunnerId)).WillOnce(Return(OnlineRunner(label_)));
  ASSERT_TRUE(StartFlow(Deps()).Run(command_).ok());
}

TEST_F(StartStopTest, WarmNewLaunchesWithTheWarmPayloadAndDeliversTheRunner) {
  command_.server = "proof";
  aws::RunMicrovmRequest sent;
  EXPECT_CALL(vms_, RunMicrovm(_)).WillOnce(Invoke([&](const aws::RunMicrovmRequest& r) {
    sent = r;
    return Result<aws::Microvm>(Vm(aws::MicrovmState::kPending));
  }));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1")).WillOnce(Return(Vm(aws::MicrovmState::kRunning)));
  ExpectJit();
  EXPECT_CALL(vms_, CreateMicrovmAuthToken(_)).WillOnce(Invoke([](auto& req) {
    EXPECT_EQ(req.allowed_ports.size(), 1u);
    EXPECT_EQ(req.allowed_ports[0].port, 8080);
    aws::MicrovmAuthToken t;
    t.auth_token["X-aws-proxy-auth"] = Secret(kProxyTokenFixture);
    return Result<aws::MicrovmAuthToken>(t);
  }));
  EXPECT_CALL(http_, Send(_)).WillOnce(Invoke([](const http::HttpRequest& req) {
    EXPECT_EQ(req.headers.Get("X-aws-proxy-auth"), kProxyTokenFixture);
    EXPECT_EQ(req.headers.Get("X-aws-proxy-port"), "8080");
    EXPECT_NE(req.url.find("/v1/runner/start"), std::string::npos);
    return Result<http::HttpResponse>(http::HttpResponse::Json(202, "{}"));
  }));
  EXPECT_CALL(github_, GetRunner(_, kRunnerId)).WillOnce(Return(OnlineRunner(label_)));
  Result<StartResult> r = StartFlow(Deps()).Run(command_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(supervisor::DecodeRunPayload(sent.run_hook_payload.Reveal())->mode,
            supervisor::LaunchMode::kWarm);
  EXPECT_EQ(sent.maximum_duration_in_seconds, 7'200);
  EXPECT_FALSE(r->warm_hit);
  ServerHandle h = DecodeServerHandle(r->server).value();
  EXPECT_EQ(h.microvm_id, "mvm-1");
  EXPECT_EQ(h.reuse_deadline, FromUnixSeconds(1'767'225'600 + 7'200 - 1'800));
  for (const char* fixture : {kJitFixture, kProxyTokenFixture, kTokenFixture}) {
    EXPECT_EQ(r->server.find(fixture), std::string::npos);
    EXPECT_EQ(Base64UrlDecode(r->server.substr(6)).value().find(fixture), std::string::npos);
  }
}

TEST_F(StartStopTest, ResumeOneSecondBeforeTheReuseDeadlineProceeds) {
  command_.server = EncodeServerHandle(Handle(clock_.Now() + std::chrono::seconds(1)));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1"))
      .WillOnce(Return(Vm(aws::MicrovmState::kSuspended)))
      .WillOnce(Return(Vm(aws::MicrovmState::kSuspended)))
      .WillOnce(Return(Vm(aws::MicrovmState::kRunning)));
  ExpectJit();
  EXPECT_CALL(vms_, ResumeMicrovm("mvm-1")).WillOnce(Return(Status::Ok()));
  ExpectControlToken();
  EXPECT_CALL(http_, Send(_)).WillOnce(Return(http::HttpResponse::Json(202, "{}")));
  EXPECT_CALL(github_, GetRunner(_, kRunnerId)).WillOnce(Return(OnlineRunner(label_)));
  Result<StartResult> r = StartFlow(Deps()).Run(command_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->warm_hit);
  EXPECT_EQ(DecodeServerHandle(r->server)->runner_id, kRunnerId);
}

TEST_F(StartStopTest, ResumeAtOrAfterTheReuseDeadlineTerminatesTheVmAndSaysSo) {
  for (int offset : {0, -1}) {
    command_.server = EncodeServerHandle(Handle(clock_.Now() + std::chrono::seconds(offset)));
    EXPECT_CALL(vms_, GetMicrovm("mvm-1"))
        .WillOnce(Return(Vm(aws::MicrovmState::kSuspended)))
        .WillOnce(Return(Vm(aws::MicrovmState::kTerminated)));
    EXPECT_CALL(vms_, TerminateMicrovm("mvm-1")).WillOnce(Return(Status::Ok()));
    Result<StartResult> r = StartFlow(Deps()).Run(command_);  // no JIT runner, no resume
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("reuse deadline"), std::string::npos);
    EXPECT_NE(r.status().message().find("terminated MicroVM mvm-1"), std::string::npos)
        << r.status().message();
    ::testing::Mock::VerifyAndClearExpectations(&vms_);
  }
}

TEST_F(StartStopTest, ResumePastTheReuseDeadlineLeavesAVmAnotherJobHoldsToThatJob) {
  command_.server = EncodeServerHandle(Handle(clock_.Now() - std::chrono::seconds(1)));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1")).WillOnce(Return(Vm(aws::MicrovmState::kRunning)));
  Result<StartResult> r = StartFlow(Deps()).Run(command_);  // no terminate: StrictMock
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("reuse deadline"), std::string::npos);
}

TEST_F(StartStopTest, StaleHandleOfATerminatedVmFailsWithoutALifecycleCall) {
  command_.server = EncodeServerHandle(Handle(clock_.Now() + std::chrono::hours(1)));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1"))
      .WillOnce(Return(Vm(aws::MicrovmState::kTerminated, "maximum duration reached")));
  Result<StartResult> r = StartFlow(Deps()).Run(command_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_NE(r.status().message().find("maximum duration reached"), std::string::npos);
}

TEST_F(StartStopTest, JitFailureDoesNotTouchTheCachedVm) {
  command_.server = EncodeServerHandle(Handle(clock_.Now() + std::chrono::hours(1)));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1")).WillOnce(Return(Vm(aws::MicrovmState::kSuspended)));
  EXPECT_CALL(github_, GenerateJitConfig(_, _)).WillOnce(Return(InvalidArgument("422")));
  ASSERT_FALSE(StartFlow(Deps()).Run(command_).ok());  // no Resume: StrictMock
}

TEST_F(StartStopTest, ControlDeliveryFailureRemovesTheRunnerAndSuspendsTheVm) {
  command_.server = EncodeServerHandle(Handle(clock_.Now() + std::chrono::hours(1)));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1"))
      .WillOnce(Return(Vm(aws::MicrovmState::kSuspended)))
      .WillOnce(Return(Vm(aws::MicrovmState::kSuspended)))
      .WillOnce(Return(Vm(aws::MicrovmState::kRunning)))
      .WillOnce(Return(Vm(aws::MicrovmState::kRunning)))
      .WillOnce(Return(Vm(aws::MicrovmState::kSuspended)));
  ExpectJit();
  EXPECT_CALL(vms_, ResumeMicrovm("mvm-1")).WillOnce(Return(Status::Ok()));
  ExpectControlToken();
  EXPECT_CALL(http_, Send(_))
      .WillOnce(Return(http::HttpResponse::Json(409, R"({"error":"not_idle","message":"busy"})")));
  EXPECT_CALL(github_, DeleteRunner(_, kRunnerId)).WillOnce(Return(Status::Ok()));
  EXPECT_CALL(vms_, SuspendMicrovm("mvm-1")).WillOnce(Return(Status::Ok()));
  Result<StartResult> r = StartFlow(Deps()).Run(command_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_NE(r.status().message().find("suspended MicroVM mvm-1"), std::string::npos);
  ExpectNoSecrets(r.status());
}

TEST_F(StartStopTest, WarmModeIsRefusedForForkPullRequests) {
  command_.server = "proof";
  command_.event_name = "pull_request";
  command_.event_json =
      R"({"pull_request":{"head":{"repo":{"full_name":"evil/app"}},"base":{"repo":{"full_name":"octo/app"}}}})";
  Result<StartResult> r = StartFlow(Deps()).Run(command_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("forks"), std::string::npos);
}

TEST_F(StopTest, EmptyInputsTouchNothing) {
  Result<StopResult> r = StopFlow(Deps()).Run(StopCommand());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->outcome, "nothing to stop");
}

TEST_F(StopTest, EphemeralStopTerminatesAndIsIdempotent) {
  StopCommand c = Stop();
  c.microvm_id = "mvm-1";
  EXPECT_CALL(vms_, TerminateMicrovm("mvm-1"))
      .WillOnce(Return(Status::Ok()))
      .WillOnce(Return(NotFound("gone")));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1"))
      .WillOnce(Return(Vm(aws::MicrovmState::kTerminating)))
      .WillOnce(Return(Vm(aws::MicrovmState::kTerminated)));
  EXPECT_TRUE(StopFlow(Deps()).Run(c).ok());
  EXPECT_TRUE(StopFlow(Deps()).Run(c).ok());  // already gone
}

TEST_F(StopTest, WarmStopBeforeTheDeadlineSuspends) {
  StopCommand c = Stop();
  c.server = EncodeServerHandle(Handle(clock_.Now() + std::chrono::seconds(1)));
  EXPECT_CALL(github_, GetRunner(_, 11)).WillOnce(Return(NotFound("gone")));
  EXPECT_CALL(github_, DeleteRunner(_, 11)).WillOnce(Return(NotFound("gone")));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1"))
      .WillOnce(Return(Vm(aws::MicrovmState::kRunning)))
      .WillOnce(Return(Vm(aws::MicrovmState::kRunning)))
      .WillOnce(Return(Vm(aws::MicrovmState::kSuspended)));
  ExpectControlToken();
  ExpectSupervisorStatus("IDLE", "");
  EXPECT_CALL(vms_, SuspendMicrovm("mvm-1")).WillOnce(Return(Status::Ok()));
  Result<StopResult> r = StopFlow(Deps()).Run(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->outcome, "suspended");
}

TEST_F(StopTest, WarmStopAtOrAfterTheDeadlineTerminates) {
  for (int offset : {0, -1}) {
    StopCommand c = Stop();
    c.server = EncodeServerHandle(Handle(clock_.Now() + std::chrono::seconds(offset)));
    EXPECT_CALL(github_, GetRunner(_, 11)).WillOnce(Return(NotFound("gone")));
    EXPECT_CALL(github_, DeleteRunner(_, 11)).WillOnce(Return(NotFound("gone")));
    EXPECT_CALL(vms_, TerminateMicrovm("mvm-1")).WillOnce(Return(Status::Ok()));
    EXPECT_CALL(vms_, GetMicrovm("mvm-1"))
        .WillOnce(Return(Vm(aws::MicrovmState::kSuspended)))
        .WillOnce(Return(Vm(aws::MicrovmState::kTerminated)));
    Result<StopResult> r = StopFlow(Deps()).Run(c);
    ASSERT_TRUE(r.ok());
    EXPECT_NE(r->outcome.find("terminated"), std::string::npos);
    ::testing::Mock::VerifyAndClearExpectations(&vms_);
  }
}

TEST_F(StopTest, WarmStopRefusesABusyRunnerWithoutALifecycleCall) {
  StopCommand c = Stop();
  c.server = EncodeServerHandle(Handle(clock_.Now() + std::chrono::hours(1)));
  EXPECT_CALL(github_, GetRunner(_, 11)).WillOnce(Return(OnlineRunner("x", /*busy=*/true)));
  Result<StopResult> r = StopFlow(Deps()).Run(c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kConflict);
}

}  // namespace
}  // namespace mvr::action
