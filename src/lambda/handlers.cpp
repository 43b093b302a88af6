#include "lambda/handlers.h"

#include <algorithm>
#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "base/json_text.h"
#include "runnerset/intake/webhook_endpoint.h"
#include "runnerset/jobs/intent.h"
#include "runnerset/launch/consumer.h"

namespace mvr::lambda {

Result<std::string> WebhookHandler::Handle(const Invocation& invocation) {
  Result<FunctionUrlRequest> request = ParseFunctionUrlEvent(invocation.event);
  if (!request.ok()) {
    return Status(request.status()).WithErrorType(kMalformedEvent);
  }
  if (request->method != "POST") {
    return FunctionUrlResponse(
        405, R"({"decision":"method_not_allowed","message":"GitHub delivers webhooks by POST"})");
  }
  Result<const runnerset::WebhookRouter*> router = router_.Get();
  if (!router.ok()) {
    // GitHub shows the delivery as failed (and never retries it itself); the janitor finds a
    // queued job whose webhook was lost.
    metrics_.Add(runnerset::Counter::kReceived);
    metrics_.AddWebhookDecision("secret_unavailable");
    seam_.logger.Error("the webhook secret cannot be read; the delivery is refused with 503",
                       {{"error", router.status().ToString()}});
    return FunctionUrlResponse(
        503, R"({"decision":"secret_unavailable","message":"the webhook secret cannot be read )"
             R"(now; redeliver the delivery later"})");
  }
  runnerset::WebhookAnswer a =
      runnerset::AnswerWebhook(**router, queue_, metrics_, seam_.logger, request->headers,
                               request->body, seam_.clock.Now(), ledger_);
  return FunctionUrlResponse(a.status, a.body);
}

bool LauncherHandler::Process(const SqsRecord& m) {
  Result<runnerset::Intent> intent = runnerset::DecodeIntent(m.body);
  if (!intent.ok()) {
    // It will never decode: letting it come back would only dead-letter it later.
    seam_.logger.Error("dropping a queue message that is not an intent",
                       {{"message_id", m.message_id}, {"error", intent.status().ToString()}});
    return false;
  }
  runnerset::LaunchOutcome o = launcher_.Handle(*intent);
  seam_.logger.Info("intent handled", {{"decision", runnerset::LaunchDecisionName(o.decision)},
                                       {"message_id", m.message_id},
                                       {"receive_count", m.receive_count},
                                       {"microvm_id", o.microvm_id},
                                       {"runner_name", o.runner_name},
                                       {"detail", o.detail}});
  const runnerset::Settlement next =
      runnerset::SettlementOf(o, m.receive_count, config_.queue.max_receive_count);
  switch (next.kind) {
    case runnerset::Settlement::Kind::kDelete:
      return false;  // Lambda deletes every message not reported
    case runnerset::Settlement::Kind::kHide: {
      // Reported as failed, it comes back when its visibility timeout ends: make that the delay.
      Status s = queue_.ChangeVisibility(m.receipt_handle, next.delay);
      if (!s.ok()) {
        seam_.logger.Warn(
            "hiding a queue message failed; it comes back after the queue's "
            "visibility timeout",
            {{"message_id", m.message_id}, {"error", s.ToString()}});
      }
      return true;
    }
    case runnerset::Settlement::Kind::kResend: {
      Result<std::string> sent = queue_.Send(queue::OutgoingMessage{m.body, next.delay});
      if (sent.ok()) return false;
      seam_.logger.Warn("sending a deferred intent again failed; the message comes back",
                        {{"message_id", m.message_id}, {"error", sent.status().ToString()}});
      queue_.ChangeVisibility(m.receipt_handle, next.delay).IgnoreError();
      return true;
    }
  }
  return true;
}

Result<std::string> LauncherHandler::Handle(const Invocation& invocation) {
  Result<std::vector<SqsRecord>> records = ParseSqsEvent(invocation.event);
  if (!records.ok()) return Status(records.status()).WithErrorType(kMalformedEvent);
  const size_t n = records->size();
  std::vector<char> failed(n, 0);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) failed[i] = Process((*records)[i]) ? 1 : 0;
  };
  const size_t workers =
      std::min(n, static_cast<size_t>(std::max(1, config_.launcher.concurrency)));
  std::vector<std::thread> threads;
  for (size_t i = 1; i < workers; ++i) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  std::vector<std::string> ids;
  for (size_t i = 0; i < n; ++i) {
    if (failed[i]) ids.push_back((*records)[i].message_id);
  }
  return BatchItemFailures(ids);
}

Result<std::string> JanitorHandler::Handle(const Invocation& invocation) {
  nlohmann::json event = nlohmann::json::parse(invocation.event, nullptr, false);
  if (!event.is_object()) {
    return InvalidArgument("janitor: the event is not a JSON object (expected a scheduled event)")
        .WithErrorType(kMalformedEvent);
  }
  runnerset::SweepReport report = janitor_.Sweep();
  nlohmann::json counters = nlohmann::json::object();
  for (int i = 0; i < runnerset::kSweptCount; ++i) {
    counters[runnerset::SweptName(static_cast<runnerset::Swept>(i))] = report.counts[i];
  }
  return JsonText(nlohmann::json{{"counters", counters}, {"errors", report.errors}});
}

Result<std::string> PoolSweepHandler::Handle(const Invocation& invocation) {
  nlohmann::json event = nlohmann::json::parse(invocation.event, nullptr, false);
  if (!event.is_object()) {
    return InvalidArgument("warm-pool: the event is not a JSON object (expected a scheduled event)")
        .WithErrorType(kMalformedEvent);
  }
  runnerset::PoolSweepReport report = sweeper_.Sweep();
  runnerset::CountPoolSweep(metrics_, report);
  return JsonText(nlohmann::json{{"booted", report.booted},
                                 {"retired", report.retired},
                                 {"removed", report.removed},
                                 {"hotStarted", report.hot_started},
                                 {"hotParked", report.hot_parked},
                                 {"hotReady", report.hot_ready},
                                 {"hotAdopted", report.hot_adopted},
                                 {"errors", report.error_messages}});
}

}  // namespace mvr::lambda
