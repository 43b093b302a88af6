// The Action's start and stop flows run for real (retries, parsing, SigV4, the handle) against the
// in-process MicroVMs and GitHub models; each test states what the models hold afterwards.
#include "action/start_stop.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "base/encoding.h"
#include "supervisor/run_payload.h"
#include "tests/action/inprocess_world.h"

namespace mvr::action {
namespace {

using nlohmann::json;

// The base64url payload of a sealed lmvm1_ handle (between the prefix and the seal).
std::string HandlePayload(const std::string& handle) {
  return handle.substr(6, handle.rfind('.') - 6);
}

class StartFlowTest : public testing::InProcessActionTest {};
class StopFlowTest : public testing::InProcessActionTest {
 protected:
  StopCommand Warm(const std::string& microvm_id, TimePoint reuse_deadline,
                   int64_t runner_id = 11) {
    ServerHandle h = Handle(microvm_id, reuse_deadline);
    h.runner_id = runner_id;
    StopCommand c;
    c.server = EncodeServerHandle(h, control_key_);
    return c;
  }
};

TEST_F(StartFlowTest, EphemeralStartRegistersLaunchesAndWaitsForTheExactRunner) {
  const TimePoint start = clock_.Now();
  Result<StartResult> r = Start();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->label, label_);
  EXPECT_TRUE(r->server.empty());
  // It waited for the boot (9.9 s modelled), and the VM it reports is the one that runs.
  EXPECT_GE(clock_.Now() - start, std::chrono::milliseconds(9'900));
  EXPECT_EQ(VmIds(), std::vector<std::string>{r->microvm_id});
  EXPECT_EQ(VmState(r->microvm_id), "RUNNING");
  // The one runner GitHub knows is the one the VM's payload carried, online.
  ASSERT_EQ(Runners().size(), 1u);
  EXPECT_EQ(Runners()[0].id, r->runner_id);
  EXPECT_EQ(Runners()[0].name, label_);
  EXPECT_TRUE(Runners()[0].online);
  // Registered as what it runs on, an ARM64 MicroVM (issue 52, item 6), never x64.
  EXPECT_EQ(Runners()[0].registered_labels,
            (std::vector<std::string>{"self-hosted", "linux", "ARM64", label_}));
  const json vm = microvms_->Describe(r->microvm_id).value();
  // As long as its job may run (issue 52, item 8); max-lifetime-seconds is the warm lifetime.
  EXPECT_EQ(vm["maximumDurationInSeconds"], command_.ephemeral_max_lifetime_seconds);
  ASSERT_EQ(Calls("RunMicrovm"), 1);
  // The image's name is resolved to its ARN just before the launch.
  ASSERT_EQ(microvms_->calls()[0].operation, "GetMicrovmImage");
  EXPECT_EQ(microvms_->calls()[1].client_token,
            LaunchClientToken(DeriveIdentity(command_.identity).value(),
                              "runner:" + std::to_string(r->runner_id)));
  // The model refuses a runHookPayload over 4096 bytes; this one reached the guest.
  ASSERT_EQ(guest_.payloads.size(), 1u);
  EXPECT_EQ(guest_.payloads[0].mode, supervisor::LaunchMode::kEphemeral);
  ASSERT_FALSE(secrets_.empty());
  EXPECT_EQ(guest_.payloads[0].jit_config.Reveal(), secrets_.front());
  ExpectNoSecrets(Status::Ok());
}

TEST_F(StartFlowTest, QuotaExceededFailsAtOnceAndRemovesTheRunner) {
  auto options = Options();
  options.model.memory_quota_mib = 1;
  Rebuild(options);
  Result<StartResult> r = Start();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kQuotaExceeded);
  EXPECT_NE(r.status().message().find("capacity exhausted"), std::string::npos);
  EXPECT_NE(r.status().message().find("removed JIT runner"), std::string::npos);
  EXPECT_TRUE(VmIds().empty());
  EXPECT_TRUE(Runners().empty());
  EXPECT_EQ(Calls("RunMicrovm"), 1);  // not retried
  ExpectNoSecrets(r.status());
}

TEST_F(StartFlowTest, ThrottledRunIsRetriedWithTheSameClientToken) {
  auto options = Options();
  options.model.rate_limits["RunMicrovm"] = {0.5, 1};  // one launch, then one every 2 s
  Rebuild(options);
  const std::string other = microvms_->WithModel([](emulate::microvms::MicrovmModel& model) {
    return model.Invoke("RunMicrovm", {{"imageIdentifier", "img-1"}}).value()["microvmId"];
  });
  Result<StartResult> r = Start();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<emulate::microvms::ApiCall> runs;
  for (const auto& call : microvms_->calls()) {
    if (call.operation == "RunMicrovm") runs.push_back(call);
  }
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].status, 429);
  EXPECT_EQ(runs[1].status, 200);
  EXPECT_EQ(runs[0].client_token, runs[1].client_token);
  EXPECT_GE(sleeper_.total().count(), 2000);  // Retry-After was honoured
  EXPECT_EQ(VmIds().size(), 2u);              // the other VM and one for this job
  EXPECT_EQ(VmState(r->microvm_id), "RUNNING");
  EXPECT_NE(r->microvm_id, other);
}

TEST_F(StartFlowTest, VmThatDiesWhileBootingFailsWithItsReasonAndIsCleanedUp) {
  guest_.fail_run_hook = "run hook returned 500";
  Result<StartResult> r = Start();
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(VmIds().size(), 1u);
  const std::string id = VmIds()[0];
  EXPECT_NE(r.status().message().find("run hook returned 500"), std::string::npos);
  EXPECT_NE(r.status().message().find("terminated MicroVM " + id), std::string::npos);
  EXPECT_NE(r.status().message().find("removed JIT runner"), std::string::npos);
  EXPECT_EQ(VmState(id), "TERMINATED");
  EXPECT_TRUE(Runners().empty());
}

TEST_F(StartFlowTest, RunnerThatNeverComesOnlineTimesOutAndEverythingIsCleaned) {
  command_.startup_timeout = std::chrono::seconds(60);
  guest_.runners_connect = false;
  const TimePoint start = clock_.Now();
  Result<StartResult> r = Start();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("timed out waiting for runner"), std::string::npos);
  EXPECT_NE(r.status().message().find("cleaned up"), std::string::npos);
  EXPECT_GE(clock_.Now() - start, std::chrono::seconds(60));
  ASSERT_EQ(VmIds().size(), 1u);
  EXPECT_EQ(VmState(VmIds()[0]), "TERMINATED");
  EXPECT_TRUE(Runners().empty());
  ExpectNoSecrets(r.status());
}

TEST_F(StartFlowTest, JitFailureLaunchesNothing) {
  command_.endpoints.github_token = Secret("ghp_NOTTHETOKEN");
  Rebuild(Options());  // the client presents the wrong token
  github_ = github::GitHubClient::Create(github_service_->api(), clock_,
                                         github::GitHubAuth::Token(Secret("ghp_NOTTHETOKEN")))
                .value();
  Result<StartResult> r = Start();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnauthorized);
  EXPECT_TRUE(VmIds().empty());
  EXPECT_TRUE(microvms_->calls().empty());
}

// GitHub's answer to generate-jitconfig with an encoded_jit_config too big (and random) to fit
// a 4096-byte run-hook payload, whatever the compression.
class OversizedJit final : public http::HttpClient {
 public:
  OversizedJit(http::HttpClient& inner, Random& random) : inner_(inner), random_(random) {}
  Result<http::HttpResponse> Send(const http::HttpRequest& request) override {
    Result<http::HttpResponse> res = inner_.Send(request);
    if (!res.ok() || request.url.find("generate-jitconfig") == std::string::npos) return res;
    json body = json::parse(res->body);
    body["encoded_jit_config"] = Base64Encode(random_.Bytes(9000));
    res->body = body.dump();
    return res;
  }

 private:
  http::HttpClient& inner_;
  Random& random_;
};

TEST_F(StartFlowTest, OversizedPayloadIsRefusedBeforeAnyVmExists) {
  OversizedJit oversized(github_service_->api(), random_);
  github_ = github::GitHubClient::Create(oversized, clock_,
                                         github::GitHubAuth::Token(Secret(testing::kGithubToken)))
                .value();
  Result<StartResult> r = Start();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("run-hook payload"), std::string::npos);
  EXPECT_TRUE(microvms_->calls().empty());
  EXPECT_TRUE(Runners().empty());  // the runner it registered was removed
}

TEST_F(StartFlowTest, LeftoverRunnerFromAnEarlierAttemptIsReplaced) {
  emulate::github::JitRequest earlier;
  earlier.name = label_;
  earlier.runner_group_id = 1;
  earlier.labels = {"self-hosted"};
  const int64_t old_id =
      github_model_->GenerateJitConfig(emulate::github::Scope::Repo("octo", "app"), earlier)
          .value()
          .runner.id;
  Result<StartResult> r = Start();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(Runners().size(), 1u);
  EXPECT_EQ(Runners()[0].id, r->runner_id);
  EXPECT_NE(r->runner_id, old_id);
  EXPECT_TRUE(Runners()[0].online);
}

TEST_F(StartFlowTest, WarmNewLaunchesWithTheWarmPayloadAndDeliversTheRunner) {
  command_.server = "proof";
  Result<StartResult> r = Start();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->warm_hit);
  ASSERT_EQ(guest_.payloads.size(), 1u);
  EXPECT_EQ(guest_.payloads[0].mode, supervisor::LaunchMode::kWarm);
  const json vm = microvms_->Describe(r->microvm_id).value();
  EXPECT_EQ(vm["maximumDurationInSeconds"], 7'200);
  // The runner arrived through the VM's ingress on the control port, the proxy's own headers
  // (its auth token among them) removed on the way, and it is the runner now online.
  EXPECT_EQ(guest_.control_paths,
            std::vector<std::string>{"POST /v1/runner/start @" + r->microvm_id + ":8080"});
  EXPECT_FALSE(guest_.saw_proxy_header);
  ASSERT_EQ(Runners().size(), 1u);
  EXPECT_EQ(Runners()[0].id, r->runner_id);
  EXPECT_TRUE(Runners()[0].online);
  ServerHandle h = DecodeServerHandle(r->server, {control_key_}).value();
  EXPECT_EQ(h.microvm_id, r->microvm_id);
  const auto started = FromUnixSeconds(static_cast<int64_t>(vm["startedAt"].get<double>()));
  EXPECT_EQ(h.reuse_deadline, started + std::chrono::seconds(7'200 - 1'800));
  std::vector<std::string> secrets = secrets_;
  secrets.push_back(testing::kGithubToken);
  for (const std::string& secret : secrets) {
    EXPECT_EQ(r->server.find(secret), std::string::npos);
    EXPECT_EQ(Base64UrlDecode(HandlePayload(r->server)).value().find(secret), std::string::npos);
  }
}

// The VM's nonce is derived from its launch token under MVR_CONTROL_KEY: the token goes in the
// handle, the nonce only into the payload and the delivery, masked like every secret.
TEST_F(StartFlowTest, WarmNewDeliversTheNonceItLaunchedWithAndTheHandleKeepsOnlyTheToken) {
  command_.server = "proof";
  Result<StartResult> r = Start();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(guest_.payloads.size(), 1u);
  const std::string nonce = guest_.payloads[0].control_nonce.Reveal();
  ASSERT_TRUE(supervisor::CheckControlNonce(guest_.payloads[0].control_nonce).ok());
  EXPECT_EQ(guest_.control_nonces, std::vector<std::string>{nonce});
  const ServerHandle h = DecodeServerHandle(r->server, {control_key_}).value();
  ASSERT_FALSE(h.launch_token.empty());
  EXPECT_EQ(supervisor::DeriveBoundControlNonce(control_key_, {"123", "us-east-1"}, h.launch_token)
                ->Reveal(),
            nonce);
  EXPECT_EQ(Base64UrlDecode(HandlePayload(r->server)).value().find(nonce), std::string::npos);
  EXPECT_NE(std::find(secrets_.begin(), secrets_.end(), nonce), secrets_.end()) << "not masked";
}

TEST_F(StartFlowTest, ResumeDeliversTheNonceDerivedFromTheHandlesLaunchToken) {
  const std::string id = SuspendedVm();
  ServerHandle h = Handle(id, clock_.Now() + std::chrono::hours(1));
  h.launch_token = "mvr-warm-launch-token-1";
  command_.server = EncodeServerHandle(h, control_key_);
  Result<StartResult> r = Start();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string nonce =
      supervisor::DeriveBoundControlNonce(control_key_, {"123", "us-east-1"}, h.launch_token)
          ->Reveal();
  EXPECT_EQ(guest_.control_nonces, std::vector<std::string>{nonce});
  EXPECT_EQ(DecodeServerHandle(r->server, {control_key_})->launch_token, h.launch_token);
}

// A handle from before nonces: its VM took none, and none is sent.
TEST_F(StartFlowTest, ResumeOfAHandleWithoutALaunchTokenSendsNoNonce) {
  const std::string id = SuspendedVm();
  command_.server =
      EncodeServerHandle(Handle(id, clock_.Now() + std::chrono::hours(1)), control_key_);
  ASSERT_TRUE(Start().ok());
  EXPECT_EQ(guest_.control_nonces, std::vector<std::string>{""});
}

TEST_F(StartFlowTest, WarmAndPooledStartsRefuseToRunWithoutAControlKey) {
  control_key_ = Secret();
  command_.server = "proof";
  Result<StartResult> r = Start();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("MVR_CONTROL_KEY"), std::string::npos);
  EXPECT_TRUE(VmIds().empty()) << "nothing is launched";
  EXPECT_TRUE(Runners().empty()) << "nothing is registered";
  // Ephemeral starts deliver nothing and need no key.
  command_.server.clear();
  EXPECT_TRUE(Start().ok());
}

TEST_F(StartFlowTest, ResumeOneSecondBeforeTheReuseDeadlineProceeds) {
  const std::string id = SuspendedVm();
  command_.server =
      EncodeServerHandle(Handle(id, clock_.Now() + std::chrono::seconds(1)), control_key_);
  Result<StartResult> r = Start();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->warm_hit);
  EXPECT_EQ(VmState(id), "RUNNING");
  EXPECT_EQ(DecodeServerHandle(r->server, {control_key_})->runner_id, r->runner_id);
  ASSERT_EQ(Runners().size(), 1u);
  EXPECT_EQ(Runners()[0].id, r->runner_id);
  EXPECT_TRUE(Runners()[0].online);
}

TEST_F(StartFlowTest, ResumeAtOrAfterTheReuseDeadlineTerminatesTheVmAndSaysSo) {
  for (int offset : {0, -1}) {
    const std::string id = SuspendedVm();
    command_.server =
        EncodeServerHandle(Handle(id, clock_.Now() + std::chrono::seconds(offset)), control_key_);
    Result<StartResult> r = Start();
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("reuse deadline"), std::string::npos);
    EXPECT_NE(r.status().message().find("terminated MicroVM " + id), std::string::npos)
        << r.status().message();
    EXPECT_EQ(VmState(id), "TERMINATED");
  }
  EXPECT_TRUE(Runners().empty());  // no JIT runner
  EXPECT_EQ(Calls("ResumeMicrovm"), 0);
}

TEST_F(StartFlowTest, ResumePastTheReuseDeadlineLeavesAVmAnotherJobHoldsToThatJob) {
  const std::string id = RunningVm();
  command_.server =
      EncodeServerHandle(Handle(id, clock_.Now() - std::chrono::seconds(1)), control_key_);
  Result<StartResult> r = Start();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("reuse deadline"), std::string::npos);
  EXPECT_EQ(VmState(id), "RUNNING");
  EXPECT_EQ(Calls("TerminateMicrovm"), 0);
}

TEST_F(StartFlowTest, StaleHandleOfATerminatedVmFailsWithoutALifecycleCall) {
  const std::string id = RunningVm({{"maximumDurationInSeconds", 60}});
  clock_.Advance(std::chrono::seconds(61));
  ASSERT_EQ(VmState(id), "TERMINATED");
  command_.server =
      EncodeServerHandle(Handle(id, clock_.Now() + std::chrono::hours(1)), control_key_);
  Result<StartResult> r = Start();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_NE(r.status().message().find("maximumDurationInSeconds (60) reached"), std::string::npos)
      << r.status().message();
  for (const char* op : {"ResumeMicrovm", "SuspendMicrovm", "TerminateMicrovm"}) {
    EXPECT_EQ(Calls(op), 0) << op;
  }
}

TEST_F(StartFlowTest, JitFailureDoesNotTouchTheCachedVm) {
  const std::string id = SuspendedVm();
  command_.server =
      EncodeServerHandle(Handle(id, clock_.Now() + std::chrono::hours(1)), control_key_);
  github_ = github::GitHubClient::Create(github_service_->api(), clock_,
                                         github::GitHubAuth::Token(Secret("ghp_NOTTHETOKEN")))
                .value();
  ASSERT_FALSE(Start().ok());
  EXPECT_EQ(VmState(id), "SUSPENDED");
  EXPECT_EQ(Calls("ResumeMicrovm"), 0);
}

TEST_F(StartFlowTest, ControlDeliveryFailureRemovesTheRunnerAndSuspendsTheVm) {
  const std::string id = SuspendedVm();
  command_.server =
      EncodeServerHandle(Handle(id, clock_.Now() + std::chrono::hours(1)), control_key_);
  guest_.start_status = 409;
  guest_.start_body = R"({"error":"not_idle","message":"busy"})";
  Result<StartResult> r = Start();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_NE(r.status().message().find("suspended MicroVM " + id), std::string::npos)
      << r.status().message();
  EXPECT_EQ(VmState(id), "SUSPENDED");
  EXPECT_TRUE(Runners().empty());
  ExpectNoSecrets(r.status());
}

TEST_F(StartFlowTest, WarmModeIsRefusedForForkPullRequests) {
  command_.server = "proof";
  command_.event_name = "pull_request";
  command_.event_json =
      R"({"pull_request":{"head":{"repo":{"full_name":"evil/app"}},"base":{"repo":{"full_name":"octo/app"}}}})";
  Result<StartResult> r = Start();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("forks"), std::string::npos);
  EXPECT_TRUE(microvms_->calls().empty());
  EXPECT_TRUE(Runners().empty());
}

TEST_F(StopFlowTest, EmptyInputsTouchNothing) {
  Result<StopResult> r = StopFlow(Deps()).Run(StopCommand());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->outcome, "nothing to stop");
  EXPECT_TRUE(microvms_->calls().empty());
}

TEST_F(StopFlowTest, EphemeralStopTerminatesAndIsIdempotent) {
  const std::string id = RunningVm();
  StopCommand c;
  c.microvm_id = id;
  ASSERT_TRUE(Stop(c).ok());
  EXPECT_EQ(VmState(id), "TERMINATED");
  EXPECT_TRUE(Stop(c).ok());               // already terminated
  clock_.Advance(std::chrono::hours(25));  // AWS lists a terminated VM for about a day
  ASSERT_EQ(microvms_->Describe(id).status().code(), Code::kNotFound);
  EXPECT_TRUE(Stop(c).ok());  // gone
}

TEST_F(StopFlowTest, WarmStopBeforeTheDeadlineSuspends) {
  const std::string id = RunningVm();
  Result<StopResult> r = Stop(Warm(id, clock_.Now() + std::chrono::seconds(1)));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->outcome, "suspended");
  EXPECT_EQ(VmState(id), "SUSPENDED");
  // It asked the supervisor (idle) through the ingress before suspending.
  EXPECT_EQ(guest_.control_paths, std::vector<std::string>{"GET /v1/status @" + id + ":8080"});
}

TEST_F(StopFlowTest, WarmStopAtOrAfterTheDeadlineTerminates) {
  for (int offset : {0, -1}) {
    const std::string id = SuspendedVm();
    Result<StopResult> r = Stop(Warm(id, clock_.Now() + std::chrono::seconds(offset)));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_NE(r->outcome.find("terminated"), std::string::npos);
    EXPECT_EQ(VmState(id), "TERMINATED");
  }
}

TEST_F(StopFlowTest, WarmStopRefusesABusyRunnerWithoutALifecycleCall) {
  const std::string id = RunningVm();
  const emulate::github::Runner busy = OnlineRunner("x", /*busy=*/true);
  ASSERT_TRUE(busy.busy);
  Result<StopResult> r = Stop(Warm(id, clock_.Now() + std::chrono::hours(1), busy.id));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_EQ(VmState(id), "RUNNING");
  EXPECT_TRUE(RunnerExists(busy.id));
  for (const char* op : {"SuspendMicrovm", "TerminateMicrovm"}) EXPECT_EQ(Calls(op), 0) << op;
}

}  // namespace
}  // namespace mvr::action
