// The launcher's steps and failure handling over mocked MicroVMs, GitHub and HTTP seams, an
// in-memory store and a manual clock.
#include "runnerset/launcher.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../action/fakes.h"
#include "store/memory_store.h"
#include "supervisor/run_payload.h"
#include "support/store_text.h"

namespace mvr::runnerset {
namespace {

using action::testing::ManualSeam;
using action::testing::MockGitHub;
using action::testing::MockHttp;
using action::testing::MockMicrovms;
using ::testing::_;
using ::testing::Invoke;
using ::testing::NiceMock;
using ::testing::Return;

constexpr char kJit[] = "JITFIXTURE-runner-set-secret";

aws::Microvm Vm(aws::MicrovmState state) {
  aws::Microvm vm;
  vm.microvm_id = "mvm-1";
  vm.state = state;
  vm.endpoint = "http://127.0.0.1:1/";
  return vm;
}

// GetJob's answer (through Invoke: gmock's Return(Result<Job>) trips GCC 12's
// -Wmaybe-uninitialized).
auto Answer(Result<github::Job> job) {
  return Invoke([job](const github::RepositoryRef&, int64_t) { return job; });
}

class LauncherTest : public ::testing::Test {
 protected:
  LauncherTest() {
    config_.runner_set_id = "demo";
    config_.runner_name_prefix = "mvr-demo-";
    config_.github.repository = "octo/app";
    config_.classes.push_back(RunnerClass{"mvr-small", "img-1", "", "", 600});
    config_.max_concurrent_vms = 2;
    config_.launcher.launch_timeout_seconds = 60;
    intent_.repository = "octo/app";
    intent_.job_id = 42;
    intent_.class_label = "mvr-small";
    intent_.labels = {"self-hosted", "mvr-small"};
    intent_.queued_at = m_.clock.Now();
    // By default: the job is queued, the set has no VMs, registration works, the VM runs and
    // the supervisor takes the runner.
    github::Job job;
    job.status = github::JobStatus::kQueued;
    ON_CALL(github_, GetJob(_, _)).WillByDefault(Answer(Result<github::Job>(job)));
    ON_CALL(vms_, ListMicrovms(_)).WillByDefault(Return(aws::ListMicrovmsResponse{}));
    ON_CALL(github_, GenerateJitConfig(_, _))
        .WillByDefault(Invoke([](const github::RunnerScope&, const github::JitConfigRequest& r) {
          github::JitConfig jit;
          jit.runner.id = 77;
          jit.runner.name = r.name;
          jit.encoded_jit_config = Secret(kJit);
          return Result<github::JitConfig>(jit);
        }));
    ON_CALL(github_, DeleteRunner(_, _)).WillByDefault(Return(Status::Ok()));
    ON_CALL(vms_, RunMicrovm(_)).WillByDefault(Return(Vm(aws::MicrovmState::kPending)));
    ON_CALL(vms_, GetMicrovm(_)).WillByDefault(Invoke([this](const std::string&) {
      return Result<aws::Microvm>(
          Vm(terminated_ ? aws::MicrovmState::kTerminated : aws::MicrovmState::kRunning));
    }));
    ON_CALL(vms_, TerminateMicrovm(_)).WillByDefault(Invoke([this](const std::string&) {
      terminated_ = true;
      return Status::Ok();
    }));
    ON_CALL(vms_, CreateMicrovmAuthToken(_)).WillByDefault(Invoke([](auto&) {
      aws::MicrovmAuthToken t;
      t.auth_token["X-aws-proxy-auth"] = Secret("PROXYTOKEN");
      return Result<aws::MicrovmAuthToken>(t);
    }));
    ON_CALL(http_, Send(_)).WillByDefault(Return(http::HttpResponse::Json(202, "{}")));
  }

  Launcher& L() {
    if (!launcher_) {
      launcher_ =
          std::make_unique<Launcher>(config_, LauncherDeps{m_.seam, vms_, github_, http_, table_,
                                                           metrics_, nullptr, nullptr, Secret()});
    }
    return *launcher_;
  }
  RunnerTable::ClaimOutcome ClaimNow() { return table_.ClaimJob("octo/app", 42)->outcome; }

  ManualSeam m_;
  store::MemoryStore store_{m_.clock};
  RunnerTable table_{store_, m_.seam, RunnerTable::Options{}};
  Metrics metrics_;
  NiceMock<MockMicrovms> vms_;
  NiceMock<MockGitHub> github_;
  NiceMock<MockHttp> http_;
  ServeConfig config_;
  LaunchIntent intent_;
  bool terminated_ = false;
  std::unique_ptr<Launcher> launcher_;
};

TEST_F(LauncherTest, LaunchRegistersRunsDeliversAndCommits) {
  aws::RunMicrovmRequest run;
  EXPECT_CALL(vms_, RunMicrovm(_)).WillOnce(Invoke([&](const aws::RunMicrovmRequest& r) {
    run = r;
    return Result<aws::Microvm>(Vm(aws::MicrovmState::kPending));
  }));
  http::HttpRequest delivered;
  EXPECT_CALL(http_, Send(_)).WillOnce(Invoke([&](const http::HttpRequest& r) {
    delivered = r;
    return Result<http::HttpResponse>(http::HttpResponse::Json(202, "{}"));
  }));
  LaunchOutcome o = L().Handle(intent_);
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  EXPECT_EQ(o.runner_name.rfind("mvr-demo-42-", 0), 0u);
  EXPECT_EQ(run.image_identifier, "img-1");
  EXPECT_TRUE(run.execution_role_arn.empty());
  EXPECT_EQ(run.maximum_duration_in_seconds, 600);
  EXPECT_EQ(run.client_token.rfind("mvr-launch-", 0), 0u);
  auto payload = supervisor::DecodeRunPayload(run.run_hook_payload.Reveal());
  ASSERT_TRUE(payload.ok());
  EXPECT_EQ(payload->mode, supervisor::LaunchMode::kDelivered);
  // A nonce of the launch's own, delivered with the runner and kept nowhere.
  const std::string nonce = payload->control_nonce.Reveal();
  EXPECT_TRUE(supervisor::CheckControlNonce(payload->control_nonce).ok()) << "no nonce";
  EXPECT_EQ(nlohmann::json::parse(delivered.body).value("nonce", ""), nonce);
  EXPECT_EQ(testing_support::StoreText(store_).find(nonce), std::string::npos);
  EXPECT_EQ(m_.sink.Joined().find(nonce), std::string::npos);
  EXPECT_EQ(o.detail.find(nonce), std::string::npos);
  EXPECT_NE(delivered.url.find("/v1/runner/start"), std::string::npos);
  EXPECT_EQ(delivered.headers.GetOr("X-aws-proxy-port", ""), "8080");
  auto row = table_.GetMapping(o.runner_name);
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ((*row)->microvm_id, "mvm-1");
  EXPECT_EQ(ClaimNow(), RunnerTable::ClaimOutcome::kLaunched);
  EXPECT_EQ(metrics_.Get(Counter::kLaunched), 1);
  EXPECT_EQ(m_.sink.Joined().find(kJit), std::string::npos);
}

TEST_F(LauncherTest, AJobNoLongerQueuedIsDroppedBeforeAnythingIsCreated) {
  github::Job job;
  job.status = github::JobStatus::kCompleted;
  job.conclusion = "cancelled";
  EXPECT_CALL(github_, GetJob(_, _)).WillOnce(Answer(Result<github::Job>(job)));
  EXPECT_CALL(github_, GenerateJitConfig(_, _)).Times(0);
  EXPECT_CALL(vms_, RunMicrovm(_)).Times(0);
  EXPECT_EQ(L().Handle(intent_).decision, LaunchDecision::kDroppedNotQueued);
  EXPECT_EQ(metrics_.Get(Counter::kDroppedNotQueued), 1);
  EXPECT_EQ(ClaimNow(), RunnerTable::ClaimOutcome::kWon);  // no claim was taken
}

TEST_F(LauncherTest, AJobTakenByARunnerLaunchedForAnotherJobStillGetsItsLaunch) {
  github::Job job;
  job.status = github::JobStatus::kInProgress;
  job.runner_name = "mvr-demo-41-0a1b2c3d";
  github::Job waiting;  // 41, whose runner took 42
  waiting.status = github::JobStatus::kQueued;
  EXPECT_CALL(github_, GetJob(_, 42)).WillOnce(Answer(Result<github::Job>(job)));
  EXPECT_CALL(github_, GetJob(_, 41)).WillOnce(Answer(Result<github::Job>(waiting)));
  EXPECT_EQ(L().Handle(intent_).decision, LaunchDecision::kLaunched);
}

// Job 42 runs on the runner launched for 41, and 41 on the runner an earlier attempt launched for
// 42: both have runners, so this launch would only add an idle VM.
TEST_F(LauncherTest, AChainOfTakenJobsThatClosesOnThisJobNeedsNoLaunch) {
  EXPECT_CALL(github_, GetJob(_, _)).WillRepeatedly(Invoke([](const auto&, int64_t id) {
    github::Job job;
    job.id = id;
    job.status = github::JobStatus::kInProgress;
    job.runner_name = id == 42 ? "mvr-demo-41-0a1b2c3d" : "mvr-demo-42-deadbeef";
    return Result<github::Job>(job);
  }));
  EXPECT_CALL(vms_, RunMicrovm(_)).Times(0);
  EXPECT_EQ(L().Handle(intent_).decision, LaunchDecision::kDroppedNotQueued);
}

TEST_F(LauncherTest, AChainOfTakenJobsThatEndsWithAWaitingJobGetsTheLaunch) {
  EXPECT_CALL(github_, GetJob(_, _)).WillRepeatedly(Invoke([](const auto&, int64_t id) {
    github::Job job;
    job.id = id;
    job.status = id == 43 ? github::JobStatus::kQueued : github::JobStatus::kCompleted;
    job.runner_name = id == 42 ? "mvr-demo-41-0a1b2c3d" : "mvr-demo-43-0a1b2c3d";
    return Result<github::Job>(job);
  }));
  EXPECT_EQ(L().Handle(intent_).decision, LaunchDecision::kLaunched);
}

TEST_F(LauncherTest, AJobOfARepositoryOutsideTheSetIsIgnored) {
  intent_.repository = "octo/other";
  EXPECT_CALL(github_, GenerateJitConfig(_, _)).Times(0);
  EXPECT_EQ(L().Handle(intent_).decision, LaunchDecision::kIgnored);
  ::testing::Mock::VerifyAndClearExpectations(&github_);
  intent_.repository = "OCTO/App";
  EXPECT_EQ(L().Handle(intent_).decision, LaunchDecision::kLaunched);
}

TEST_F(LauncherTest, TheStillQueuedCheckFailsOpen) {
  EXPECT_CALL(github_, GetJob(_, _))
      .WillOnce(Answer(Result<github::Job>(Transient("GitHub is having a moment"))));
  EXPECT_EQ(L().Handle(intent_).decision, LaunchDecision::kLaunched);
}

TEST_F(LauncherTest, AtTheCapTheLaunchIsDeferredNotFailed) {
  aws::ListMicrovmsResponse full;
  for (const char* id : {"mvm-a", "mvm-b"}) {
    aws::MicrovmSummary s;
    s.microvm_id = id;
    s.state = aws::MicrovmState::kRunning;
    full.items.push_back(s);
  }
  EXPECT_CALL(vms_, ListMicrovms(_)).WillOnce(Return(full));
  EXPECT_CALL(github_, GenerateJitConfig(_, _)).Times(0);
  LaunchOutcome o = L().Handle(intent_);
  EXPECT_EQ(o.decision, LaunchDecision::kDeferred);
  EXPECT_GT(o.retry_after, Duration(0));
  EXPECT_EQ(metrics_.Get(Counter::kDeferred), 1);
  EXPECT_EQ(metrics_.Get(Counter::kFailed), 0);
}

TEST_F(LauncherTest, AFailureAfterTheVmExistsTerminatesItRemovesTheRunnerAndReleasesTheClaim) {
  EXPECT_CALL(http_, Send(_))
      .WillRepeatedly(Return(http::HttpResponse::Json(
          400, R"({"error":"malformed","message":"bad request","state":"IDLE"})")));
  EXPECT_CALL(vms_, TerminateMicrovm("mvm-1")).Times(1);
  EXPECT_CALL(github_, DeleteRunner(_, 77)).Times(1);
  LaunchOutcome o = L().Handle(intent_);
  EXPECT_EQ(o.decision, LaunchDecision::kFailed);
  EXPECT_EQ(o.detail.find(kJit), std::string::npos);
  EXPECT_EQ(ClaimNow(), RunnerTable::ClaimOutcome::kWon);  // released: a retry can claim it
  EXPECT_EQ(metrics_.Get(Counter::kFailed), 1);
}

TEST_F(LauncherTest, AClaimIsKeptWhileItsVmCannotBeConfirmedGone) {
  EXPECT_CALL(http_, Send(_))
      .WillRepeatedly(Return(http::HttpResponse::Json(400, R"({"error":"malformed"})")));
  EXPECT_CALL(vms_, TerminateMicrovm(_))
      .WillRepeatedly(Return(Status(Code::kUnauthorized, "denied")));
  EXPECT_EQ(L().Handle(intent_).decision, LaunchDecision::kFailed);
  EXPECT_EQ(ClaimNow(), RunnerTable::ClaimOutcome::kBusy);
}

TEST_F(LauncherTest, AFailedLaunchRemovesItsRegistration) {
  EXPECT_CALL(vms_, RunMicrovm(_))
      .WillRepeatedly(Return(Result<aws::Microvm>(InvalidArgument("no such image"))));
  EXPECT_CALL(github_, DeleteRunner(_, 77)).Times(1);
  EXPECT_CALL(vms_, TerminateMicrovm(_)).Times(0);
  EXPECT_EQ(L().Handle(intent_).decision, LaunchDecision::kFailed);
  EXPECT_EQ(ClaimNow(), RunnerTable::ClaimOutcome::kWon);
}

TEST_F(LauncherTest, ADuplicateOfALaunchedJobCreatesNothing) {
  ASSERT_EQ(L().Handle(intent_).decision, LaunchDecision::kLaunched);
  EXPECT_CALL(github_, GenerateJitConfig(_, _)).Times(0);
  EXPECT_CALL(vms_, RunMicrovm(_)).Times(0);
  EXPECT_EQ(L().Handle(intent_).decision, LaunchDecision::kDuplicate);
}

TEST_F(LauncherTest, TerminateEndsTheMappedVmAndAnUnknownRunnerIsANoOp) {
  LaunchOutcome launched = L().Handle(intent_);
  ASSERT_EQ(launched.decision, LaunchDecision::kLaunched);
  TerminateIntent unknown;
  unknown.runner_name = "mvr-demo-9-ffffffff";
  EXPECT_CALL(vms_, TerminateMicrovm(_)).Times(0);
  EXPECT_EQ(L().Handle(unknown).decision, LaunchDecision::kIgnored);
  ::testing::Mock::VerifyAndClearExpectations(&vms_);
  TerminateIntent done;
  done.runner_name = launched.runner_name;
  done.repository = "octo/app";
  done.job_id = 42;
  EXPECT_CALL(vms_, TerminateMicrovm("mvm-1")).WillOnce(Invoke([this](const std::string&) {
    terminated_ = true;
    return Status::Ok();
  }));
  EXPECT_EQ(L().Handle(done).decision, LaunchDecision::kTerminated);
  EXPECT_FALSE(*table_.GetMapping(launched.runner_name));
  EXPECT_EQ(metrics_.Get(Counter::kTerminated), 1);
}

}  // namespace
}  // namespace mvr::runnerset
