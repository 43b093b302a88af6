// The Action's world in one process: the MicroVMs and GitHub models behind the real clients
// (aws::MicrovmsClient with SigV4, github::GitHubClient) through the in-process services, a
// stand-in supervisor in every VM, and a manual clock that the clients' own sleeps move. Tests
// start and stop through the real flows and assert on what the models hold afterwards (VMs and
// their states, runners registered) instead of on call sequences.
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
#include "aws/credentials.h"
#include "aws/microvms_client.h"
#include "emulate/github/inprocess_github.h"
#include "emulate/microvms/inprocess_microvms.h"
#include "github/github_client.h"
#include "supervisor/run_payload.h"
#include "support/manual_seam.h"

namespace mvr::action::testing {

inline const char kGithubToken[] = "ghp_TOKENFIXTURE0123456789";
inline const char kAccessKeyId[] = "AKIDINPROCESS";
inline const char kSecretKey[] = "SECRETKEYFIXTURE-inprocess";

// The supervisor each in-process VM runs, reduced to what the Action sees: the /run hook reads
// the run-hook payload (an ephemeral payload's runner connects to GitHub at once), the control
// port takes POST /v1/runner/start (the delivered runner connects) and answers GET /v1/status.
class StandInSupervisor final : public emulate::microvms::InProcessGuest {
 public:
  explicit StandInSupervisor(emulate::github::GithubModel*& github) : github_(github) {}

  emulate::microvms::EffectOutcome Execute(const emulate::microvms::Effect& effect) override;
  http::HttpResponse Serve(const std::string& microvm_id, int port,
                           const http::ServerRequest& request) override;

  // Faults and answers a test sets.
  std::string fail_run_hook;    // non-empty: the /run hook fails with this reason
  bool runners_connect = true;  // false: runners never come online
  int start_status = 202;       // the answer to /v1/runner/start
  std::string start_body = "{}";
  std::string status_state = "IDLE";  // GET /v1/status, once status_script is used up
  std::string status_request_id;
  // Answers GET /v1/status gives first, in order: {state, currentRequestId}.
  std::deque<std::pair<std::string, std::string>> status_script;

  // What the guest saw.
  std::vector<supervisor::RunPayload> payloads;  // one per /run hook
  std::vector<std::string> control_paths;        // "POST /v1/runner/start @mvm-..:8080"
  std::vector<std::string> control_nonces;       // each runner start's "nonce" ("" when none)
  bool saw_proxy_header = false;                 // an x-aws-proxy-* header reached the guest

 private:
  void Connect(const Secret& jit_config);
  emulate::github::GithubModel*& github_;
};

// An HTTP seam in front of a service: a request whose method matches a refusal and whose path
// ends with its suffix is answered as the service refuses (status, error type, message) without
// reaching it; every other request passes through to `inner`.
class RefusingApi final : public http::HttpClient {
 public:
  struct Refusal {
    std::string method;       // "POST"
    std::string path_suffix;  // "/suspend", "/generate-jitconfig"
    int status = 500;
    std::string error_type;  // x-amzn-ErrorType; empty for GitHub
    std::string message;
    // The service carries the request out and only its answer is lost (the refusal stands in for
    // it), as after a timeout; an answer that is not 2xx comes through. times: how many requests
    // are refused (-1: all), then they pass through.
    bool carried_out = false;
    int times = -1;
  };
  Result<http::HttpResponse> Send(const http::HttpRequest& request) override;

  http::HttpClient* inner = nullptr;
  std::vector<Refusal> refusals;
};

class InProcessActionTest : public ::testing::Test {
 protected:
  InProcessActionTest() {
    logger_.redactor().Add(kGithubToken);
    command_.endpoints.repository = "octo/app";
    command_.endpoints.github_api_url = emulate::github::InProcessGithub::kApiUrl;
    command_.endpoints.github_token = Secret(kGithubToken);
    command_.endpoints.region = "us-east-1";
    command_.identity.repository_id = "123";
    command_.identity.run_id = "456";
    command_.identity.run_attempt = "1";
    command_.identity.job = "build";
    command_.image_id = "img-1";
    command_.event_name = "push";
    label_ = DeriveIdentity(command_.identity).value().label;
    Rebuild(Options());
  }

  // Seed 000's medians: RunMicrovm to RUNNING ~10 s, suspend ~2 s, resume ~4.5 s.
  static emulate::microvms::InProcessMicrovmsOptions Options();
  // Replaces both services (empty models) with ones built from `options`.
  void Rebuild(emulate::microvms::InProcessMicrovmsOptions options);

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

  // --- the models' observable state ---
  // "RUNNING", "SUSPENDED", ... or the error (NotFound once the model forgot the VM).
  std::string VmState(const std::string& microvm_id);
  std::string VmReason(const std::string& microvm_id);
  std::vector<std::string> VmIds();
  std::vector<emulate::github::Runner> Runners();
  bool RunnerExists(int64_t runner_id);
  int Calls(const std::string& operation);

  // --- setting the world up through the models directly ---
  // A VM of img-1, RUNNING (payload: the warm run-hook payload).
  std::string RunningVm(const nlohmann::json& extra = nlohmann::json::object());
  std::string SuspendedVm();
  // A handle to `microvm_id` whose reuse deadline is `reuse_deadline`.
  ServerHandle Handle(const std::string& microvm_id, TimePoint reuse_deadline);
  // A runner registered and online, optionally running a job.
  emulate::github::Runner OnlineRunner(const std::string& name, bool busy);

  // Nothing secret (the token, any JIT config or proxy token the flow met) in `s` or the log.
  void ExpectNoSecrets(const Status& s);

  ManualClock clock_;
  ManualSleeper sleeper_{clock_};
  SeededRandom random_{7};
  SeededRandom secure_{8};
  MemorySink sink_;
  Logger logger_{sink_, clock_, LogLevel::kDebug};
  Seam seam_{clock_, sleeper_, random_, secure_, logger_};
  emulate::github::GithubModel* github_model_ = nullptr;
  StandInSupervisor guest_{github_model_};
  std::unique_ptr<emulate::microvms::InProcessMicrovms> microvms_;
  std::unique_ptr<emulate::github::InProcessGithub> github_service_;
  aws::StaticCredentialsProvider credentials_{
      aws::AwsCredentials{kAccessKeyId, Secret(kSecretKey), Secret(), std::nullopt, "test"}};
  // The clients send through these: a test refuses an operation by adding to `refusals`.
  RefusingApi vms_api_;
  RefusingApi github_api_;
  std::unique_ptr<aws::MicrovmsClient> vms_;
  std::unique_ptr<github::GitHubClient> github_;
  store::Store* pool_store_ = nullptr;  // the state-table pooled flows use
  // MVR_CONTROL_KEY; a test clears it to see warm starts refuse to run without one.
  Secret control_key_{"inprocess-action-control-key-5e0c"};
  std::vector<std::string> secrets_;
  StartCommand command_;
  std::string label_;
};

}  // namespace mvr::action::testing
