#include "runnerset/intake/webhook_decision.h"

namespace mvr::runnerset {

const char* WebhookVerdictName(WebhookVerdict verdict) {
  switch (verdict) {
    case WebhookVerdict::kLaunch:
      return "launch";
    case WebhookVerdict::kTerminate:
      return "terminate";
    case WebhookVerdict::kTaken:
      return "taken";
    case WebhookVerdict::kRecord:
      return "record";
    case WebhookVerdict::kIgnored:
      return "ignored";
    case WebhookVerdict::kRejectedSignature:
      return "rejected_signature";
    case WebhookVerdict::kMalformed:
      return "malformed";
    case WebhookVerdict::kTooLarge:
      return "too_large";
  }
  return "ignored";
}

const char* IgnoreReasonName(IgnoreReason reason) {
  switch (reason) {
    case IgnoreReason::kNone:
      return "none";
    case IgnoreReason::kPing:
      return "ping";
    case IgnoreReason::kOtherEvent:
      return "other_event";
    case IgnoreReason::kOtherAction:
      return "other_action";
    case IgnoreReason::kNoClassLabel:
      return "no_class_label";
    case IgnoreReason::kNoRunner:
      return "no_runner";
    case IgnoreReason::kForeignRunner:
      return "foreign_runner";
    case IgnoreReason::kNoClassTakesIt:
      return "labels_not_offered";
    case IgnoreReason::kRepositoryNotAllowed:
      return "repository_not_allowed";
    case IgnoreReason::kNotArm64:
      return "not_arm64";
    case IgnoreReason::kForeignInstallation:
      return "foreign_installation";
    case IgnoreReason::kForeignRepository:
      return "foreign_repository";
    case IgnoreReason::kScaleSetJob:
      return "scale_set_job";
  }
  return "none";
}

nlohmann::json RefusedJobsJson(const std::vector<RefusedJob>& jobs) {
  nlohmann::json out = nlohmann::json::array();
  for (auto it = jobs.rbegin(); it != jobs.rend(); ++it) {
    out.push_back({{"repository", it->repository},
                   {"jobId", it->job_id},
                   {"jobName", it->job_name},
                   {"label", it->label},
                   {"reason", it->reason},
                   {"atMs", ToUnixMillis(it->at)}});
  }
  return out;
}

}  // namespace mvr::runnerset
