// The mocked fixture of start_retry_test (and the constants the pool flow fixture shares): strict
// MicroVMs, GitHub and HTTP mocks over a manual clock and a start command for one job. The main
// start/stop flow tests run against the in-process models instead (inprocess_world.h).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "action/identity.h"
#include "action/server_handle.h"
#include "action/start_stop.h"
#include "tests/action/fakes.h"

namespace mvr::action {

using ::testing::_;
using ::testing::AnyNumber;
using ::testing::Invoke;
using testing::MockGitHub;
using testing::MockHttp;
using testing::MockMicrovms;
using ::testing::NiceMock;
using ::testing::Return;
using ::testing::StrictMock;

inline const char kJitFixture[] = "JITFIXTURE-eyJydW5uZXIiOiJzZWNyZXQtcnVubmVyLWNvbmZpZyJ9";
inline const char kTokenFixture[] = "ghp_TOKENFIXTURE0123456789";
inline const char kProxyTokenFixture[] = "PROXYTOKENFIXTURE-abcdef";
inline constexpr int64_t kRunnerId = 77;

inline aws::Microvm Vm(aws::MicrovmState state, const std::string& reason = "") {
  aws::Microvm vm;
  vm.microvm_id = "mvm-1";
  vm.state = state;
  vm.endpoint = "http://127.0.0.1:1/";
  vm.image_version = "3";
  vm.started_at = FromUnixSeconds(1'767'225'600);
  vm.state_reason = reason;
  return vm;
}

inline github::Runner OnlineRunner(const std::string& name, bool busy = false) {
  github::Runner r;
  r.id = kRunnerId;
  r.name = name;
  r.status = "online";
  r.busy = busy;
  return r;
}

class StartStopTest : public ::testing::Test {
 protected:
  StartStopTest() {
    logger_.redactor().Add(kTokenFixture);
    command_.endpoints.repository = "octo/app";
    command_.endpoints.github_api_url = "https://api.github.com";
    command_.endpoints.github_token = Secret(kTokenFixture);
    command_.endpoints.region = "us-east-1";
    command_.identity.repository_id = "123";
    command_.identity.run_id = "456";
    command_.identity.run_attempt = "1";
    command_.identity.job = "build";
    command_.image_id = "img-1";
    command_.event_name = "push";
    label_ = DeriveIdentity(command_.identity).value().label;
  }

  ActionDeps Deps() {
    return ActionDeps{
        seam_,  vms_, github_, http_, [this](const Secret& s) { secrets_.push_back(s.Reveal()); },
        nullptr};
  }

  void ExpectJit() {
    EXPECT_CALL(github_, GenerateJitConfig(_, _))
        .WillOnce(Invoke([](const github::RunnerScope&, const github::JitConfigRequest& r) {
          github::JitConfig jit;
          jit.runner = OnlineRunner(r.name);
          jit.runner.status = "offline";
          jit.encoded_jit_config = Secret(kJitFixture);
          return Result<github::JitConfig>(jit);
        }));
  }

  // One CreateMicrovmAuthToken, answered with the proxy token fixture.
  void ExpectControlToken() {
    EXPECT_CALL(vms_, CreateMicrovmAuthToken(_)).WillOnce(Invoke([](auto&) {
      aws::MicrovmAuthToken t;
      t.auth_token["X-aws-proxy-auth"] = Secret(kProxyTokenFixture);
      return Result<aws::MicrovmAuthToken>(t);
    }));
  }

  // One GET /v1/status through the ingress, answered with the supervisor's state and request.
  // Several are answered newest first (gmock's order).
  void ExpectSupervisorStatus(const std::string& state, const std::string& request_id) {
    EXPECT_CALL(http_, Send(_))
        .WillOnce(Invoke([=](const http::HttpRequest& req) {
          EXPECT_EQ(req.method, "GET");
          EXPECT_NE(req.url.find("/v1/status"), std::string::npos);
          EXPECT_EQ(req.headers.GetOr("X-aws-proxy-port", ""), "8080");
          return Result<http::HttpResponse>(http::HttpResponse::Json(
              200, "{\"state\":\"" + state + "\",\"currentRequestId\":\"" + request_id + "\"}"));
        }))
        .RetiresOnSaturation();
  }

  ServerHandle Handle(TimePoint reuse_deadline) {
    ServerHandle h;
    h.microvm_id = "mvm-1";
    h.region = "us-east-1";
    h.repository_id = "123";
    h.server_name = "proof";
    h.started_at = reuse_deadline - std::chrono::seconds(5'400);
    h.max_lifetime_seconds = 7'200;
    h.reuse_deadline = reuse_deadline;
    h.runner_id = 11;
    h.runner_name = "lambda-mvm-old";
    return h;
  }

  ManualClock clock_;
  ManualSleeper sleeper_{clock_};
  SeededRandom random_{7};
  SeededRandom secure_{8};
  MemorySink sink_;
  Logger logger_{sink_, clock_, LogLevel::kDebug};
  Seam seam_{clock_, sleeper_, random_, secure_, logger_};
  StrictMock<MockMicrovms> vms_;
  StrictMock<MockGitHub> github_;
  StrictMock<MockHttp> http_;
  std::vector<std::string> secrets_;
  StartCommand command_;
  std::string label_;
};

class StopTest : public StartStopTest {
 protected:
  StopCommand Stop() {
    StopCommand c;
    c.endpoints = command_.endpoints;
    return c;
  }
};

}  // namespace mvr::action
