// The values the GitHub emulator's model keeps: repositories, runners, jobs and webhook
// deliveries, shaped after what GitHub's REST API shows. Plain data; the model (github_model.h)
// owns every instance and hands out copies.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
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

}  // namespace mvr::emulate::github
