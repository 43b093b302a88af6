// The typed values the GitHub client speaks in: where runners live (RunnerScope), runners, jobs,
// JIT configurations, registration tokens and the rate-limit state GitHub reports. Field names
// follow GitHub's REST and webhook payloads.
// Thread-safety: plain values; copy freely.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/secret.h"
#include "base/status.h"

namespace mvr::github {

// A repository by owner and name ("octo-org", "octo-repo").
struct RepositoryRef {
  std::string owner;
  std::string name;

  std::string FullName() const { return owner + "/" + name; }
  // Parses "owner/name"; anything else is InvalidArgument.
  static Result<RepositoryRef> Parse(std::string_view full_name);
};

// Where self-hosted runners are registered: one repository or one organisation. Callers hold a
// RunnerScope and never branch on which; the client builds the right path.
class RunnerScope {
 public:
  enum class Kind { kRepository, kOrganization, kEnterprise };

  static RunnerScope Repository(std::string owner, std::string name);
  static RunnerScope Repository(const RepositoryRef& repo) {
    return Repository(repo.owner, repo.name);
  }
  static RunnerScope Organization(std::string org);
  // An enterprise's runners (GitHub Enterprise Cloud or Server): they may take the jobs of every
  // organisation of the enterprise that their runner group admits; the set hears of and scans
  // only `organizations`.
  static RunnerScope Enterprise(std::string enterprise, std::vector<std::string> organizations);
  // "owner/name" is a repository; a bare "org" is an organisation.
  static Result<RunnerScope> Parse(std::string_view text);

  Kind kind() const { return kind_; }
  bool is_organization() const { return kind_ == Kind::kOrganization; }
  bool is_enterprise() const { return kind_ == Kind::kEnterprise; }
  // Jobs of more than one repository: an organisation's or an enterprise's runners.
  bool serves_many_repositories() const { return kind_ != Kind::kRepository; }
  // The repository's owner, the organisation, or the enterprise's slug.
  const std::string& owner() const { return owner_; }
  const std::string& repo() const { return repo_; }  // empty unless a repository scope
  // The organisations whose repositories the scope serves: the organisation itself, the
  // enterprise's listed ones; empty for a repository.
  const std::vector<std::string>& organizations() const { return organizations_; }

  // "/repos/{owner}/{repo}/actions/runners", "/orgs/{org}/actions/runners" or
  // "/enterprises/{enterprise}/actions/runners" (encoded).
  std::string RunnersPath() const;
  // "octo-org/octo-repo", "octo-org" or "enterprise octo-corp", for messages.
  std::string ToString() const;

  bool operator==(const RunnerScope& other) const = default;

 private:
  RunnerScope(Kind kind, std::string owner, std::string repo,
              std::vector<std::string> organizations)
      : kind_(kind),
        owner_(std::move(owner)),
        repo_(std::move(repo)),
        organizations_(std::move(organizations)) {}
  Kind kind_ = Kind::kRepository;
  std::string owner_;
  std::string repo_;
  std::vector<std::string> organizations_;
};

struct Runner {
  int64_t id = 0;
  std::string name;
  std::string os;      // "linux", "Linux", "macOS" ... as GitHub reports it
  std::string status;  // "online" or "offline"
  bool busy = false;
  std::vector<std::string> labels;  // label names
  std::optional<int64_t> runner_group_id;
  // The runner software's version; GitHub sets it once the runner has connected ("" before).
  std::string version;

  bool online() const { return status == "online"; }
};

struct JitConfigRequest {
  std::string name;                 // unique within the scope; GitHub answers 409 for a duplicate
  int64_t runner_group_id = 1;      // 1 is the "Default" group
  std::vector<std::string> labels;  // 1 to 100 custom labels
  std::string work_folder = "_work";
  // A runner of this runner scale set (issue 54), registered through the set's generatejitconfig
  // rather than the REST endpoint; 0: none. Only a GitHub that knows scale sets serves it
  // (runnerset/scaleset/intake/scaleset_github.h); the REST client refuses it.
  int64_t scale_set_id = 0;
};

struct JitConfig {
  Runner runner;
  Secret encoded_jit_config;  // what run.sh --jitconfig takes; never log it
};

struct RegistrationToken {
  Secret token;
  TimePoint expires_at;
};

enum class JobStatus { kQueued, kInProgress, kCompleted, kWaiting, kRequested, kPending, kUnknown };
// "queued" → kQueued ...; a value GitHub adds later is kUnknown rather than an error.
JobStatus ParseJobStatus(std::string_view text);
const char* JobStatusName(JobStatus status);

// A workflow job, as GET /repos/{o}/{r}/actions/jobs/{id} and the workflow_job webhook give it.
struct Job {
  int64_t id = 0;
  int64_t run_id = 0;
  int64_t run_attempt = 1;
  std::string name;
  std::string workflow_name;
  std::string head_branch;
  std::string head_sha;
  JobStatus status = JobStatus::kUnknown;
  std::string conclusion;           // empty while the job has none
  std::vector<std::string> labels;  // the job's runs-on labels
  std::optional<int64_t> runner_id;
  std::string runner_name;  // empty until a runner takes the job
  std::optional<int64_t> runner_group_id;
  std::string runner_group_name;
  std::optional<TimePoint> created_at;
  std::optional<TimePoint> started_at;
  std::optional<TimePoint> completed_at;
};

// The primary rate-limit state from the X-RateLimit-* headers of the last answer that had them.
// The runner's newest release (GET /repos/actions/runner/releases/latest). GitHub stops handing
// jobs to a runner older than it 30 days after it was published ("Controlling runner software
// updates on self-hosted runners").
struct RunnerRelease {
  std::string version;  // "2.332.0" (the tag without its "v")
  TimePoint published_at;
};

struct RateLimit {
  int64_t limit = 0;
  int64_t remaining = 0;
  int64_t used = 0;
  TimePoint reset;       // when the window resets
  std::string resource;  // "core", "search" ...
};

}  // namespace mvr::github
