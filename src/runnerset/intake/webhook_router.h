// WebhookRouter: the runner set's POST /webhook, minus HTTP. One call takes a delivery's three
// GitHub headers, its raw body and the time it arrived, and returns a WebhookDecision: refuse an
// oversized body (413), verify X-Hub-Signature-256 over the raw bytes before anything else looks
// at them (401), read the workflow_job members it needs (400 when it cannot), and turn a queued
// job with a class label into a launch intent and a completed job of one of the set's runners
// into a terminate intent; any other action of a job of the set's classes becomes a job intent
// (its state: job_state.h); a delivery of another installation or repository is refused (2xx, so
// GitHub shows it delivered, with the reason); everything else is acknowledged and ignored (2xx).
// Thread-safety: Route may be called from any number of threads at once.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/secret.h"
#include "base/status.h"
#include "github/webhook_signature.h"
#include "http/types.h"
#include "runnerset/config/config.h"
#include "runnerset/config/runner_name.h"
#include "runnerset/intake/webhook_decision.h"
#include "runnerset/intake/workflow_job_reader.h"

namespace mvr::runnerset {

// GitHub caps a delivery at 25 MB; a workflow_job payload is 5-20 KB, and a completed job with
// hundreds of steps stays well under this.
inline constexpr size_t kDefaultWebhookBodyLimit = 1024 * 1024;

struct WebhookRouterConfig {
  Secret secret;  // the webhook secret set on GitHub
  // The runner classes: a queued job launches on the first that takes it (RunnerClass::Takes,
  // by label, labels and label_match); labels are compared case-insensitively.
  std::vector<RunnerClass> classes;
  // "owner/name" of the repositories whose jobs it launches (empty: every one).
  std::vector<std::string> allowed_repositories;
  std::string runner_name_prefix;                // runner_name.h: RunnerNamePrefix
  size_t body_limit = kDefaultWebhookBodyLimit;  // bytes
  // The set's repository, organisation or enterprise (its allowed_repositories aside): a
  // delivery of a repository outside it is refused as foreign_repository. All empty: no check.
  GitHubSettings scope;
  // The installations of the set's GitHub Apps: a delivery whose installation.id is another is
  // refused as foreign_installation (RunsOn #509). Empty (a PAT): no check.
  std::vector<int64_t> installation_ids;
};

// The parts of a POST /webhook request the router reads; views into the caller's request.
struct WebhookDelivery {
  std::string_view event;        // X-GitHub-Event
  std::string_view delivery_id;  // X-GitHub-Delivery
  std::string_view signature;    // X-Hub-Signature-256; empty when absent
  std::string_view body;         // the raw body, exactly as received
};

class WebhookRouter {
 public:
  // InvalidArgument naming the field when the secret is empty, no class label is given, two class
  // labels differ only in case, a label is empty, the prefix is empty or the body limit is zero.
  static Result<WebhookRouter> Create(WebhookRouterConfig config);

  WebhookRouter(WebhookRouter&&) noexcept;
  WebhookRouter& operator=(WebhookRouter&&) noexcept;
  ~WebhookRouter();

  // The decision for one delivery received at `now` (the intents' queued_at / completed_at).
  WebhookDecision Route(const WebhookDelivery& delivery, TimePoint now) const;
  // The same, taking X-GitHub-Event, X-GitHub-Delivery and X-Hub-Signature-256 from `headers`
  // (names compared case-insensitively).
  WebhookDecision Route(const http::Headers& headers, std::string_view body, TimePoint now) const;

  const std::string& runner_name_prefix() const { return runner_name_prefix_; }
  size_t body_limit() const { return body_limit_; }

 private:
  class ReaderPool;
  WebhookRouter(WebhookRouterConfig config, std::unique_ptr<ReaderPool> readers);
  // The refusal of a delivery of another installation or repository; nullopt: it is the set's.
  std::optional<WebhookDecision> RefuseForeign(const WorkflowJobFields& job, std::string_view body,
                                               const std::string& what, TimePoint now) const;
  Result<std::optional<int64_t>> ReadInstallationId(std::string_view body) const;

  github::WebhookSignatureVerifier verifier_;
  std::vector<RunnerClass> classes_;
  GitHubSettings allowed_;  // allowed_repositories alone
  GitHubSettings scope_;    // repository, organization, enterprise, organizations alone
  std::vector<int64_t> installation_ids_;
  std::string runner_name_prefix_;
  size_t body_limit_;
  std::unique_ptr<ReaderPool> readers_;
};

}  // namespace mvr::runnerset
