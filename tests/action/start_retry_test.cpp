// Start and stop in the situations real workflows create: a second start with the same identity
// after each failure point, starts that meet a VM or runner another start holds, and stops whose
// handle is stale or from another region or repository.
#include <gtest/gtest.h>

#include "action/control_delivery.h"
#include "tests/action/start_stop_fixture.h"

namespace mvr::action {
namespace {

class StartRetryTest : public StartStopTest {
 protected:
  // Every JIT registration gets a new runner id (77, 78, ...), as GitHub's do.
  void ExpectJitRegistrations(int times) {
    EXPECT_CALL(github_, GenerateJitConfig(_, _))
        .Times(times)
        .WillRepeatedly(Invoke([this](auto&, const github::JitConfigRequest& r) {
          github::JitConfig jit;
          jit.runner = OnlineRunner(r.name);
          jit.runner.id = kRunnerId + registrations_++;
          jit.runner.status = "offline";
          jit.encoded_jit_config = Secret(kJitFixture);
          return Result<github::JitConfig>(jit);
        }));
  }
  github::Runner Runner(int64_t id, const std::string& status, bool busy = false) {
    github::Runner r = OnlineRunner(label_, busy);
    r.id = id;
    r.status = status;
    return r;
  }
  int registrations_ = 0;
};

TEST_F(StartRetryTest, RetryAfterRunMicrovmFailedLaunchesWithANewClientToken) {
  ExpectJitRegistrations(2);
  std::vector<std::string> tokens;
  EXPECT_CALL(vms_, RunMicrovm(_))
      .WillOnce(Invoke([&](const aws::RunMicrovmRequest& r) {
        tokens.push_back(r.client_token);
        return Result<aws::Microvm>(InvalidArgument("image version is not ACTIVE"));
      }))
      .WillOnce(Invoke([&](const aws::RunMicrovmRequest& r) {
        tokens.push_back(r.client_token);
        return Result<aws::Microvm>(Vm(aws::MicrovmState::kRunning));
      }));
  EXPECT_CALL(github_, DeleteRunner(_, kRunnerId)).WillOnce(Return(Status::Ok()));
  ASSERT_FALSE(StartFlow(Deps()).Run(command_).ok());

  EXPECT_CALL(vms_, GetMicrovm("mvm-1")).WillOnce(Return(Vm(aws::MicrovmState::kRunning)));
  EXPECT_CALL(github_, GetRunner(_, kRunnerId + 1))
      .WillOnce(Return(Runner(kRunnerId + 1, "online")));
  Result<StartResult> r = StartFlow(Deps()).Run(command_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_NE(tokens[0], tokens[1]) << "a new payload under the old clientToken is a Conflict";
  EXPECT_EQ(r->label, label_);
}

TEST_F(StartRetryTest, RetryAfterTheRunnerNeverCameOnlineSucceeds) {
  command_.startup_timeout = std::chrono::seconds(30);
  ExpectJitRegistrations(1);
  std::vector<std::string> tokens;
  EXPECT_CALL(vms_, RunMicrovm(_)).WillRepeatedly(Invoke([&](const aws::RunMicrovmRequest& r) {
    tokens.push_back(r.client_token);
    return Result<aws::Microvm>(Vm(aws::MicrovmState::kRunning));
  }));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1"))
      .WillOnce(Return(Vm(aws::MicrovmState::kRunning)))
      .WillOnce(Return(Vm(aws::MicrovmState::kTerminated)));
  EXPECT_CALL(github_, GetRunner(_, kRunnerId))
      .WillRepeatedly(Return(Runner(kRunnerId, "offline")));
  EXPECT_CALL(vms_, TerminateMicrovm("mvm-1")).WillOnce(Return(Status::Ok()));
  EXPECT_CALL(github_, DeleteRunner(_, kRunnerId)).WillOnce(Return(Status::Ok()));
  ASSERT_FALSE(StartFlow(Deps()).Run(command_).ok());
  ::testing::Mock::VerifyAndClearExpectations(&vms_);
  ::testing::Mock::VerifyAndClearExpectations(&github_);

  ExpectJitRegistrations(1);
  EXPECT_CALL(vms_, RunMicrovm(_)).WillOnce(Invoke([&](const aws::RunMicrovmRequest& r) {
    tokens.push_back(r.client_token);
    return Result<aws::Microvm>(Vm(aws::MicrovmState::kRunning));
  }));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1")).WillOnce(Return(Vm(aws::MicrovmState::kRunning)));
  EXPECT_CALL(github_, GetRunner(_, kRunnerId + 1))
      .WillOnce(Return(Runner(kRunnerId + 1, "online")));
  ASSERT_TRUE(StartFlow(Deps()).Run(command_).ok());
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_NE(tokens[0], tokens[1]);
}

// The earlier attempt was killed before its cleanup: its runner is still registered, offline.
TEST_F(StartRetryTest, RetryAfterAKilledAttemptReplacesItsOfflineRunner) {
  ExpectJitRegistrations(1);
  EXPECT_CALL(github_, GenerateJitConfig(_, _))
      .WillOnce(Return(Conflict("Already exists")))
      .RetiresOnSaturation();
  EXPECT_CALL(github_, ListRunners(_, _))
      .WillOnce(Return(std::vector<github::Runner>{Runner(5, "offline")}));
  EXPECT_CALL(github_, DeleteRunner(_, 5)).WillOnce(Return(Status::Ok()));
  EXPECT_CALL(vms_, RunMicrovm(_)).WillOnce(Return(Vm(aws::MicrovmState::kRunning)));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1")).WillOnce(Return(Vm(aws::MicrovmState::kRunning)));
  EXPECT_CALL(github_, GetRunner(_, kRunnerId)).WillOnce(Return(Runner(kRunnerId, "online")));
  ASSERT_TRUE(StartFlow(Deps()).Run(command_).ok());
}

TEST_F(StartRetryTest, AStartNeverTakesTheOnlineOrBusyRunnerOfAnotherStart) {
  for (bool busy : {false, true}) {
    EXPECT_CALL(github_, GenerateJitConfig(_, _)).WillOnce(Return(Conflict("Already exists")));
    EXPECT_CALL(github_, ListRunners(_, _))
        .WillOnce(Return(std::vector<github::Runner>{Runner(5, "online", busy)}));
    Result<StartResult> r = StartFlow(Deps()).Run(command_);  // no delete, no launch
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::kConflict);
    EXPECT_NE(r.status().message().find("idempotency-key"), std::string::npos);
    ::testing::Mock::VerifyAndClearExpectations(&github_);
  }
}

TEST_F(StartRetryTest, WarmRetryPassesOverTheEndedVmOfAnEarlierAttempt) {
  command_.server = "proof";
  std::vector<std::string> tokens;
  EXPECT_CALL(vms_, RunMicrovm(_))
      .WillOnce(Invoke([&](const aws::RunMicrovmRequest& r) {
        tokens.push_back(r.client_token);
        aws::Microvm old = Vm(aws::MicrovmState::kTerminated);
        old.microvm_id = "mvm-old";
        return Result<aws::Microvm>(old);
      }))
      .WillOnce(Invoke([&](const aws::RunMicrovmRequest& r) {
        tokens.push_back(r.client_token);
        return Result<aws::Microvm>(Vm(aws::MicrovmState::kPending));
      }));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1")).WillOnce(Return(Vm(aws::MicrovmState::kRunning)));
  ExpectJit();
  ExpectControlToken();
  EXPECT_CALL(http_, Send(_)).WillOnce(Return(http::HttpResponse::Json(202, "{}")));
  EXPECT_CALL(github_, GetRunner(_, kRunnerId)).WillOnce(Return(OnlineRunner(label_)));
  Result<StartResult> r = StartFlow(Deps()).Run(command_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->microvm_id, "mvm-1");
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_NE(tokens[0], tokens[1]);
}

TEST_F(StartRetryTest, ResumingAVmAnotherJobHoldsIsRefusedAsBusyWithoutTouchingIt) {
  command_.server = EncodeServerHandle(Handle(clock_.Now() + std::chrono::hours(1)));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1")).WillOnce(Return(Vm(aws::MicrovmState::kRunning)));
  Result<StartResult> r = StartFlow(Deps()).Run(command_);  // nothing else: StrictMock
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_EQ(r.status().error_type(), kServerBusy);
  EXPECT_NE(r.status().message().find("server busy"), std::string::npos);
}

TEST_F(StartRetryTest, ResumeThatLosesTheRaceRemovesOnlyItsOwnRunner) {
  command_.server = EncodeServerHandle(Handle(clock_.Now() + std::chrono::hours(1)));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1"))
      .WillOnce(Return(Vm(aws::MicrovmState::kSuspended)))
      .WillOnce(Return(Vm(aws::MicrovmState::kSuspended)))
      .WillOnce(Return(Vm(aws::MicrovmState::kRunning)));
  ExpectJit();
  EXPECT_CALL(vms_, ResumeMicrovm("mvm-1")).WillOnce(Return(Status::Ok()));
  ExpectControlToken();
  EXPECT_CALL(http_, Send(_))
      .WillOnce(Return(http::HttpResponse::Json(
          409, R"j({"error":"busy","message":"a runner is busy","state":"RUNNING"})j")));
  EXPECT_CALL(github_, DeleteRunner(_, kRunnerId)).WillOnce(Return(Status::Ok()));
  Result<StartResult> r = StartFlow(Deps()).Run(command_);  // no suspend: StrictMock
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("server busy"), std::string::npos);
  EXPECT_EQ(r.status().message().find("suspended MicroVM"), std::string::npos);
}

TEST_F(StopTest, StaleHandleStopLeavesAVmServingANewerJobRunning) {
  StopCommand c = Stop();
  c.server = EncodeServerHandle(Handle(clock_.Now() + std::chrono::hours(1)));
  EXPECT_CALL(github_, GetRunner(_, 11)).WillOnce(Return(NotFound("gone")));
  EXPECT_CALL(github_, DeleteRunner(_, 11)).WillOnce(Return(NotFound("gone")));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1")).WillOnce(Return(Vm(aws::MicrovmState::kRunning)));
  ExpectControlToken();
  ExpectSupervisorStatus("RUNNING", RunnerRequestId(99));
  Result<StopResult> r = StopFlow(Deps()).Run(c);  // no suspend: StrictMock
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NE(r->outcome.find("newer job"), std::string::npos);
}

TEST_F(StopTest, StopWaitsForItsOwnIdleRunnerToExitThenSuspends) {
  StopCommand c = Stop();
  c.server = EncodeServerHandle(Handle(clock_.Now() + std::chrono::hours(1)));
  EXPECT_CALL(github_, GetRunner(_, 11)).WillOnce(Return(NotFound("gone")));
  EXPECT_CALL(github_, DeleteRunner(_, 11)).WillOnce(Return(NotFound("gone")));
  EXPECT_CALL(vms_, GetMicrovm("mvm-1"))
      .WillOnce(Return(Vm(aws::MicrovmState::kRunning)))
      .WillOnce(Return(Vm(aws::MicrovmState::kRunning)))
      .WillOnce(Return(Vm(aws::MicrovmState::kSuspended)));
  ExpectControlToken();
  // Its runner never took a job: the stop waits for the process to exit before suspending.
  ExpectSupervisorStatus("IDLE", "");
  ExpectSupervisorStatus("RUNNING", RunnerRequestId(11));
  ExpectSupervisorStatus("RUNNING", RunnerRequestId(11));
  EXPECT_CALL(vms_, SuspendMicrovm("mvm-1")).WillOnce(Return(Status::Ok()));
  Result<StopResult> r = StopFlow(Deps()).Run(c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->outcome, "suspended");
}

TEST_F(StopTest, HandleOfAnotherRegionOrRepositoryIsAClearErrorNotAlreadyGone) {
  StopCommand c = Stop();
  c.server = EncodeServerHandle(Handle(clock_.Now() + std::chrono::hours(1)));
  c.endpoints.region = "eu-west-1";
  Result<StopResult> r = StopFlow(Deps()).Run(c);  // no call at all: StrictMock
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("eu-west-1"), std::string::npos) << r.status().message();

  c.endpoints.region = "us-east-1";
  c.repository_id = "999";
  r = StopFlow(Deps()).Run(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("another repository"), std::string::npos);
}

}  // namespace
}  // namespace mvr::action
