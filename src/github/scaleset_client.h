// ScaleSetClient: GitHub's runner scale-set API (issue 54), as `actions/scaleset` speaks it: a
// registration token (through the GitHub seam) exchanged at POST {api}/actions/runner-registration
// for the Actions service URL and an admin token (a JWT, kept until a minute before its `exp`);
// scale sets found by name, created or updated; JIT runners of a set; one message session per
// set; the long-polled message queue, its acknowledgements and acquirejobs. Errors: Conflict for
// a second session (another listener holds the set), Unauthorized when the message queue token
// must be refreshed, NotFound, InvalidArgument, Transient for 5xx and transport failures. No call
// retries by itself; tokens never reach an error or a log.
// Thread-safety: safe to share; no lock is held across an HTTP call.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/secret.h"
#include "base/status.h"
#include "github/github.h"
#include "http/client.h"

namespace mvr::github {

struct ScaleSetStatistics {
  int available_jobs = 0;
  int acquired_jobs = 0;
  int assigned_jobs = 0;  // what to scale on (acquired or running)
  int running_jobs = 0;
  int registered_runners = 0;
  int busy_runners = 0;
  int idle_runners = 0;
};

struct ScaleSetInfo {
  int64_t id = 0;
  std::string name;
  int64_t runner_group_id = 1;
  ScaleSetStatistics statistics;
};

struct ScaleSetSessionInfo {
  int64_t scale_set_id = 0;
  std::string session_id;
  std::string message_queue_url;
  Secret message_queue_token;
  ScaleSetStatistics statistics;
};

// One job event of a message: JobAvailable, JobAssigned, JobStarted or JobCompleted.
struct ScaleSetJobEvent {
  std::string type;
  int64_t runner_request_id = 0;
  std::string job_id;      // GitHub's GUID for the job
  std::string repository;  // "owner/name"
  std::string display_name;
  int64_t workflow_run_id = 0;
  std::vector<std::string> labels;
  int64_t runner_id = 0;  // JobStarted, JobCompleted
  std::string runner_name;
  std::string result;  // JobCompleted
};

struct ScaleSetMessage {
  int64_t message_id = 0;
  std::vector<ScaleSetJobEvent> events;  // types this client does not know are left out
  ScaleSetStatistics statistics;
};

struct ScaleSetClientOptions {
  std::string api_base_url;  // the REST base: where /actions/runner-registration is
  std::string config_url;    // https://github.com/OWNER/REPO, …/ORG or …/enterprises/SLUG
  Duration request_timeout{30'000};
  Duration poll_timeout{70'000};  // longer than GitHub's ~50 s long poll
};

class ScaleSetClient {
 public:
  // `http`, `clock` and `github` (which makes the registration tokens) must outlive the client.
  ScaleSetClient(http::HttpClient& http, const Clock& clock, GitHub& github, RunnerScope scope,
                 ScaleSetClientOptions options);

  // The set named `name` in the runner group, created when missing and updated when its labels
  // differ.
  Result<ScaleSetInfo> EnsureScaleSet(const std::string& name,
                                      const std::vector<std::string>& labels,
                                      int64_t runner_group_id = 1);
  // The set named `name` in the runner group, if there is one (nothing is created).
  Result<std::optional<ScaleSetInfo>> FindScaleSet(const std::string& name,
                                                   int64_t runner_group_id = 1);
  Result<JitConfig> GenerateJitConfig(int64_t scale_set_id, const std::string& runner_name);
  Result<ScaleSetSessionInfo> CreateSession(int64_t scale_set_id, const std::string& owner);
  Result<ScaleSetSessionInfo> RefreshSession(const ScaleSetSessionInfo& session);
  Status DeleteSession(const ScaleSetSessionInfo& session);
  // nullopt when GitHub answered 202 (no message within its long poll).
  Result<std::optional<ScaleSetMessage>> GetMessage(const ScaleSetSessionInfo& session,
                                                    int64_t last_message_id, int max_capacity);
  Status DeleteMessage(const ScaleSetSessionInfo& session, int64_t message_id);
  Result<std::vector<int64_t>> AcquireJobs(const ScaleSetSessionInfo& session,
                                           const std::vector<int64_t>& runner_request_ids);

 private:
  struct Admin {
    std::string url;
    Secret token;
    TimePoint expires;
  };
  Result<Admin> AdminConnection();
  // An Actions service request with the admin token (`path` under the service URL, `query`
  // without api-version).
  Result<http::HttpResponse> ActionsCall(const std::string& method, const std::string& path,
                                         const std::string& query, const std::string& body);
  Result<http::HttpResponse> Send(http::HttpRequest request);
  Result<ScaleSetSessionInfo> SessionFrom(int64_t scale_set_id, const http::HttpResponse& res);

  http::HttpClient& http_;
  const Clock& clock_;
  GitHub& github_;
  const RunnerScope scope_;
  const ScaleSetClientOptions options_;
  std::mutex mu_;  // guards admin_
  std::optional<Admin> admin_;
};

// Status of an Actions service answer: Conflict (409), Unauthorized (401), NotFound (404),
// InvalidArgument (400, 422), Transient (5xx, 429), Internal otherwise; the message is the body's
// `message`, never a token.
Status ActionsStatus(const http::HttpResponse& response, const std::string& what);

}  // namespace mvr::github
