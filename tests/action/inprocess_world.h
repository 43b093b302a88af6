// The Action's world in one process: the in-process platform (tests/support/inprocess_platform.h:
// the MicroVMs and GitHub models behind the real clients, a stand-in supervisor in every VM, a
// manual clock that the clients' own sleeps move) and the Action's command and dependencies. Tests
// start and stop through the real flows and assert on what the models hold afterwards (VMs and
// their states, runners registered) instead of on call sequences. The platform's parts keep the
// names the Action's tests have always used for them.
// Thread-safety: one owner (the test).
#pragma once

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "action/identity.h"
#include "action/server_handle.h"
#include "action/start_stop.h"
#include "support/inprocess_platform.h"

namespace mvr::action::testing {

inline constexpr const char* kGithubToken = mvr::testing::kPlatformGithubToken;
inline constexpr const char* kAccessKeyId = mvr::testing::kPlatformAccessKeyId;
inline constexpr const char* kSecretKey = mvr::testing::kPlatformSecretKey;
using mvr::testing::RefusingApi;
using mvr::testing::StandInSupervisor;

class InProcessActionTest : public ::testing::Test {
 protected:
  InProcessActionTest() {
    command_.endpoints.repository = "octo/app";
    command_.endpoints.github_api_url = emulate::github::InProcessGithub::kApiUrl;
    command_.endpoints.github_token = Secret(kGithubToken);
    command_.endpoints.region = "us-east-1";
    command_.identity.repository_id = "123";
    command_.identity.run_id = "456";
    command_.identity.run_attempt = "1";
    command_.identity.job = "build";
    command_.image_id = "img-1";
    // What ParseStart gives by default: AWS's managed connectors of the region.
    command_.ingress_connectors = {
        "arn:aws:lambda:us-east-1:aws:network-connector:aws-network-connector:ALL_INGRESS"};
    command_.egress_connectors = {
        "arn:aws:lambda:us-east-1:aws:network-connector:aws-network-connector:INTERNET_EGRESS"};
    command_.event_name = "push";
    label_ = DeriveIdentity(command_.identity).value().label;
  }

  static emulate::microvms::InProcessMicrovmsOptions Options() {
    return mvr::testing::InProcessPlatform::DefaultOptions();
  }
  void Rebuild(emulate::microvms::InProcessMicrovmsOptions options) {
    platform_.Rebuild(std::move(options));
  }

  ActionDeps Deps() {
    return ActionDeps{seam_,
                      *vms_,
                      *github_,
                      microvms_->ingress(),
                      [this](const Secret& s) { secrets_.push_back(s.Reveal()); },
                      nullptr,
                      pool_store_,
                      control_key_};
  }
  Result<StartResult> Start() { return StartFlow(Deps()).Run(command_); }
  Result<StopResult> Stop(StopCommand c) {
    c.endpoints = command_.endpoints;
    return StopFlow(Deps()).Run(c);
  }

  // --- the models' observable state (see InProcessPlatform) ---
  std::string VmState(const std::string& microvm_id) { return platform_.VmState(microvm_id); }
  std::string VmReason(const std::string& microvm_id) { return platform_.VmReason(microvm_id); }
  std::vector<std::string> VmIds() { return platform_.VmIds(); }
  std::vector<emulate::github::Runner> Runners() { return platform_.Runners(); }
  bool RunnerExists(int64_t runner_id) { return platform_.RunnerExists(runner_id); }
  int Calls(const std::string& operation) { return platform_.Calls(operation); }

  // --- setting the world up through the models directly ---
  std::string RunningVm(const nlohmann::json& extra = nlohmann::json::object()) {
    return platform_.RunningVm(extra);
  }
  std::string SuspendedVm() { return platform_.SuspendedVm(); }
  // A handle to `microvm_id` whose reuse deadline is `reuse_deadline`.
  ServerHandle Handle(const std::string& microvm_id, TimePoint reuse_deadline);
  emulate::github::Runner OnlineRunner(const std::string& name, bool busy) {
    return platform_.OnlineRunner(name, busy);
  }

  // Nothing secret (the token, any JIT config or proxy token the flow met) in `s` or the log.
  void ExpectNoSecrets(const Status& s);

  mvr::testing::InProcessPlatform platform_;
  ManualClock& clock_ = platform_.m.clock;
  ManualSleeper& sleeper_ = platform_.m.sleeper;
  SeededRandom& random_ = platform_.m.random;
  MemorySink& sink_ = platform_.m.sink;
  Logger& logger_ = platform_.m.logger;
  Seam& seam_ = platform_.m.seam;
  emulate::github::GithubModel*& github_model_ = platform_.github_model;
  StandInSupervisor& guest_ = platform_.guest;
  std::unique_ptr<emulate::microvms::InProcessMicrovms>& microvms_ = platform_.microvms;
  std::unique_ptr<emulate::github::InProcessGithub>& github_service_ = platform_.github_service;
  aws::StaticCredentialsProvider& credentials_ = platform_.credentials;
  RefusingApi& vms_api_ = platform_.vms_api;
  RefusingApi& github_api_ = platform_.github_api;
  std::unique_ptr<aws::MicrovmsClient>& vms_ = platform_.vms_client;
  std::unique_ptr<github::GitHubClient>& github_ = platform_.github_client;
  store::Store* pool_store_ = nullptr;  // the state-table pooled flows use
  // MVR_CONTROL_KEY; a test clears it to see warm starts refuse to run without one.
  Secret control_key_{"inprocess-action-control-key-5e0c"};
  std::vector<std::string> secrets_;
  StartCommand command_;
  std::string label_;
};

}  // namespace mvr::action::testing
