// The handlers of the runner set's Lambda functions, chosen by _HANDLER. Each wraps the same core
// as `mvr serve` (WebhookRouter and AnswerWebhook; Launcher and SettlementOf) in the event and
// answer shapes of its trigger:
//   webhook   a Function URL request → the delivery routed, the intent queued, a Function URL
//             response (the HTTP status GitHub sees);
//   launcher  an SQS batch from the job queue → each intent carried out (concurrently, up to
//             launcher.concurrency), answered with batchItemFailures naming only the messages
//             that must come back (deferred ones hidden until due first);
//   janitor   a scheduled event (EventBridge) → one janitor sweep, answered with its counters;
//   warm-pool a scheduled event of its own → one warm-pool sweep, answered with what it did.
// A handler error (an event of the wrong shape) is a Status whose error_type is the Runtime API
// errorType.
// Thread-safety: Handle is called from the runtime loop's one thread.
#pragma once

#include <string>

#include "base/seam.h"
#include "lambda/events.h"
#include "lambda/lazy_secret.h"
#include "lambda/runtime_api.h"
#include "queue/queue.h"
#include "runnerset/config/config.h"
#include "runnerset/intake/delivery_memory.h"
#include "runnerset/intake/webhook_router.h"
#include "runnerset/janitor/janitor.h"
#include "runnerset/launch/launcher.h"
#include "runnerset/metrics/metrics.h"
#include "runnerset/pools/sweep/pool_sweeper.h"

namespace mvr::lambda {

// Runtime API errorTypes.
inline constexpr char kMalformedEvent[] = "Mvr.MalformedEvent";
inline constexpr char kConfigError[] = "Mvr.ConfigError";
inline constexpr char kSecretError[] = "Mvr.SecretError";

class Handler {
 public:
  virtual ~Handler() = default;
  // The answer document for Respond, or an error for ReportError.
  virtual Result<std::string> Handle(const Invocation& invocation) = 0;
  virtual runnerset::Metrics& metrics() = 0;
};

class WebhookHandler final : public Handler {
 public:
  // The router is built on the first POST from the lazily read webhook secret (lazy_secret.h);
  // while the secret cannot be read, a POST gets 503 and queues nothing. With a `ledger`, a
  // delivery id seen before queues nothing (issue 53, item 13). References must outlive the
  // handler.
  WebhookHandler(LazyWebhookRouter& router, queue::Queue& queue, const Seam& seam,
                 runnerset::DeliveryMemory* ledger = nullptr)
      : router_(router), queue_(queue), seam_(seam), ledger_(ledger) {}
  Result<std::string> Handle(const Invocation& invocation) override;
  runnerset::Metrics& metrics() override { return metrics_; }

 private:
  LazyWebhookRouter& router_;
  queue::Queue& queue_;
  Seam seam_;
  runnerset::DeliveryMemory* ledger_;
  runnerset::Metrics metrics_;
};

class LauncherHandler final : public Handler {
 public:
  // `metrics` is the one the launcher counts into. References must outlive the handler.
  LauncherHandler(const runnerset::ServeConfig& config, runnerset::Launcher& launcher,
                  runnerset::Metrics& metrics, queue::Queue& queue, const Seam& seam)
      : config_(config), launcher_(launcher), metrics_(metrics), queue_(queue), seam_(seam) {}
  Result<std::string> Handle(const Invocation& invocation) override;
  runnerset::Metrics& metrics() override { return metrics_; }

 private:
  // True when the message must come back (reported in batchItemFailures).
  bool Process(const SqsRecord& message);

  const runnerset::ServeConfig& config_;
  runnerset::Launcher& launcher_;
  runnerset::Metrics& metrics_;
  queue::Queue& queue_;
  Seam seam_;
};

class JanitorHandler final : public Handler {
 public:
  // `metrics` is the one the janitor counts into. References must outlive the handler.
  JanitorHandler(runnerset::Janitor& janitor, runnerset::Metrics& metrics)
      : janitor_(janitor), metrics_(metrics) {}
  // Any JSON object triggers a sweep (an EventBridge schedule's event, or a Scheduler's input);
  // the answer is {"counters": {...}, "errors": [...]}.
  Result<std::string> Handle(const Invocation& invocation) override;
  runnerset::Metrics& metrics() override { return metrics_; }

 private:
  runnerset::Janitor& janitor_;
  runnerset::Metrics& metrics_;
};

// _HANDLER=warm-pool: one pool sweep (warm and hot members) per scheduled event
// (runnerset/pools/sweep/pool_sweeper.h).
class PoolSweepHandler final : public Handler {
 public:
  // References must outlive the handler.
  PoolSweepHandler(runnerset::PoolSweeper& sweeper, runnerset::Metrics& metrics)
      : sweeper_(sweeper), metrics_(metrics) {}
  // Any JSON object triggers a sweep; the answer is {"booted": n, "retired": n, "removed": n,
  // "hotStarted": n, "hotParked": n, "hotReady": n, "hotAdopted": n, "errors": [...]}.
  Result<std::string> Handle(const Invocation& invocation) override;
  runnerset::Metrics& metrics() override { return metrics_; }

 private:
  runnerset::PoolSweeper& sweeper_;
  runnerset::Metrics& metrics_;
};

}  // namespace mvr::lambda
