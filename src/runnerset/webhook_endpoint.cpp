#include "runnerset/webhook_endpoint.h"

#include <nlohmann/json.hpp>

#include "base/json_text.h"

namespace mvr::runnerset {
namespace {

// An answer's body. Invalid UTF-8 from the sender is replaced (U+FFFD), never thrown over: the
// messages quote header and member values.
std::string AnswerBody(const nlohmann::json& answer) { return JsonText(answer) + "\n"; }

}  // namespace

WebhookRouterConfig WebhookRouterConfigOf(const ServeConfig& config, Secret webhook_secret) {
  WebhookRouterConfig c;
  c.secret = std::move(webhook_secret);
  c.classes = config.classes;
  c.allowed_repositories = config.github.allowed_repositories;
  c.runner_name_prefix = config.runner_name_prefix;
  c.body_limit = config.max_webhook_body_bytes;
  return c;
}

WebhookAnswer AnswerWebhook(const WebhookRouter& router, queue::Queue& queue, Metrics& metrics,
                            const Logger& logger, const http::Headers& headers,
                            std::string_view body, TimePoint now) {
  metrics.Add(Counter::kReceived);
  WebhookDecision d = router.Route(headers, body, now);
  WebhookAnswer answer;
  answer.decision = d.verdict == WebhookVerdict::kIgnored
                        ? std::string("ignored_") + IgnoreReasonName(d.ignore_reason)
                        : WebhookVerdictName(d.verdict);
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
