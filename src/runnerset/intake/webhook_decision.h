// WebhookDecision: what the runner set's webhook made of one delivery - an intent to put on the
// job queue, an acknowledgement of something it ignores, or a refusal - with the HTTP status to
// answer and stable names for the metrics counters.
// Thread-safety: plain values and pure functions.
#pragma once

#include <optional>
#include <string>

#include "runnerset/jobs/intent.h"
#include "runnerset/jobs/refused_job.h"

namespace mvr::runnerset {

// One per metrics counter; every delivery gets exactly one.
enum class WebhookVerdict {
  kLaunch,     // 202: a queued job with a class label; `intent` is a LaunchIntent
  kTerminate,  // 202: a completed job of one of the set's runners; a TerminateIntent
  kTaken,      // 202: a job in progress on a runner the set launched for another job; a TakenIntent
  kRecord,     // 202: waiting, in_progress or completed of a job of the set's classes that asks
               // for nothing else; a JobEventIntent (its state, job_state.h)
  kIgnored,    // 200: acknowledged, nothing to do; `ignore_reason` says why
  kRejectedSignature,  // 401: X-Hub-Signature-256 missing, malformed or wrong
  kMalformed,          // 400: signed, but not a readable workflow_job delivery
  kTooLarge,           // 413: the body is over the configured limit (not even verified)
};

enum class IgnoreReason {
  kNone,                  // the verdict is not kIgnored
  kPing,                  // X-GitHub-Event: ping, sent when the hook is created
  kOtherEvent,            // an event other than workflow_job
  kOtherAction,           // waiting, in_progress on its own runner or another's, or a new action
  kNoClassLabel,          // a queued job none of whose labels is a class label of this set
  kNoRunner,              // a completed job no runner took (cancelled while queued)
  kForeignRunner,         // a completed job whose runner name lacks this set's prefix
  kNoClassTakesIt,        // a queued job with a class label asking for labels it lacks
  kRepositoryNotAllowed,  // a queued job of a repository not in allowedRepositories
  // a queued self-hosted job (or one naming a class label) that asks for an architecture or OS a
  // MicroVM is not (x64, windows: github/platform_labels.h); `refused` names the label
  kNotArm64,
  // the delivery's installation.id is none of the set's GitHub Apps' installations (a GitHub
  // incident delivered other installations' jobs, RunsOn #509); `refused` names it
  kForeignInstallation,
  // the delivery's repository is outside the set's repository, organisation or enterprise
  kForeignRepository,
  // with github.source `both`: a queued job whose runs-on is exactly one class label, which GitHub
  // gives to that class's scale set: the set's listener launches for it (issue 54)
  kScaleSetJob,
};

// Stable snake_case names, used as metric label values and in logs: "launch", "terminate",
// "taken", "record", "ignored", "rejected_signature", "malformed", "too_large".
const char* WebhookVerdictName(WebhookVerdict verdict);
// "none", "ping", "other_event", "other_action", "no_class_label", "no_runner", "foreign_runner",
// "labels_not_offered", "repository_not_allowed", "not_arm64", "foreign_installation",
// "foreign_repository", "scale_set_job".
const char* IgnoreReasonName(IgnoreReason reason);

struct WebhookDecision {
  WebhookVerdict verdict = WebhookVerdict::kIgnored;
  IgnoreReason ignore_reason = IgnoreReason::kNone;
  int http_status = 200;
  // One line for the answer's body and the log: what was decided and why. Never contains the
  // secret, the expected signature or the body.
  std::string message;
  std::optional<Intent> intent;  // set exactly when the verdict is kLaunch, kTerminate, kTaken or
                                 // kRecord
  std::optional<RefusedJob> refused;  // set when the reason is kNotArm64 or kForeign*

  bool accepted() const { return http_status >= 200 && http_status < 300; }
};

}  // namespace mvr::runnerset
