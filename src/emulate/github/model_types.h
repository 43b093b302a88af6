// The values the GitHub emulator's model keeps: repositories, runners, jobs and webhook
// deliveries, shaped after what GitHub's REST API shows, and the runner scale-set API's sets,
// sessions and messages. Plain data; the model (github_model.h)
// owns every instance and hands out copies.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/secret.h"
#include "http/types.h"

namespace mvr::emulate::github {

// Where a runner is registered: one repository, a whole organisation, or an enterprise (whose
// runners serve the repositories of every organisation the emulator has).
struct Scope {
  enum class Kind { kRepository, kOrganization, kEnterprise };
  Kind kind = Kind::kRepository;
  std::string owner;  // the organisation for kOrganization, the enterprise's slug for kEnterprise
  std::string repo;   // empty unless kRepository

  static Scope Repo(std::string owner, std::string repo) {
    Scope s;
    s.owner = std::move(owner);
    s.repo = std::move(repo);
    return s;
  }
  static Scope Org(std::string org) {
    Scope s;
    s.kind = Kind::kOrganization;
    s.owner = std::move(org);
    return s;
  }
  static Scope Enterprise(std::string slug) {
    Scope s;
    s.kind = Kind::kEnterprise;
    s.owner = std::move(slug);
    return s;
  }
  // "owner/repo", "org" or "enterprises/slug" (a runner's GitHub URL is the base URL plus this).
  std::string Name() const {
    switch (kind) {
      case Kind::kOrganization:
        return owner;
      case Kind::kEnterprise:
        return "enterprises/" + owner;
      case Kind::kRepository:
        break;
    }
    return owner + "/" + repo;
  }
};

struct Repository {
  int64_t id = 0;
  std::string owner;
  std::string name;
  int64_t owner_id = 0;
  bool owner_is_org = false;
  TimePoint created_at;  // when the emulator started serving it
  std::string FullName() const { return owner + "/" + name; }
};

struct RunnerLabel {
  int64_t id = 0;
  std::string name;
  std::string type;  // "read-only" (given by the runner) or "custom"
};

struct Runner {
  int64_t id = 0;
  std::string name;
  Scope scope;
  int64_t group_id = 1;
  std::vector<RunnerLabel> labels;
  // The labels its generate-jitconfig request asked for, as sent (the test API shows them, so a
  // test can check what a client registered beside what the emulator adds itself).
  std::vector<std::string> registered_labels;
  std::string os = "Linux";
  std::string work_folder = "_work";
  bool ephemeral = true;
  bool busy = false;
  bool online = false;  // derived from last_seen when copied out of the model
  TimePoint created_at;
  std::optional<TimePoint> last_seen;   // last contact from the runner process
  std::optional<int64_t> job_id;        // the job it was given, if any
  std::optional<TimePoint> busy_since;  // when it was given that job
  std::string version;                  // the runner software's, once it connected ("" before)
};

// One shell command of a job, with what the runner reported about it.
struct JobStep {
  int number = 0;
  std::string name;
  std::string command;
  std::string status = "queued";  // queued, in_progress, completed
  std::string conclusion;         // success, failure, skipped, cancelled ("" while running)
  std::optional<TimePoint> started_at;
  std::optional<TimePoint> completed_at;
  int exit_code = 0;
  std::string stdout_text;
  std::string stderr_text;
};

struct TimelineEntry {
  TimePoint at;
  std::string event;  // queued, assigned, step_started, ...
  std::string detail;
};

struct Job {
  int64_t id = 0;
  int64_t run_id = 0;
  int run_attempt = 1;
  int64_t repository_id = 0;
  std::string repository;  // owner/name
  std::string name;
  std::string workflow_name = "CI";
  std::string head_branch = "main";
  std::string head_sha;
  std::vector<std::string> labels;
  std::map<std::string, std::string> env;
  std::string status = "queued";  // waiting, queued, in_progress, completed
  std::string conclusion;         // "" until completed
  std::optional<int64_t> runner_id;
  std::string runner_name;
  std::optional<int64_t> runner_group_id;
  std::string runner_group_name;
  TimePoint created_at;
  std::optional<TimePoint> started_at;
  std::optional<TimePoint> completed_at;
  std::optional<Duration> timeout;  // execution limit once in progress
  std::vector<JobStep> steps;
  std::vector<TimelineEntry> timeline;
  bool drop_webhooks = false;  // fault: its deliveries are recorded as "dropped", never sent
  bool wedge_runner = false;   // fault: the first runner handed it wedges (JobSpec::wedge_runner)
  bool wedged_once = false;    // a runner wedged on it already
  std::optional<TimePoint> approve_at;  // a waiting job approved by the scheduler at this time
};

// One webhook delivery, as the emulator's deliveries log shows it.
struct Delivery {
  int64_t id = 0;  // the hook deliveries API's id (a redelivery is a new delivery, same GUID)
  std::string guid;
  std::string event = "workflow_job";
  std::string action;
  int64_t job_id = 0;
  int64_t repository_id = 0;
  std::string payload;  // the exact bytes sent
  http::Headers headers;
  TimePoint created_at;
  std::optional<TimePoint> delivered_at;
  int response_status = 0;
  std::string outcome = "pending";  // pending, delivered, failed, lost, not_configured, dropped
  int copies_sent = 0;
  bool redelivery = false;
  std::string error;  // why no answer came (transport failure), when none did
};

// Which hook's deliveries a request reads: the App's (every repository), an organisation's (its
// repositories) or a repository's.
struct HookFilter {
  enum class Kind { kApp, kOrganization, kRepository };
  Kind kind = Kind::kApp;
  std::string owner;  // the organisation, or the repository's owner
  std::string repo;   // the repository's name (kRepository)
  int64_t hook_id = 0;
};

struct HookDeliveryPage {
  std::vector<Delivery> deliveries;  // newest first
  std::optional<int64_t> next;       // the id the next page starts at
};

// What the control API asks for when it queues a job.
struct JobSpec {
  std::string repository;  // owner/name
  std::vector<std::string> labels;
  std::vector<std::string> steps;  // shell commands
  std::string name = "build";
  std::map<std::string, std::string> env;
  std::optional<int64_t> run_id;
  int run_attempt = 1;
  std::optional<Duration> timeout;
  // Starts "waiting" for an environment's approval: GitHub delivers `queued` then `waiting`,
  // and `queued` again once approved (CloudSnorkel/cdk-github-runners #416).
  bool wait_for_environment = false;
  std::optional<Duration> approve_after;  // approved this long after queued (else the default)
  bool drop_webhooks = false;             // fault: none of the job's webhooks is sent ("dropped")
  // Fault (issue 55, item 5; actions/runner #4598): the first runner handed this job wedges: its
  // worker never reads the job, so GitHub hears nothing more from it (github_model_expiry.cpp).
  bool wedge_runner = false;
};

// What a runner receives when it is given a job.
struct JobAssignment {
  int64_t job_id = 0;
  int64_t run_id = 0;
  int run_attempt = 1;
  std::string name;
  std::string repository;
  std::string workflow_name;
  std::vector<std::string> steps;
  std::map<std::string, std::string> env;
};

// What a runner reports about one step.
struct StepReport {
  int number = 0;
  std::string status;  // in_progress or completed
  std::string conclusion;
  int exit_code = 0;
  std::string stdout_text;
  std::string stderr_text;
};

// --- the runner scale-set API (issue 54), named after `actions/scaleset`'s wire types ---
// The knobs of the scale-set API (GithubModelOptions::scaleset). Every limit GitHub does not
// publish is a knob; docs/emulate-github.md says which reading each default takes.
struct ScaleSetOptions {
  Duration long_poll{50'000};        // GET of messages waits this long before 202
  Duration long_poll_step{100};      // how often a waiting poll looks again (seam's sleeper)
  Duration acquire_timeout{60'000};  // a JobAvailable not acquired this long is offered again
  Duration start_timeout{300'000};   // an acquired job no runner started is offered again
  int max_reassignments = 3;         // offers after the first; then the set is offered no more
  Duration session_idle_timeout{120'000};    // a session not polled this long ends
  Duration queue_token_lifetime{3'600'000};  // messageQueueAccessToken: then 401, refresh
  Duration admin_token_lifetime{3'600'000};  // the runner-registration admin token (a JWT)
  // Faults (settable at run time, GithubModel::SetScaleSetFaults).
  double lost_acknowledgements = 0;  // a DELETE answers 204 but the message stays
  Duration message_delay{0};         // a message is visible only this long after it is made
  // ARC #4027 (the default, stricter): a new session is not told of jobs the set acquired before.
  bool replay_assigned_on_new_session = false;
};

// What a create or update of a scale set asks for.
struct ScaleSetSpec {
  std::string name;
  int64_t runner_group_id = 1;
  std::vector<std::string> labels;  // besides the name; "" entries refused
  bool ephemeral = true;
  bool disable_update = false;
};

struct ScaleSetStatistics {
  int total_available_jobs = 0;
  int total_acquired_jobs = 0;
  int total_assigned_jobs = 0;
  int total_running_jobs = 0;
  int total_registered_runners = 0;
  int total_busy_runners = 0;
  int total_idle_runners = 0;
};

struct ScaleSet {
  int64_t id = 0;
  std::string name;
  Scope scope;
  int64_t runner_group_id = 1;
  std::string runner_group_name = "Default";
  std::vector<std::string> labels;
  bool ephemeral = true;
  bool disable_update = false;
  TimePoint created_on;
  ScaleSetStatistics statistics;  // as of the copy
};

// One job event in a message's body (`messageType` JobAvailable, JobAssigned, JobStarted or
// JobCompleted), with the job's fields as GitHub sends them.
struct ScaleSetJobEvent {
  std::string message_type;
  int64_t runner_request_id = 0;
  std::string job_id;       // GitHub's job GUID, not the REST job id
  int64_t rest_job_id = 0;  // the emulator's own (never sent)
  std::string repository_name;
  std::string owner_name;
  std::string job_workflow_ref;
  std::string job_display_name;
  int64_t workflow_run_id = 0;
  std::string event_name = "push";
  std::vector<std::string> request_labels;
  TimePoint queue_time;
  std::optional<TimePoint> scale_set_assign_time;
  std::optional<TimePoint> runner_assign_time;
  std::optional<TimePoint> finish_time;
  int64_t runner_id = 0;  // JobStarted, JobCompleted
  std::string runner_name;
  std::string result;  // JobCompleted: succeeded, failed, canceled
};

// A message of a set's queue: a batch of job events (the wire's messageType is always
// "RunnerScaleSetJobMessages") and the statistics at the time it is read.
struct ScaleSetMessage {
  int64_t message_id = 0;
  std::vector<ScaleSetJobEvent> events;
  ScaleSetStatistics statistics;
  TimePoint visible_at;
  int deliveries = 0;  // how often it was handed out
};

struct ScaleSetSession {
  std::string session_id;  // a UUID
  std::string owner_name;
  ScaleSet scale_set;
  std::string message_queue_url;
  Secret message_queue_access_token;
  ScaleSetStatistics statistics;
};

// What GitHub gives for a registration token at POST /actions/runner-registration.
struct ActionsAdminConnection {
  std::string actions_service_url;
  Secret admin_token;  // a JWT whose `exp` clients read
};

// The test API's view of one set: its session's state and the messages waiting.
struct ScaleSetView {
  ScaleSet scale_set;
  bool has_session = false;
  bool foreign_session = false;  // taken over (SetScaleSetFaults's takeover)
  int max_capacity = -1;         // the last X-ScaleSetMaxCapacity (-1: never polled)
  int messages_waiting = 0;
  int phantom_assigned_jobs = 0;
};

}  // namespace mvr::emulate::github
