// WebhookEndpoint: what both front doors of the runner set's webhook do with one delivery - `mvr
// serve`'s POST /webhook and the `webhook` Lambda function behind a Function URL: route it, count
// the decision, put the intent on the job queue and say what to answer. Also the router settings
// a ServeConfig implies, so both build the same router.
// Thread-safety: AnswerWebhook may run concurrently if the router, queue, metrics and logger may.
#pragma once

#include <string>
#include <string_view>

#include "base/logger.h"
#include "http/types.h"
#include "queue/queue.h"
#include "runnerset/config/config.h"
#include "runnerset/intake/delivery_memory.h"
#include "runnerset/intake/webhook_router.h"
#include "runnerset/metrics/metrics.h"

namespace mvr::runnerset {

// The router settings of a runner set: its class labels, runner-name prefix and body limit.
WebhookRouterConfig WebhookRouterConfigOf(const ServeConfig& config, Secret webhook_secret);

struct WebhookAnswer {
  int status = 200;
  std::string body;      // a one-line JSON document ending in "\n"; never holds a secret
  std::string decision;  // "launch", "ignored_ping", "queue_failed" ...
};

// Routes one delivery received at `now`; an intent goes on `queue` (503 when it cannot: GitHub
// never redelivers on its own, so the delivery must show as failed). With a `ledger`, a delivery
// whose X-GitHub-Delivery it remembers queues nothing (200, "ignored_duplicate_delivery"), and
// one it cannot check gets 503.
WebhookAnswer AnswerWebhook(const WebhookRouter& router, queue::Queue& queue, Metrics& metrics,
                            const Logger& logger, const http::Headers& headers,
                            std::string_view body, TimePoint now, DeliveryMemory* ledger = nullptr);

}  // namespace mvr::runnerset
