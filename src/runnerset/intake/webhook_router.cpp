#include "runnerset/intake/webhook_router.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/encoding.h"
#include "base/time_format.h"
#include "github/labels.h"
#include "github/platform_labels.h"
#include "github/workflow_job_event.h"
#include "runnerset/config/runner_name.h"
#include "runnerset/intake/workflow_job_reader.h"

namespace mvr::runnerset {

namespace {

constexpr size_t kMaxDeliveryIdBytes = 128;
constexpr size_t kShownBytes = 60;  // of a header or member echoed in a message

// A header or member value as a message shows it: clipped, and only printable ASCII.
std::string Shown(std::string_view text) { return PrintableExcerpt(text, kShownBytes); }

WebhookDecision Ignored(IgnoreReason reason, std::string message) {
  WebhookDecision d;
  d.verdict = WebhookVerdict::kIgnored;
  d.ignore_reason = reason;
  d.http_status = 200;
  d.message = "ignored: " + std::move(message);
  return d;
}

WebhookDecision Refused(WebhookVerdict verdict, int http_status, std::string message) {
  WebhookDecision d;
  d.verdict = verdict;
  d.http_status = http_status;
  d.message = std::move(message);
  return d;
}

// The delivery id, checked: the signature covers only the body, so the id is whatever the sender
// put (GitHub's are GUIDs). It goes into the intent (JSON, which must be UTF-8) and the logs.
std::optional<WebhookDecision> RefuseDeliveryId(std::string_view id) {
  if (id.empty() || id.size() > kMaxDeliveryIdBytes) {
    return Refused(WebhookVerdict::kMalformed, 400,
                   std::string(github::kDeliveryHeader) + " is missing or longer than " +
                       std::to_string(kMaxDeliveryIdBytes) + " bytes");
  }
  for (char c : id) {
    if (c < 0x21 || c > 0x7e) {
      return Refused(
          WebhookVerdict::kMalformed, 400,
          std::string(github::kDeliveryHeader) + " holds a character other than printable ASCII");
    }
  }
  return std::nullopt;
}

// A queued job: launched on the first class that takes it, else ignored (naming why).
WebhookDecision OnQueued(WorkflowJobFields& job, const std::vector<RunnerClass>& classes,
                         const GitHubSettings& allowed, const std::string& what,
                         std::string_view delivery_id, TimePoint now) {
  const RunnerClass* taker = nullptr;
  bool has_class_label = false;
  for (const RunnerClass& c : classes) {
    for (const std::string& label : job.labels)
      has_class_label |= github::LabelEquals(label, c.label);
    if (c.Takes(job.labels)) {
      taker = &c;
      break;
    }
  }
  const bool self_hosted = std::any_of(job.labels.begin(), job.labels.end(), [](const auto& l) {
    return github::LabelEquals(l, "self-hosted");
  });
  if (has_class_label || self_hosted) {
    if (std::optional<std::string> foreign = github::ForeignPlatformLabel(job.labels)) {
      WebhookDecision d = Ignored(
          IgnoreReason::kNotArm64,
          "queued " + what + " asks for " + Shown(*foreign) +
              ": Lambda MicroVMs are ARM64 Linux only, so this set runs no such job (run it on "
              "other runners, or ask for ARM64)");
      d.refused = RefusedJob{job.repository,  job.job_id,  Shown(job.job_name),
                             Shown(*foreign), "not_arm64", now};
      return d;
    }
  }
  if (!has_class_label) {
    return Ignored(IgnoreReason::kNoClassLabel, "queued " + what + " has no class label");
  }
  if (allowed.uses_scale_sets() && job.labels.size() == 1) {
    return Ignored(IgnoreReason::kScaleSetJob,
                   "queued " + what +
                       " asks for a class label alone: GitHub gives it to the class's scale set, "
                       "whose listener launches for it");
  }
  if (!taker) {
    return Ignored(IgnoreReason::kNoClassTakesIt,
                   "queued " + what +
                       " asks for labels its class does not offer (classes[].labels, labelMatch)");
  }
  if (!allowed.Allows(job.repository)) {
    return Ignored(IgnoreReason::kRepositoryNotAllowed,
                   "queued " + what + ": the repository is not in github.allowedRepositories");
  }
  WebhookDecision d;
  d.verdict = WebhookVerdict::kLaunch;
  d.http_status = 202;
  d.message = "launch: " + what + " on class " + taker->label;
  d.intent = LaunchIntent{.repository = std::move(job.repository),
                          .job_id = job.job_id,
                          .run_id = job.run_id,
                          .run_attempt = job.run_attempt,
                          .job_name = std::move(job.job_name),
                          .class_label = taker->label,
                          .labels = std::move(job.labels),
                          .queued_at = now,
                          .delivery_id = std::string(delivery_id)};
  return d;
}

// A completed job: its runner terminated when the set launched it (by the runner name's prefix).
WebhookDecision OnCompleted(WorkflowJobFields& job, const std::string& runner_name_prefix,
                            const std::string& what, std::string_view delivery_id, TimePoint now) {
  if (job.runner_name.empty()) {
    return Ignored(IgnoreReason::kNoRunner,
                   "completed " + what + " had no runner (cancelled while queued)");
  }
  if (!IsRunnerOf(runner_name_prefix, job.runner_name)) {
    return Ignored(IgnoreReason::kForeignRunner, "completed " + what + " ran on runner " +
                                                     Shown(job.runner_name) +
                                                     ", not one of this set's");
  }
  WebhookDecision d;
  d.verdict = WebhookVerdict::kTerminate;
  d.http_status = 202;
  d.message = "terminate: runner " + Shown(job.runner_name) + " finished " + what;
  // The delivery's own word on the job (its start, conclusion and name) is what the job's record
  // keeps: the launcher needs no GET of the job (a started_at it cannot read is left unset, and
  // the launcher reads the job instead).
  Result<TimePoint> created = ParseRfc3339(job.created_at);
  Result<TimePoint> started = ParseRfc3339(job.started_at);
  d.intent = TerminateIntent{.runner_name = std::move(job.runner_name),
                             .repository = std::move(job.repository),
                             .job_id = job.job_id,
                             .completed_at = now,
                             .delivery_id = std::string(delivery_id),
                             .created_at = created.ok() ? *created : TimePoint{},
                             .started_at = started.ok() ? *started : TimePoint{},
                             .conclusion = std::move(job.conclusion),
                             .job_name = std::move(job.job_name)};
  return d;
}

// A job event for the launcher to record in the job's state (job_state.h): a delivery of a job of
// the set's classes that asks for nothing else.
WebhookDecision Record(WorkflowJobFields& job, const std::string& what,
                       std::string_view delivery_id) {
  WebhookDecision d;
  d.verdict = WebhookVerdict::kRecord;
  d.http_status = 202;
  d.message = "record: " + job.action + " of " + what +
              (job.action == "waiting" ? " (waiting for an environment's approval: no VM until "
                                         "GitHub says queued)"
                                       : "");
  d.intent = JobEventIntent{.repository = std::move(job.repository),
                            .job_id = job.job_id,
                            .action = job.action,
                            .delivery_id = std::string(delivery_id)};
  return d;
}

bool HasClassLabel(const WorkflowJobFields& job, const std::vector<RunnerClass>& classes) {
  for (const RunnerClass& c : classes) {
    for (const std::string& label : job.labels) {
      if (github::LabelEquals(label, c.label)) return true;
    }
  }
  return false;
}

bool HasScope(const GitHubSettings& scope) {
  return !scope.repository.empty() || !scope.organization.empty() || !scope.enterprise.empty();
}

// The id of the job a runner was launched for, from its name (runner_name.h; a hot-pool
// runner's name carries none).
std::optional<int64_t> LaunchedForByName(const std::string& runner, const std::string& prefix) {
  const RunnerNameParts parts = ParseRunnerName(prefix, runner);
  if (parts.kind != RunnerNameParts::Kind::kJob) return std::nullopt;
  return parts.job_id;
}

// A job in progress on a runner the set launched for another job (issue 30, item 1): that job
// may now wait for a runner that will not come, so the launcher is told at once.
WebhookDecision OnInProgress(WorkflowJobFields& job, const std::string& runner_name_prefix,
                             const std::string& what, std::string_view delivery_id) {
  std::optional<int64_t> launched_for = LaunchedForByName(job.runner_name, runner_name_prefix);
  if (!launched_for || *launched_for == job.job_id) {
    return Ignored(IgnoreReason::kOtherAction, "in_progress " + what);
  }
  WebhookDecision d;
  d.verdict = WebhookVerdict::kTaken;
  d.http_status = 202;
  d.message = "taken: runner " + Shown(job.runner_name) + ", launched for job " +
              std::to_string(*launched_for) + ", took " + what;
  d.intent = TakenIntent{.runner_name = std::move(job.runner_name),
                         .repository = std::move(job.repository),
                         .job_id = job.job_id,
                         .delivery_id = std::string(delivery_id)};
  return d;
}

}  // namespace

// simdjson's parser keeps buffers sized to the largest document it has read; reusing parsers
// saves their allocation on every delivery. A reader is taken out under the lock and used
// outside it, so concurrent deliveries each get their own.
class WebhookRouter::ReaderPool {
 public:
  std::unique_ptr<WorkflowJobReader> Take() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        std::unique_ptr<WorkflowJobReader> reader = std::move(idle_.back());
        idle_.pop_back();
        return reader;
      }
    }
    return std::make_unique<WorkflowJobReader>();
  }

  void Give(std::unique_ptr<WorkflowJobReader> reader) {
    std::lock_guard<std::mutex> lock(mu_);
    if (idle_.size() < kMaxIdle) idle_.push_back(std::move(reader));
  }

 private:
  static constexpr size_t kMaxIdle = 16;
  std::mutex mu_;
  std::vector<std::unique_ptr<WorkflowJobReader>> idle_;
};

Result<WebhookRouter> WebhookRouter::Create(WebhookRouterConfig config) {
  if (config.secret.empty()) {
    return InvalidArgument(
        "webhook secret: empty; set the same secret on the GitHub webhook (or App) and here");
  }
  if (config.classes.empty()) {
    return InvalidArgument("classes: at least one runner class label is required");
  }
  for (size_t i = 0; i < config.classes.size(); ++i) {
    const std::string& label = config.classes[i].label;
    if (label.empty()) return InvalidArgument("classes[" + std::to_string(i) + "].label: empty");
    for (size_t j = 0; j < i; ++j) {
      if (github::LabelEquals(label, config.classes[j].label)) {
        return InvalidArgument("classes[" + std::to_string(i) + "].label: '" + label +
                               "' is already the label of classes[" + std::to_string(j) +
                               "] (GitHub compares labels case-insensitively)");
      }
    }
  }
  if (config.runner_name_prefix.empty()) {
    return InvalidArgument(
        "runnerNamePrefix: empty; it tells the set's runners from all others, so completed jobs "
        "of other runners never terminate anything");
  }
  if (config.body_limit == 0) return InvalidArgument("webhook body limit: must be positive");
  return WebhookRouter(std::move(config), std::make_unique<ReaderPool>());
}

WebhookRouter::WebhookRouter(WebhookRouterConfig config, std::unique_ptr<ReaderPool> readers)
    : verifier_(config.secret),
      classes_(std::move(config.classes)),
      runner_name_prefix_(std::move(config.runner_name_prefix)),
      body_limit_(config.body_limit),
      readers_(std::move(readers)) {
  allowed_.allowed_repositories = std::move(config.allowed_repositories);
  allowed_.source = config.scope.source;  // which queued jobs are a scale set's (OnQueued)
  scope_ = std::move(config.scope);
  scope_.allowed_repositories.clear();
  installation_ids_ = std::move(config.installation_ids);
}

WebhookRouter::WebhookRouter(WebhookRouter&&) noexcept = default;
WebhookRouter& WebhookRouter::operator=(WebhookRouter&&) noexcept = default;
WebhookRouter::~WebhookRouter() = default;

WebhookDecision WebhookRouter::Route(const http::Headers& headers, std::string_view body,
                                     TimePoint now) const {
  std::string event = headers.GetOr(github::kEventHeader, "");
  std::string delivery_id = headers.GetOr(github::kDeliveryHeader, "");
  std::string signature = headers.GetOr(github::kSignatureHeader, "");
  return Route(WebhookDelivery{event, delivery_id, signature, body}, now);
}

WebhookDecision WebhookRouter::Route(const WebhookDelivery& delivery, TimePoint now) const {
  // The limit comes first so that an oversized body costs nothing, not even a hash.
  if (delivery.body.size() > body_limit_) {
    return Refused(WebhookVerdict::kTooLarge, 413,
                   "the body is " + std::to_string(delivery.body.size()) +
                       " bytes, over the webhook's limit of " + std::to_string(body_limit_));
  }
  if (Status verified = verifier_.Verify(delivery.signature, delivery.body); !verified.ok()) {
    return Refused(WebhookVerdict::kRejectedSignature, 401, verified.message());
  }
  if (delivery.event.empty()) {
    return Refused(WebhookVerdict::kMalformed, 400,
                   std::string(github::kEventHeader) + " is missing; is this a GitHub webhook?");
  }
  if (delivery.event == "ping") return Ignored(IgnoreReason::kPing, "ping");
  if (delivery.event != "workflow_job") {
    return Ignored(IgnoreReason::kOtherEvent, "event " + Shown(delivery.event) +
                                                  " (subscribe the webhook to workflow jobs only)");
  }
  if (std::optional<WebhookDecision> refused = RefuseDeliveryId(delivery.delivery_id)) {
    return *std::move(refused);
  }

  std::unique_ptr<WorkflowJobReader> reader = readers_->Take();
  Result<WorkflowJobFields> read = reader->Read(delivery.body);
  readers_->Give(std::move(reader));
  if (!read.ok()) return Refused(WebhookVerdict::kMalformed, 400, read.status().message());
  WorkflowJobFields& job = *read;
  std::string what = "job " + std::to_string(job.job_id) + " of " + job.repository;
  if (std::optional<WebhookDecision> foreign = RefuseForeign(job, delivery.body, what, now)) {
    return *std::move(foreign);
  }

  if (job.action == "queued") {
    return OnQueued(job, classes_, allowed_, what, delivery.delivery_id, now);
  }
  const bool ours = HasClassLabel(job, classes_) && allowed_.Allows(job.repository);
  if (job.action == "completed") {
    WebhookDecision d = OnCompleted(job, runner_name_prefix_, what, delivery.delivery_id, now);
    return d.intent || !ours ? d : Record(job, what, delivery.delivery_id);
  }
  if (job.action == "in_progress") {
    WebhookDecision d = OnInProgress(job, runner_name_prefix_, what, delivery.delivery_id);
    return d.intent || !ours ? d : Record(job, what, delivery.delivery_id);
  }
  if (job.action == "waiting") {
    if (!ours) {
      return Ignored(IgnoreReason::kOtherAction,
                     "waiting " + what + " (not a job of this set's classes)");
    }
    return Record(job, what, delivery.delivery_id);
  }
  return Ignored(IgnoreReason::kOtherAction, "action " + Shown(job.action) + " of " + what);
}

std::optional<WebhookDecision> WebhookRouter::RefuseForeign(const WorkflowJobFields& job,
                                                            std::string_view body,
                                                            const std::string& what,
                                                            TimePoint now) const {
  RefusedJob refused{job.repository, job.job_id, Shown(job.job_name), "", "", now};
  if (!installation_ids_.empty()) {
    Result<std::optional<int64_t>> id = ReadInstallationId(body);
    if (!id.ok()) return Refused(WebhookVerdict::kMalformed, 400, id.status().message());
    if (*id && std::find(installation_ids_.begin(), installation_ids_.end(), **id) ==
                   installation_ids_.end()) {
      WebhookDecision d =
          Ignored(IgnoreReason::kForeignInstallation,
                  what + " is of installation " + std::to_string(**id) +
                      ", not this set's: GitHub delivered another installation's job (an "
                      "incident, or the App's webhook URL shared by other runner sets)");
      refused.label = "installation " + std::to_string(**id);
      refused.reason = IgnoreReasonName(IgnoreReason::kForeignInstallation);
      d.refused = refused;
      return d;
    }
  }
  if (HasScope(scope_) && !scope_.Serves(job.repository)) {
    WebhookDecision d =
        Ignored(IgnoreReason::kForeignRepository,
                what +
                    ": the repository is outside the set's github.repository, organization or "
                    "enterprise (is the webhook configured wider than the set?)");
    refused.label = Shown(job.repository);
    refused.reason = IgnoreReasonName(IgnoreReason::kForeignRepository);
    d.refused = refused;
    return d;
  }
  return std::nullopt;
}

Result<std::optional<int64_t>> WebhookRouter::ReadInstallationId(std::string_view body) const {
  std::unique_ptr<WorkflowJobReader> reader = readers_->Take();
  Result<std::optional<int64_t>> id = reader->ReadInstallationId(body);
  readers_->Give(std::move(reader));
  return id;
}

}  // namespace mvr::runnerset
