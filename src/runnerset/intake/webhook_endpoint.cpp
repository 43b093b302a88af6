#include "runnerset/intake/webhook_endpoint.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/json_text.h"
#include "github/workflow_job_event.h"

namespace mvr::runnerset {
namespace {

// An answer's body. Invalid UTF-8 from the sender is replaced (U+FFFD), never thrown over: the
// messages quote header and member values.
std::string AnswerBody(const nlohmann::json& answer) { return JsonText(answer) + "\n"; }

// The answer to a delivery the ledger remembers (a replay) or cannot check; nullopt: go on.
std::optional<WebhookAnswer> CheckReplay(DeliveryMemory& ledger, Metrics& metrics,
                                         const Logger& logger, const std::string& delivery_id) {
  Result<bool> fresh = ledger.Remember(delivery_id);
  WebhookAnswer answer;
  if (!fresh.ok()) {
    logger.Error("recording a webhook delivery failed",
                 {{"delivery_id", delivery_id}, {"error", fresh.status().ToString()}});
    metrics.AddWebhookDecision("ledger_failed");
    answer.status = 503;
    answer.decision = "ledger_failed";
    answer.body = AnswerBody(
        {{"decision", answer.decision},
         {"message", "the runner set's store is unavailable; redeliver the delivery later"}});
    return answer;
  }
  if (*fresh) return std::nullopt;
  logger.Warn("a webhook delivery seen before is ignored", {{"delivery_id", delivery_id}});
  metrics.AddWebhookDecision("ignored_duplicate_delivery");
  metrics.Add(Counter::kIgnored);
  answer.decision = "ignored_duplicate_delivery";
  answer.body = AnswerBody(
      {{"decision", answer.decision},
       {"message", "delivery " + delivery_id + " was taken before; a replay queues nothing"}});
  return answer;
}

}  // namespace

WebhookRouterConfig WebhookRouterConfigOf(const ServeConfig& config, Secret webhook_secret) {
  WebhookRouterConfig c;
  c.secret = std::move(webhook_secret);
  c.classes = config.classes;
  c.allowed_repositories = config.github.allowed_repositories;
  c.runner_name_prefix = config.runner_name_prefix;
  c.body_limit = config.max_webhook_body_bytes;
  c.scope = config.github;
  for (const GitHubSettings::App& app : config.github.apps) {
    if (app.installation_id > 0) c.installation_ids.push_back(app.installation_id);
  }
  if (config.github.installation_id > 0 &&
      std::find(c.installation_ids.begin(), c.installation_ids.end(),
                config.github.installation_id) == c.installation_ids.end()) {
    c.installation_ids.push_back(config.github.installation_id);
  }
  return c;
}

WebhookAnswer AnswerWebhook(const WebhookRouter& router, queue::Queue& queue, Metrics& metrics,
                            const Logger& logger, const http::Headers& headers,
                            std::string_view body, TimePoint now, DeliveryMemory* ledger) {
  metrics.Add(Counter::kReceived);
  WebhookDecision d = router.Route(headers, body, now);
  WebhookAnswer answer;
  answer.decision = d.verdict == WebhookVerdict::kIgnored
                        ? std::string("ignored_") + IgnoreReasonName(d.ignore_reason)
                        : WebhookVerdictName(d.verdict);
  // The router refused a delivery without a valid id, so every intent has one. A replay counts
  // as its own decision, not as the one its first delivery got.
  const std::string delivery_id = headers.GetOr(github::kDeliveryHeader, "");
  if (d.intent && ledger) {
    if (std::optional<WebhookAnswer> refused = CheckReplay(*ledger, metrics, logger, delivery_id)) {
      return *refused;
    }
  }
  metrics.AddWebhookDecision(answer.decision);
  if (d.refused) {
    metrics.AddRefusedJob(*d.refused);
    logger.Info("job refused", {{"decision", answer.decision},
                                {"repository", d.refused->repository},
                                {"job_id", d.refused->job_id},
                                {"label", d.refused->label}});
  }
  answer.status = d.http_status;
  if (!d.intent) {
    if (d.accepted()) metrics.Add(Counter::kIgnored);
    answer.body = AnswerBody({{"decision", answer.decision}, {"message", d.message}});
    return answer;
  }
  Result<std::string> sent = queue.Send(queue::OutgoingMessage{EncodeIntent(*d.intent)});
  if (!sent.ok()) {
    logger.Error("queueing an intent failed", {{"error", sent.status().ToString()}});
    // Not taken: GitHub's redelivery of it must be.
    if (ledger) ledger->Forget(delivery_id).IgnoreError();
    metrics.AddWebhookDecision("queue_failed");
    answer.status = 503;
    answer.decision = "queue_failed";
    answer.body =
        AnswerBody({{"decision", "queue_failed"}, {"message", "the job queue is unavailable"}});
    return answer;
  }
  answer.body = AnswerBody({{"decision", answer.decision}, {"messageId", *sent}});
  return answer;
}

}  // namespace mvr::runnerset
