// InProcessPlatform: the outside world of the Action and of the runner set in one process, for unit
// tests. The MicroVMs model and the GitHub model sit behind the real clients (aws::MicrovmsClient
// with SigV4, github::GitHubClient) through their in-process services; a stand-in supervisor runs
// in every VM; time is a ManualSeam's, which the clients' own sleeps move. Tests drive the real
// flows (start/stop, launcher, sweepers, janitor) against it and assert on what the models hold
// afterwards (VMs and their states, runners registered and busy), not on call sequences.
// Faults are the services refusing a request (RefusingApi) or the guest failing a hook or a
// delivery. Thread-safety: one owner (the test); the Seam refers to members: don't copy or move.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "aws/microvms/microvms_client.h"
#include "aws/signing/credentials.h"
#include "emulate/github/inprocess_github.h"
#include "emulate/microvms/front/inprocess_microvms.h"
#include "github/github_client.h"
#include "supervisor/run_payload.h"
#include "support/manual_seam.h"

namespace mvr::testing {

inline const char kPlatformGithubToken[] = "ghp_TOKENFIXTURE0123456789";
inline const char kPlatformAccessKeyId[] = "AKIDINPROCESS";
inline const char kPlatformSecretKey[] = "SECRETKEYFIXTURE-inprocess";
inline const char kPlatformRepository[] = "octo/app";
inline const char kPlatformImage[] = "img-1";

// The supervisor each in-process VM runs, reduced to what its callers see: the /run hook reads
// the run-hook payload (an ephemeral payload's runner connects to GitHub at once), the control
// port takes POST /v1/runner/start (the delivered runner connects) and answers GET /v1/status.
class StandInSupervisor final : public emulate::microvms::InProcessGuest {
 public:
  // Connects the runner of `jit_config` to GitHub (it shows online and can be handed a job).
  void Connect(const Secret& jit_config);

  explicit StandInSupervisor(emulate::github::GithubModel*& github) : github_(github) {}

  emulate::microvms::EffectOutcome Execute(const emulate::microvms::Effect& effect) override;
  http::HttpResponse Serve(const std::string& microvm_id, int port,
                           const http::ServerRequest& request) override;

  // Faults and answers a test sets.
  std::string fail_run_hook;     // non-empty: the /run hook fails with this reason
  bool runners_connect = true;   // false: runners never come online
  std::string fail_resume_hook;  // non-empty: the /resume hook fails with this reason
  // Called as the /resume hook runs (before fail_resume_hook): what happens while a VM thaws.
  std::function<void(const std::string& microvm_id)> on_resume_hook;
  // The runners a VM started long-poll GitHub again once the VM resumes (a hot member's runner,
  // frozen while it waited, comes back online).
  bool reconnect_on_resume = false;
  int start_status = 202;  // the answer to /v1/runner/start
  // As the real supervisor: a runner start whose nonce is not the one the VM's /run payload
  // carried is refused with 403 wrong_nonce (and not recorded).
  bool check_nonce = false;
  std::string start_body = "{}";
  std::string status_state = "IDLE";  // GET /v1/status, once status_script is used up
  std::string status_request_id;
  bool status_job_started = false;  // GET /v1/status's jobStarted
  // Answers GET /v1/status gives first, in order: {state, currentRequestId}.
  std::deque<std::pair<std::string, std::string>> status_script;

  // What the guest saw.
  std::vector<supervisor::RunPayload> payloads;              // one per /run hook
  std::map<std::string, supervisor::RunPayload> payload_of;  // the last /run payload, by VM
  std::vector<std::string> control_paths;                    // "POST /v1/runner/start @mvm-..:8080"
  std::vector<std::string> control_nonces;  // each runner start's "nonce" ("" when none)
  std::vector<std::string> started_on;      // the VM of each accepted runner start
  std::vector<std::string> jit_configs;     // each accepted runner start's JIT config
  std::map<std::string, std::vector<std::string>> jit_configs_of;  // the same, by VM
  bool saw_proxy_header = false;              // an x-aws-proxy-* header reached the guest
  std::vector<std::string>* trace = nullptr;  // as RefusingApi::trace: "POST /v1/runner/start"

 private:
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
  // When set, every request that reaches the service is appended as "METHOD /path" (no query):
  // the order of requests across services, for the tests whose subject is that order.
  std::vector<std::string>* trace = nullptr;
  // Headers set on every answer that comes through (GitHub's X-RateLimit-*, say).
  std::map<std::string, std::string> answer_headers;
};

class InProcessPlatform {
 public:
  // The services built from DefaultOptions(), empty but for the image img-1 and the repository
  // octo/app.
  InProcessPlatform();
  InProcessPlatform(const InProcessPlatform&) = delete;
  InProcessPlatform& operator=(const InProcessPlatform&) = delete;

  // 000's medians, fixed: RunMicrovm to RUNNING ~10 s, suspend ~2 s, resume ~4.5 s.
  static emulate::microvms::InProcessMicrovmsOptions DefaultOptions();
  // Replaces both services (empty models) with ones built from `options`.
  void Rebuild(emulate::microvms::InProcessMicrovmsOptions options);

  // --- the clients the code under test is given ---
  aws::MicrovmService& vms() { return *vms_client; }
  github::GitHub& github() { return *github_client; }
  http::HttpClient& ingress() { return microvms->ingress(); }

  // --- the models' observable state ---
  // "RUNNING", "SUSPENDED", ... or the error (NotFound once the model forgot the VM).
  std::string VmState(const std::string& microvm_id);
  std::string VmReason(const std::string& microvm_id);
  std::vector<std::string> VmIds();
  // Ids of the VMs in `state` ("RUNNING", ...).
  std::vector<std::string> VmIdsIn(const std::string& state);
  // The run-hook payload the VM's /run hook was given, decoded.
  Result<supervisor::RunPayload> PayloadOf(const std::string& microvm_id);
  // The clientToken of the RunMicrovm that made the VM ("" when none).
  std::string ClientTokenOf(const std::string& microvm_id);
  std::vector<emulate::github::Runner> Runners();
  bool RunnerExists(int64_t runner_id);
  // The runner named `name`; NotFound when GitHub has none.
  Result<emulate::github::Runner> RunnerNamed(const std::string& name);
  // API operations the MicroVMs service answered, by name; for `microvm_id` when given.
  int Calls(const std::string& operation, const std::string& microvm_id = "");

  // --- setting the world up through the models directly ---
  // A VM of img-1, RUNNING (payload: the warm run-hook payload, or `extra`'s members).
  std::string RunningVm(const nlohmann::json& extra = nlohmann::json::object());
  std::string SuspendedVm();
  // A VM RunMicrovm just made: PENDING until the clock passes the run latency.
  std::string PendingVm(const nlohmann::json& extra = nlohmann::json::object());
  // Asks the model to suspend / terminate `microvm_id` and lets the transition finish.
  void SuspendVm(const std::string& microvm_id);
  void TerminateVm(const std::string& microvm_id);
  // A new ACTIVE version of img-1 (the older ones stay SUCCESSFUL); its number.
  std::string NewImageVersion();
  // A runner registered and online with `labels`, optionally running a job.
  emulate::github::Runner OnlineRunner(const std::string& name, bool busy,
                                       std::vector<std::string> labels = {"self-hosted",
                                                                          "lambda-mvm"});
  // A runner registered but never connected (offline: its VM has not started it yet).
  emulate::github::Runner RegisteredRunner(const std::string& name,
                                           std::vector<std::string> labels);
  // A job queued in octo/app asking for `labels`; the scheduler hands it to a matching idle
  // online runner on GitHub's next tick (any request to the API).
  emulate::github::Job QueueJob(std::vector<std::string> labels);
  // The runners delivered to `microvm_id` connect to GitHub (long-poll for a job) now; each
  // connect must succeed unless `refusal_expected` (GitHub refuses their version).
  void ConnectRunnersOf(const std::string& microvm_id, bool refusal_expected = false);
  // Runs GitHub's scheduler now.
  void Tick() { github_model->Tick(); }

  ManualSeam m{7, LogLevel::kDebug};
  // The GitHub model's options the next Rebuild uses (its repositories are always octo/app's).
  emulate::github::GithubModelOptions github_model_options;
  emulate::github::GithubModel* github_model = nullptr;
  StandInSupervisor guest{github_model};
  std::unique_ptr<emulate::microvms::InProcessMicrovms> microvms;
  std::unique_ptr<emulate::github::InProcessGithub> github_service;
  aws::StaticCredentialsProvider credentials{aws::AwsCredentials{
      kPlatformAccessKeyId, Secret(kPlatformSecretKey), Secret(), std::nullopt, "test"}};
  // The clients send through these: a test refuses an operation by adding to `refusals`.
  RefusingApi vms_api;
  RefusingApi github_api;
  std::unique_ptr<aws::MicrovmsClient> vms_client;
  std::unique_ptr<github::GitHubClient> github_client;
  // The requests that reached the MicroVMs API, the GitHub API and the guests' control ports, in
  // order (see RefusingApi::trace).
  std::vector<std::string> trace;
};

}  // namespace mvr::testing
