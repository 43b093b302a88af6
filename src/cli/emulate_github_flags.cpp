#include "cli/emulate_github_flags.h"

#include <string>
#include <vector>

namespace mvr::cli::github_flags {

// What breaks runner fleets in the field (issue 30): the faults GitHub's side can inject.
void AddFieldFaultFlags(CLI::App& g, GithubFlags& f) {
  g.add_option("--runner-busy-lies", f.busy_lies,
               "probability that a runner listing or GET says busy:false for a runner running a "
               "job (actions/runner #4422); a DELETE believes the same lie")
      ->check(CLI::Range(0.0, 1.0));
  g.add_option("--assignment", f.assignment,
               "which idle runner takes a queued job: oldest (the oldest matching runner, oldest "
               "job first) or random (any idle runner whose labels match, so a runner launched "
               "for one job may take another)")
      ->check(CLI::IsMember({"oldest", "random"}))
      ->capture_default_str();
  g.add_option("--completed-webhook-loss", f.completed_loss,
               "probability that a workflow_job completed delivery is dropped, never sent "
               "(actions/runner #4309)")
      ->check(CLI::Range(0.0, 1.0));
  g.add_option("--approval-delay-seconds", f.approval_delay_s,
               "a job queued with wait_for_environment is approved this long after it was queued "
               "(0: only POST /_emulator/jobs/{id}/approve approves it)")
      ->check(CLI::Range(int64_t{0}, int64_t{30} * 24 * 3600));
  g.add_option("--foreign-deliveries", f.foreign_deliveries,
               "probability that a delivery is followed by a copy as another installation's, of "
               "a repository and job this emulator does not have (RunsOn #509)")
      ->check(CLI::Range(0.0, 1.0));
  g.add_option("--foreign-installation-id", f.foreign_installation_id,
               "the installation.id those copies name")
      ->check(CLI::Range(int64_t{1}, INT64_MAX))
      ->capture_default_str();
  g.add_option("--min-runner-version", f.min_runner_version,
               "refuse runners older than this version (403 'Runner version vX is deprecated and "
               "cannot receive messages.', no job; actions/runner #4392; default 2.329.0, "
               "GitHub's own minimum; \"\" for none)");
  g.add_option("--dispatch-workflow", f.dispatch_workflows,
               "a workflow FILE every repository holds with workflow_dispatch, shaped as "
               "examples/workflows/mvr-canary.yml (input runner-label; one job runs-on "
               "[self-hosted, <runner-label>] and runs `true`): what `mvr doctor --canary` "
               "dispatches");
  g.add_option("--latest-runner-release", f.latest_runner_release,
               "the newest runner release: runners older than it get no job 30 days after "
               "--latest-runner-released-at");
  g.add_option("--latest-runner-released-at", f.latest_runner_released_at,
               "RFC 3339 time of --latest-runner-release (default: more than 30 days ago)");
}

// GitHub's secondary rate limits (issue 30, item 4).
// The runner scale-set API's limits and faults (docs/emulate-github.md, "Runner scale sets").
void AddScaleSetFlags(CLI::App& g, GithubFlags& f) {
  g.add_option("--scaleset-long-poll-ms", f.scaleset_long_poll_ms,
               "a GET of scale-set messages waits this long before answering 202")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{600'000}));
  g.add_option("--scaleset-acquire-timeout-seconds", f.scaleset_acquire_timeout_s,
               "a JobAvailable not acquired this long is offered again (a reassignment)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{86'400}));
  g.add_option("--scaleset-start-timeout-seconds", f.scaleset_start_timeout_s,
               "an acquired job no runner of the set started this long is offered again")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{86'400}));
  g.add_option("--scaleset-session-idle-seconds", f.scaleset_session_idle_s,
               "a scale-set session not polled this long ends (a new one may then be made)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{86'400}));
  g.add_option("--scaleset-lost-acknowledgements", f.scaleset.lost_acknowledgements,
               "probability a DELETE of a message answers 204 but the message stays")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  g.add_option("--scaleset-message-delay-ms", f.scaleset_message_delay_ms,
               "a scale-set message is visible only this long after it is made")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{3'600'000}));
  g.add_flag("--scaleset-replay-assigned", f.scaleset.replay_assigned_on_new_session,
             "a new session is told of the jobs its set acquired before (off: ARC #4027)");
}

void AddRateLimitFlags(CLI::App& g, GithubFlags& f) {
  g.add_option("--rate-limits", f.rate_limits,
               "github: also enforce GitHub's secondary limits (100 concurrent, 900 points a "
               "minute per endpoint, 80 content-creating requests a minute and 500 an hour, "
               "2000 installation tokens an hour)")
      ->capture_default_str()
      ->check(CLI::IsMember({"off", "github"}));
  g.add_option("--rate-limit-time-scale", f.rate_limit_time_scale,
               "every rate-limit window lasts this fraction of its length (0.01: a minute is "
               "0.6 s), for tests")
      ->capture_default_str()
      ->check(CLI::Range(0.0001, 1.0));
  g.add_option("--rate-limit-set", f.rate_limit_sets,
               "NAME=N: set one of GitHub's secondary limits (concurrent, "
               "endpoint_points_per_minute, content_per_minute, content_per_hour, "
               "token_requests_per_hour) to N, 0 for off (repeatable; with --rate-limits github)");
}

// Who may call: personal access tokens and GitHub Apps, with what their installations hold.
void AddCredentialFlags(CLI::App& g, GithubFlags& f) {
  g.add_option("--pat", f.pats, "accepted personal access token (repeatable; prefer --pat-file)");
  g.add_option("--pat-file", f.pat_file, "file with accepted personal access tokens, one a line");
  g.add_option("--app-id", f.app_ids,
               "GitHub App id whose JWTs are accepted (repeatable: several Apps, each with its "
               "own installation and rate-limit budgets)")
      ->check(CLI::PositiveNumber);
  g.add_option("--app-key-file", f.app_key_files,
               "PEM private key of that App (repeatable: the k-th goes with the k-th --app-id)");
  g.add_option("--installation-id", f.installation_ids,
               "that App's installation id (default 1 with one App; repeatable, and required "
               "for each --app-id when there are several)")
      ->check(CLI::PositiveNumber);
  g.add_option("--installation-token-format", f.installation_token_format,
               "what POST /app/installations/{id}/access_tokens issues: stateless (GitHub's "
               "~520-character ghs_ tokens with dots, since 2026-04) or classic (ghs_ + 36)")
      ->capture_default_str()
      ->check(CLI::IsMember({"stateless", "classic"}));
  g.add_option("--installation-permission", f.installation_permissions,
               "NAME=LEVEL: a permission the App's installation shows (repeatable; given, it "
               "replaces the default set: actions=read, administration=write, metadata=read, "
               "organization_self_hosted_runners=write)");
}

// Where workflow_job webhooks go and how they are signed and shaped.
void AddWebhookFlags(CLI::App& g, GithubFlags& f) {
  g.add_option("--webhook-url", f.webhook_url, "where workflow_job webhooks are delivered");
  g.add_option("--webhook-secret-file", f.webhook_secret_file, "file holding the webhook secret");
  g.add_option("--webhook-content-type", f.webhook_content_type,
               "the hook's content type: json, or form (payload=<URL-encoded JSON>)")
      ->capture_default_str()
      ->check(CLI::IsMember({"json", "form"}));
  g.add_option("--delivery-delay-min-ms", f.delay_min_ms, "minimum webhook delivery delay")
      ->check(CLI::Range(int64_t{0}, kHourMs));
  g.add_option("--delivery-delay-max-ms", f.delay_max_ms,
               "maximum webhook delivery delay (uniform in between)")
      ->check(CLI::Range(int64_t{0}, kHourMs));
  g.add_option("--delivery-loss", f.loss, "probability a webhook is never delivered")
      ->check(CLI::Range(0.0, 1.0));
  g.add_option("--delivery-duplication", f.duplication, "probability a webhook is delivered twice")
      ->check(CLI::Range(0.0, 1.0));
  g.add_option("--delivery-reorder", f.reorder,
               "probability a webhook is held back so later ones overtake it")
      ->check(CLI::Range(0.0, 1.0));
  g.add_option("--reorder-delay-ms", f.reorder_delay_ms, "how long a held-back webhook waits")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, kHourMs));
}

// The job scheduler: its period, and when queued jobs, idle runners and registrations expire.
void AddSchedulerFlags(CLI::App& g, GithubFlags& f) {
  g.add_option("--queue-timeout-seconds", f.queue_timeout_s, "jobs queued this long are cancelled")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, kMonthSeconds));
  g.add_option("--runner-offline-after-seconds", f.offline_after_s,
               "an idle runner silent this long shows offline")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, kMonthSeconds));
  g.add_option("--registration-idle-expiry-seconds", f.idle_expiry_s,
               "a runner listening (online, idle) this long without a job, or never connected "
               "this long after registering, loses its registration; 0 = never")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, kMonthSeconds));
  g.add_option("--offline-registration-expiry-seconds", f.offline_expiry_s,
               "a once-connected runner offline this long since its last contact loses its "
               "registration; 0 = never")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, kMonthSeconds));
  g.add_option("--assignment-pickup-timeout-seconds", f.pickup_timeout_s,
               "a job handed to a runner that has not picked it up this long goes back to the "
               "queue for another runner; 0 = never")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, kMonthSeconds));
  g.add_option("--tick-ms", f.tick_ms, "scheduler period")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{10}, kHourMs));
}

// Issue 55, items 4 and 5: runners lost mid-job and wedged runners (github_model_expiry.cpp).
void AddLostRunnerFlags(CLI::App& g, GithubFlags& f) {
  g.add_option("--lost-runner-fails-job-seconds", f.lost_runner_s,
               "a job in progress whose runner has made no contact this long fails (the runner "
               "lost communication: its VM failed or was terminated); 0 = never")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, kMonthSeconds));
  g.add_option("--wedged-runners", f.wedged_runners,
               "the runner picking up a job wedges with this probability: its worker never reads "
               "the job and it is heard from no more (actions/runner #4598)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
}

}  // namespace mvr::cli::github_flags
