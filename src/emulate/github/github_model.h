// GithubModel: the GitHub emulator's state machine - repositories, JIT runners, jobs, the
// scheduler that hands queued jobs to idle online runners, and workflow_job webhooks. Pure: it
// reads time only from its Seam's clock, draws only from the Seam's random sources, and sends
// webhooks only through the WebhookSender, so the simulation can drive it in virtual time. The HTTP
// layer (rest_api.h, control_api.h) calls one method per operation. Thread-safety: every method is
// safe from many threads; one mutex guards the state and is never held while the WebhookSender
// runs.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/seam.h"
#include "base/secret.h"
#include "base/status.h"
#include "emulate/github/model_types.h"
#include "emulate/github/runner_versions.h"
#include "emulate/github/webhook.h"

namespace mvr::emulate::github {

// An organisation's runner group beside its Default (id 1) with "selected" visibility: only the
// jobs of `repositories` ("owner/name") may run on its runners (GitHub's runner groups; REST
// "Create a self-hosted runner group for an organization", visibility "selected"). GitHub has no
// custom groups for a repository's own runners: a repository-scoped JIT config with any group but
// 1 is answered 404, as is a group the organisation does not have.
struct RunnerGroupSpec {
  int64_t id = 0;  // 2 or more
  std::string organization;
  std::string name;
  std::vector<std::string> repositories;
};

struct GithubModelOptions {
  std::vector<std::string> repositories;   // "owner/name"
  std::vector<std::string> organizations;  // orgs whose runners serve their repositories
  // An enterprise (its slug) holding every organisation above: its runners serve all their
  // repositories. "" = none (its runner endpoints answer 404).
  std::string enterprise;
  std::string base_url = "http://127.0.0.1";  // where runners reach the emulator
  Secret webhook_secret;
  int64_t installation_id = 1;
  Duration queue_timeout{24LL * 3600 * 1000};  // GitHub cancels jobs queued this long
  Duration runner_offline_after{60'000};       // idle runner silent this long shows offline
  // Registration expiry (issue 55, github_model_expiry.cpp); 0 = never. A registration listening
  // (online, idle) this long without a job, or never connected this long after it was made, is
  // removed (actions/runner #4726: 2-6 min; ubicloud #2957: JIT configs valid 5 min).
  Duration registration_idle_expiry{0};
  // A once-connected registration offline this long since its last contact is removed
  // (unpublished; actions/runner #4191 saw ~51 min).
  Duration offline_registration_expiry{0};
  // A job handed to a runner that does not pick it up within this long goes back to the queue
  // for another runner. 0 = never: the model's default, for tests whose runners are handed jobs
  // without polling for them; `mvr emulate github` and the simulation use 60 s.
  Duration assignment_pickup_timeout{0};
  // A job in progress whose runner has made no contact this long fails, as GitHub fails a job
  // whose runner "lost communication with the server" (issue 55, item 4; github_model_expiry.cpp).
  // GitHub does not publish the delay; 0 = never (the job then runs to its timeout).
  Duration lost_runner_fails_job_after{0};
  // The runner picking up a job wedges with this probability (issue 55, item 5; actions/runner
  // #4598, #4418): its worker never reads the job, and it is heard from no more.
  double wedged_runners = 0;
  std::string runner_arch = "ARM64";  // every runner mvr registers runs on an ARM64 MicroVM
  double runner_busy_lies = 0;        // initial SetRunnerBusyLies; within [0, 1]
  std::string assignment = "oldest";  // initial SetAssignment: "oldest" or "random"
  double completed_webhook_loss = 0;  // initial SetCompletedWebhookLoss; within [0, 1]
  // A job queued with wait_for_environment and no approve_after of its own is approved this long
  // after it was queued (0: only POST /_emulator/jobs/{id}/approve approves it).
  Duration approval_delay{0};
  double foreign_deliveries = 0;  // initial SetForeignDeliveries; within [0, 1]
  // The installation a foreign delivery names (github_model_foreign.cpp).
  int64_t foreign_installation_id = 999'001;
  RunnerVersionPolicy runner_versions;  // initial SetRunnerVersionPolicy
  // The webhook's settings as GET /app/hook/config and GET …/hooks/{id} show them: where it
  // delivers (the emulator's --webhook-url) and "json" or "form" (a form delivery's body is
  // payload=<the JSON, URL-encoded>, signed as sent, as GitHub does).
  std::string hook_url;
  std::string hook_content_type = "json";
  // Workflow files every repository holds with a workflow_dispatch trigger, each of the shape of
  // examples/workflows/mvr-canary.yml: one required input `runner-label`, one job that runs-on
  // [self-hosted, <runner-label>] and runs `true` (rest_api_dispatch.cpp).
  std::vector<std::string> dispatch_workflows;
  ScaleSetOptions scaleset;  // the runner scale-set API (github_model_scaleset*.cpp)
  // The organisations' runner groups beside Default (github_model.cpp).
  std::vector<RunnerGroupSpec> runner_groups;
};

struct JitRequest {
  std::string name;
  std::optional<int64_t> runner_group_id;
  std::vector<std::string> labels;
  std::string work_folder = "_work";
};

struct JitRegistration {
  Runner runner;
  Secret encoded_jit_config;
};

struct RunnerSession {
  int64_t runner_id = 0;
  std::string runner_name;
};

class GithubModel {
 public:
  // The seam's `random` draws delivery GUIDs and head SHAs; its `secure_random` draws runner
  // credentials and JIT key material. `sender` may be null (deliveries are then recorded as
  // not_configured).
  GithubModel(GithubModelOptions options, Seam seam, WebhookSender* sender);

  void SetBaseUrl(std::string url);
  const GithubModelOptions& options() const { return options_; }

  // --- REST operations (errors: NotFound 404, Conflict 409, InvalidArgument 422) ---
  Result<Repository> GetRepository(const std::string& owner, const std::string& repo) const;
  Result<JitRegistration> GenerateJitConfig(const Scope& scope, const JitRequest& request);
  // Runners of a scope, oldest first, optionally only those named `name`.
  Result<std::vector<Runner>> ListRunners(const Scope& scope, const std::string& name) const;
  Result<Runner> GetRunner(const Scope& scope, int64_t runner_id) const;
  // InvalidArgument while the runner is running a job, as GitHub answers 422.
  Status DeleteRunner(const Scope& scope, int64_t runner_id);
  Result<Job> GetJob(const std::string& owner, const std::string& repo, int64_t job_id) const;
  // Jobs of one repository, optionally of one run and/or one status.
  Result<std::vector<Job>> ListJobs(const std::string& owner, const std::string& repo,
                                    std::optional<int64_t> run_id, const std::string& status) const;
  // Runs of one repository, newest first, each as its jobs. With `status`, only the runs whose
  // status (or, once completed, conclusion) it names, at most `reach` of them. Only the runs from
  // the `first` (0-based) on, at most `count`, are copied (a page: a backlog of 500 runs copied
  // whole for each page of 100 was most of the listing's cost); `total`, when set, is told how
  // many there are in all.
  Result<std::vector<std::vector<Job>>> ListRuns(const std::string& owner, const std::string& repo,
                                                 const std::optional<std::string>& status,
                                                 size_t reach, size_t first = 0,
                                                 size_t count = SIZE_MAX,
                                                 size_t* total = nullptr) const;

  // POST .../actions/jobs/{job_id}/rerun (github_model_expiry.cpp): a new attempt of the job's run
  // holding a copy of the job, queued; the new job is returned. Conflict (GitHub's 403) while any
  // job of the run has not completed, or when the job is not of the run's latest attempt.
  Result<Job> RerunJob(const std::string& owner, const std::string& repo, int64_t job_id);

  // --- control API ---
  Result<Job> QueueJob(const JobSpec& spec);
  Status ApproveJob(int64_t job_id);  // a waiting job becomes queued
  Status CancelJob(int64_t job_id);
  // Fault: the runner listing shows each runner's busy flag as it was `lag` ago (a listing that
  // lags behind the truth); GetRunner stays current. 0 turns it off.
  void SetRunnerListingLag(Duration lag);
  // Fault (RunsOn #429: GitHub's jobs API converges on a job's state some seconds after its
  // webhooks): GET .../actions/jobs/{id} shows the job as it was `lag` ago (waiting until that
  // long after its approval, queued until that long after it started or ended). The listings and
  // the deliveries stay current. 0 turns it off.
  void SetJobsApiLag(Duration lag);
  // Fault (actions/runner #4422): each time the runner listing or GetRunner shows a runner that
  // is running a job, it says busy:false with probability `p`. Undocumented, so the stricter
  // reading: a DELETE of that runner believes the same lie with probability `p`, removes the
  // registration, and the job it was running fails. 0 turns it off. InvalidArgument outside [0, 1].
  Status SetRunnerBusyLies(double p);
  // Which idle runner takes a queued job (issue 30, item 1). "oldest": the oldest queued job
  // goes to the oldest idle online runner whose labels match (the emulator's behaviour before).
  // "random": the queued jobs are taken in a random order, each by any idle online runner whose
  // labels match, drawn through the seam's random: GitHub binds no job to the runner launched for
  // it, so a runner launched for one job may take another, at organisation scope one of another
  // repository. InvalidArgument for anything else.
  Status SetAssignment(const std::string& assignment);
  // Fault (actions/runner #4309): each `completed` delivery is dropped (recorded as `dropped`,
  // never sent; a Redeliver still sends it) with probability `p`. InvalidArgument outside [0, 1].
  Status SetCompletedWebhookLoss(double p);
  // Fault (RunsOn #509: during a GitHub incident an App's webhook received other installations'
  // deliveries): each delivery is followed, with probability `p`, by a copy as another
  // installation's (options().foreign_installation_id) would be: a repository of another owner
  // and a job id this emulator does not have, signed with the same secret. Recorded as
  // "foreign" deliveries. InvalidArgument outside [0, 1].
  Status SetForeignDeliveries(double p);
  // Which runner versions get jobs (runner_versions.h): a runner older than the minimum, or older
  // than a release out for 30 days or more (the clock's days), is refused at its next connect or
  // poll, as GitHub answers 403 "Runner version vX is deprecated and cannot receive messages.";
  // it shows offline (its session ended) and is never handed a job. Takes effect at once, for
  // runners already connected too. InvalidArgument for a version that is not N.N.N.
  Status SetRunnerVersionPolicy(RunnerVersionPolicy policy);
  RunnerVersionPolicy runner_version_policy() const;
  Result<Job> GetJobById(int64_t job_id) const;
  // When GitHub collected the registration of runner `runner_id` (registration expiry, issue 55);
  // nullopt while it has one, or when it was removed otherwise.
  std::optional<TimePoint> RegistrationExpiredAt(int64_t runner_id) const;
  // Whether the runner wedged on a job it was handed (wedged_runners; github_model_expiry.cpp).
  bool RunnerWedged(int64_t runner_id) const;
  std::vector<Job> ListAllJobs() const;
  std::vector<Runner> ListAllRunners() const;
  std::vector<Delivery> ListDeliveries() const;
  // Sends a recorded delivery again, same GUID and bytes (GitHub's "Redeliver").
  Status Redeliver(const std::string& guid);

  // --- GitHub's record of its webhook deliveries (github_model_hooks.cpp) ---
  // The emulator has one webhook, id kHookId, seen as the App's hook, and as the hook of each
  // repository and of each organisation (showing only their repositories' deliveries).
  static constexpr int64_t kHookId = 1;
  // Deliveries of `filter`'s repositories, newest first, from the one with id `cursor` (nullopt:
  // the newest), at most `per_page`, and the id the next page starts at. A delivery not yet
  // attempted is not listed. NotFound for an unknown hook or owner.
  Result<HookDeliveryPage> ListHookDeliveries(const HookFilter& filter,
                                              std::optional<int64_t> cursor, int per_page) const;
  // Ok when `filter` names a hook the emulator has (its one hook, on a repository or organisation
  // it serves); NotFound otherwise.
  Status CheckHook(const HookFilter& filter) const;
  // POST .../deliveries/{id}/attempts: sends the delivery's bytes again as a new delivery (same
  // GUID, redelivery true). NotFound when `filter` does not show that delivery.
  Status RedeliverAttempt(const HookFilter& filter, int64_t delivery_id);
  // The repositories an installation (or an organisation, `org` non-empty) can see, by id.
  std::vector<Repository> ListRepositories(const std::string& org) const;

  // --- the runner's side (authenticated by the credential in its JIT config) ---
  // `version` is the runner's own ("" = kStandInRunnerVersion). Unauthorized with error type
  // kRunnerVersionRefused (HTTP 403) when GitHub refuses that version; NotFound with error type
  // kRegistrationNotFound (HTTP 404, "Registration … was not found.") once its registration
  // expired (also from RunnerAcquireJob).
  Result<RunnerSession> RunnerConnect(const Secret& credential, const std::string& version = "");
  // The runner's job once one is assigned, nullopt while it waits. Counts as a heartbeat.
  Result<std::optional<JobAssignment>> RunnerAcquireJob(const Secret& credential);
  // Conflict when the job has ended meanwhile (cancelled, timed out): the runner should stop.
  Status RunnerReportStep(const Secret& credential, int64_t job_id, const StepReport& report);
  // Completes the job; the single-use runner is then removed and its credential dies.
  Status RunnerCompleteJob(const Secret& credential, int64_t job_id, const std::string& conclusion);

  // Scheduler step: cancels jobs queued past the limit or running past their timeout, then hands
  // queued jobs to idle online runners whose labels match.
  void Tick();

  // --- the runner scale-set API (issue 54; github_model_scaleset*.cpp, scaleset_types.h) ---
  // A job whose runs-on is one label equal to a scale set's name (case-insensitive), of a
  // repository the set's scope serves, is the set's: it is offered to the set's session
  // (JobAvailable), handed only to a runner of the set once the set acquired it, and reported
  // (JobAssigned, JobStarted, JobCompleted). Other jobs keep the webhook path. Errors: NotFound
  // 404, Conflict 409 (kSessionConflict for a second session), Unauthorized 401 (a message queue
  // token expired or of an ended session: refresh), InvalidArgument 400.
  // POST /actions/runner-registration, after the REST layer checked the registration token:
  // the Actions service URL and an admin token (a JWT) for `scope`.
  Result<ActionsAdminConnection> IssueAdminConnection(const Scope& scope);
  // The scope an admin token was issued for; Unauthorized when unknown or expired.
  Result<Scope> AdminScope(const Secret& admin_token) const;
  // The scope's sets, optionally only those of one runner group and/or one name.
  std::vector<ScaleSet> ListScaleSets(const Scope& scope, std::optional<int64_t> group_id,
                                      const std::string& name) const;
  Result<ScaleSet> GetScaleSet(const Scope& scope, int64_t id) const;
  Result<ScaleSet> CreateScaleSet(const Scope& scope, const ScaleSetSpec& spec);
  Result<ScaleSet> UpdateScaleSet(const Scope& scope, int64_t id, const ScaleSetSpec& spec);
  // Ends its session; its jobs not yet acquired go back to the webhook path's runners.
  Status DeleteScaleSet(const Scope& scope, int64_t id);
  Result<JitRegistration> GenerateScaleSetJitConfig(const Scope& scope, int64_t id,
                                                    const std::string& name,
                                                    const std::string& work_folder);
  Result<ScaleSetSession> CreateScaleSetSession(const Scope& scope, int64_t id,
                                                const std::string& owner);
  // A new message queue token for the session (the client's answer to a 401).
  Result<ScaleSetSession> RefreshScaleSetSession(const Scope& scope, int64_t id,
                                                 const std::string& session_id);
  Status DeleteScaleSetSession(const Scope& scope, int64_t id, const std::string& session_id);
  // The oldest message not acknowledged, nullopt when none is visible. `max_capacity` (the
  // X-ScaleSetMaxCapacity header) bounds the jobs offered and acquired; `last_message_id` is
  // recorded but acknowledges nothing (only a DELETE does: the stricter reading).
  Result<std::optional<ScaleSetMessage>> PollScaleSetMessage(int64_t id, const Secret& token,
                                                             int64_t last_message_id,
                                                             int max_capacity);
  // PollScaleSetMessage, again every options().scaleset.long_poll_step through the seam's
  // sleeper until a message comes or long_poll has passed on the seam's clock (the long poll).
  Result<std::optional<ScaleSetMessage>> WaitScaleSetMessage(int64_t id, const Secret& token,
                                                             int64_t last_message_id,
                                                             int max_capacity);
  Status DeleteScaleSetMessage(int64_t id, const Secret& token, int64_t message_id);
  // The request ids the set now holds of those asked for (the others were taken, ended, or are
  // beyond the set's capacity).
  Result<std::vector<int64_t>> AcquireScaleSetJobs(int64_t id, const Secret& token,
                                                   const std::vector<int64_t>& request_ids);
  // Faults: a DELETE of a message lost with probability `lost_acks` (within [0, 1]); each new
  // message visible `delay` after it is made.
  Status SetScaleSetFaults(double lost_acks, Duration delay);
  // Fault (ARC #4397): totalAssignedJobs shows `n` more jobs than the set holds until set to 0.
  Status SetPhantomAssignedJobs(int64_t id, int n);
  // Fault: another listener takes the set's session: the holder's token gets 401 and its
  // refresh 404, and a new session 409 until the foreign one idles out.
  Status TakeOverScaleSetSession(int64_t id);
  std::vector<ScaleSetView> ListScaleSetViews() const;
  // The REST job a runnerRequestId stands for (the checks' view: GitHub sends no such link), 0
  // for none.
  int64_t ScaleSetRequestJob(int64_t request_id) const;
  // Ends every long poll waiting now and to come (the emulator is stopping).
  void StopLongPolls();

 private:
  struct RunnerState {
    Runner runner;
    std::string credential_hash;            // SHA-256 hex of the credential
    bool version_refused = false;           // GitHub refused its version: its session ended
    std::optional<TimePoint> online_since;  // the start of its current stretch online
    bool job_picked_up = false;             // it polled and received the job it was given
    bool session_lost = false;  // it did not pick up a job in time: offline until it polls
    int64_t scale_set_id = 0;   // registered through a scale set's generatejitconfig (0: not)
    bool wedged = false;        // its worker hangs: its polls no longer reach GitHub
  };
  // A job routed to a scale set, until it ends. state: available, offered, acquired, running,
  // abandoned (reassigned too often: offered no more).
  struct ScaleSetJob {
    int64_t set_id = 0;
    std::string state = "available";
    int64_t request_id = 0;
    std::string guid;
    std::optional<TimePoint> since;  // when it entered its state (offered, acquired)
    std::optional<TimePoint> acquired_at;
    int reassignments = 0;
  };
  struct ScaleSetSessionState {
    std::string id;
    std::string owner;
    std::string token_hash;
    TimePoint token_expires;
    TimePoint last_poll;
    bool foreign = false;
  };
  struct ScaleSetState {
    ScaleSet set;
    std::optional<ScaleSetSessionState> session;
    std::vector<ScaleSetMessage> queue;  // not acknowledged, oldest first
    int max_capacity = -1;
    int phantom_assigned = 0;
  };
  struct AdminGrant {
    Scope scope;
    TimePoint expires;
  };
  using Outbox = std::vector<Delivery>;

  // REQUIRES: mu_ held, for all *Locked helpers.
  const Repository* FindRepoLocked(const std::string& owner, const std::string& repo) const;
  Status CheckScopeLocked(const Scope& scope) const;
  RunnerState* FindRunnerByCredentialLocked(const Secret& credential);
  Runner SnapshotLocked(const RunnerState& r) const;
  // What a REST read shows of `r`: the snapshot, with the busy flag lying as the faults say.
  Runner ShownLocked(const RunnerState& r) const;
  bool OnlineLocked(const RunnerState& r) const;
  // --- registration expiry and re-queue (github_model_expiry.cpp) ---
  bool ExpiredLocked(const RunnerState& r) const;
  TimePoint ExpiryTimeLocked(const RunnerState& r) const;  // REQUIRES: ExpiredLocked(r)
  void ExpireRegistrationsLocked();  // removes expired registrations, remembering credentials
  void RequeueUnpickedLocked();      // jobs whose runner did not pick them up in time
  void FailJobsOfLostRunnersLocked(Outbox& out);  // lost_runner_fails_job_after
  bool WedgesLocked(Job& job);  // whether the runner picking up `job` wedges (wedged_runners)
  void NoteContactLocked(RunnerState& r);  // last_seen, and online_since when it was offline
  // NotFound "Registration … was not found." for a credential whose registration expired.
  Status ExpiredRegistrationLocked(const Secret& credential) const;
  // GitHub's refusal of `r`'s version now ("" = accepted); marks it refused when it is.
  std::string RefuseVersionLocked(RunnerState& r);
  bool RunnerServesLocked(const RunnerState& r, const Job& job) const;
  // Runner groups (github_model.cpp): whether a JIT config in `scope` may name group `id`;
  // whether group `id` admits a job of `repository`; its name ("Default" for 1).
  bool GroupKnownLocked(const Scope& scope, int64_t id) const;
  bool GroupAdmitsLocked(int64_t id, const std::string& repository) const;
  std::string GroupNameLocked(int64_t id) const;
  void AssignLocked(Outbox& out);
  // Runners that could take a job now: not busy, holding none, online (by id).
  std::vector<RunnerState*> IdleRunnersLocked();
  void AssignRandomLocked(Outbox& out);  // AssignLocked under the "random" assignment
  void GiveJobLocked(Job& job, RunnerState& r, Outbox& out);
  void CompleteLocked(Job& job, const std::string& conclusion, Outbox& out);
  void EmitLocked(const Job& job, const std::string& action, Outbox& out);
  std::string PayloadLocked(const Job& job, const std::string& action,
                            int64_t installation_id = 0) const;
  // With probability foreign_deliveries_, a copy of `d` (for `job`) as another installation's.
  void MaybeForeignLocked(const Job& job, const std::string& action, Outbox& out);
  // Approves the waiting jobs whose approve_at has come (github_model_foreign.cpp).
  void ApproveDueLocked(TimePoint now, Outbox& out);
  void ApproveLocked(Job& job, const std::string& detail, Outbox& out);
  // `job` as GET shows it under the jobs API lag (github_model_foreign.cpp).
  Job LaggedLocked(const Job& job) const;
  void Dispatch(Outbox out);
  void RecordOutcome(int64_t delivery_id, const DeliveryOutcome& outcome);
  // REQUIRES: mu_ held. Whether `filter` shows `d` (github_model_hooks.cpp).
  bool HookShowsLocked(const HookFilter& filter, const Delivery& d) const;
  Status CheckHookLocked(const HookFilter& filter) const;  // REQUIRES: mu_ held
  // --- scale sets (github_model_scaleset*.cpp); REQUIRES: mu_ held ---
  Result<ScaleSetState*> FindScaleSetLocked(const Scope& scope, int64_t id);
  Result<const ScaleSetState*> FindScaleSetLocked(const Scope& scope, int64_t id) const;
  ScaleSet SnapshotScaleSetLocked(const ScaleSetState& s) const;
  ScaleSetStatistics StatisticsLocked(const ScaleSetState& s) const;
  bool ScopeServesRepoLocked(const Scope& scope, const std::string& repository) const;
  void RouteScaleSetJobsLocked();  // jobs whose runs-on names a set become the set's
  // Ends sessions idle too long, reassigns jobs not acquired or started in time, offers jobs.
  void MaintainScaleSetsLocked();
  void OfferLocked(ScaleSetState& s);
  void ReassignLocked(ScaleSetJob& job);
  void EndSessionLocked(ScaleSetState& s);
  // The request ids `s` holds after acquiring those offered, within its capacity.
  std::vector<int64_t> AcquireLocked(ScaleSetState& s, const std::vector<int64_t>& request_ids);
  Result<ScaleSetState*> SessionByTokenLocked(int64_t id, const Secret& token);
  ScaleSetSession SessionViewLocked(ScaleSetState& s, const Secret& token) const;
  // A job event for the set's queue (dropped while the set has no session).
  void PushEventLocked(const Job& job, const ScaleSetJob& ss, const std::string& type,
                       const std::string& result = "");
  ScaleSetJobEvent EventLocked(const Job& job, const ScaleSetJob& ss,
                               const std::string& type) const;
  void ScaleSetJobStartedLocked(const Job& job, const RunnerState& r);  // from GiveJobLocked
  void ScaleSetJobEndedLocked(const Job& job);                          // from CompleteLocked

  GithubModelOptions options_;
  Seam seam_;
  WebhookSender* sender_;

  mutable std::mutex mu_;
  std::vector<Repository> repos_;
  std::map<std::string, int64_t> org_ids_;
  std::map<int64_t, RunnerState> runners_;
  std::map<int64_t, Job> jobs_;
  // The jobs not completed, by id: what Tick looks at (several walks a request, so each holds
  // its job rather than a key to look up again; jobs_ never drops a job).
  std::map<int64_t, Job*> unfinished_;
  std::vector<Delivery> deliveries_;  // in the order made; ids ascending
  // Credentials of runners removed after their job, so that a late report gets Conflict
  // ("the job has ended") rather than Unauthorized.
  std::map<std::string, int64_t> retired_credentials_;
  // Credentials (hashes) of registrations GitHub expired, with the runner's id.
  std::map<std::string, int64_t> expired_credentials_;
  std::map<int64_t, TimePoint> expired_at_;  // by runner id: when its registration expired
  int64_t next_runner_id_ = 1;
  int64_t next_job_id_ = 10'000'001;
  int64_t next_run_id_ = 5'000'001;
  int64_t next_label_id_ = 1;
  Duration runner_listing_lag_{0};
  double runner_busy_lies_ = 0;
  bool random_assignment_ = false;
  double completed_webhook_loss_ = 0;
  double foreign_deliveries_ = 0;
  Duration jobs_api_lag_{0};
  RunnerVersionPolicy runner_versions_;
  std::map<int64_t, ScaleSetState> scale_sets_;
  std::map<int64_t, ScaleSetJob> scale_set_jobs_;   // by REST job id
  std::map<std::string, AdminGrant> admin_tokens_;  // by SHA-256 hex of the token
  int64_t next_scale_set_id_ = 1;
  int64_t next_message_id_ = 1;
  int64_t next_request_id_ = 1'000'001;
  std::map<int64_t, int64_t> request_jobs_;  // runnerRequestId → REST job id, kept to the end
  std::atomic<bool> long_polls_stopped_{false};
};

// The typeName of a second session's refusal (409), as GitHub's Actions service names it.
inline constexpr const char* kSessionConflict =
    "GitHub.DistributedTask.WebApi.TaskAgentSessionConflictException";

// The error type of a runner GitHub refuses for its version (HTTP 403 on the runner protocol).
inline constexpr const char* kRunnerVersionRefused = "RunnerVersionDeprecated";

// The error type of a runner whose registration expired (HTTP 404 on the runner protocol).
inline constexpr const char* kRegistrationNotFound = "RegistrationNotFound";

// Case-insensitive: every job label must be one of the runner's labels.
bool LabelsMatch(const std::vector<std::string>& job_labels,
                 const std::vector<RunnerLabel>& runner_labels);

}  // namespace mvr::emulate::github
