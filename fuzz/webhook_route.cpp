// The runner set's webhook end to end, minus HTTP: AnswerWebhook → WebhookRouter (body limit,
// X-Hub-Signature-256 check over the raw bytes, the simdjson workflow_job reader, label and
// runner-name routing) → the intent put on the queue. Input: header lines, blank line, body (no
// first line). A signature header whose value is exactly "sign" is replaced by the body's right
// signature, so the fuzzer reaches the reader and the routing; any other value is checked as is.
// Properties: the status is one the endpoint documents, a queued message decodes to an intent
// that encodes back to the same bytes, and no answer carries the secret unless the input did.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/logger.h"
#include "fuzz_support.h"
#include "github/webhook_signature.h"
#include "runnerset/intake/webhook_endpoint.h"
#include "runnerset/jobs/intent.h"

namespace {

constexpr char kSecret[] = "whsec-fuzz-9f3a61c2d4";

// Keeps the last message sent; every other call is unused by the webhook.
class LastMessageQueue final : public mvr::queue::Queue {
 public:
  mvr::Result<std::string> Send(const mvr::queue::OutgoingMessage& message) override {
    last_ = message.body;
    return std::string("m-1");
  }
  mvr::Result<std::vector<std::string>> SendBatch(
      const std::vector<mvr::queue::OutgoingMessage>&) override {
    __builtin_trap();
  }
  mvr::Result<std::vector<mvr::queue::QueueMessage>> Receive(
      const mvr::queue::ReceiveOptions&) override {
    __builtin_trap();
  }
  mvr::Status Delete(const std::string&) override { __builtin_trap(); }
  mvr::Status ChangeVisibility(const std::string&, mvr::Duration) override { __builtin_trap(); }
  mvr::Result<mvr::queue::QueueDepth> Depth() override { __builtin_trap(); }

  std::string TakeLast() { return std::exchange(last_, std::string()); }

 private:
  std::string last_;
};

mvr::runnerset::WebhookRouter MakeRouter() {
  mvr::runnerset::WebhookRouterConfig c;
  c.secret = mvr::Secret(kSecret);
  c.classes = {mvr::runnerset::RunnerClass{.label = "mvr-small"},
               mvr::runnerset::RunnerClass{.label = "mvr-large"}};
  c.runner_name_prefix = mvr::runnerset::RunnerNamePrefix("demo");
  c.body_limit = 64 * 1024;
  auto router = mvr::runnerset::WebhookRouter::Create(std::move(c));
  if (!router.ok()) __builtin_trap();
  return std::move(router).value();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mvr;
  using namespace mvr::runnerset;
  static const WebhookRouter router = MakeRouter();
  static fuzz::DiscardSink sink;
  static ManualClock clock;
  static const Logger logger(sink, clock);
  static Metrics metrics;
  static LastMessageQueue queue;

  std::string text = "\n" + std::string(reinterpret_cast<const char*>(data), size);
  fuzz::Envelope e =
      fuzz::ParseEnvelope(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  http::Headers headers;
  for (const auto& [name, value] : e.headers) {
    bool sign = value == "sign" && http::HeaderNameEquals(name, github::kSignatureHeader);
    headers.Add(name, sign ? github::WebhookSignature(Secret(kSecret), e.body) : value);
  }

  WebhookAnswer a =
      AnswerWebhook(router, queue, metrics, logger, headers, e.body, TimePoint(Duration(1)));
  if (a.status != 200 && a.status != 202 && a.status != 400 && a.status != 401 && a.status != 413) {
    __builtin_trap();
  }
  // The answer may echo what was sent (an event name, say), but never the secret on its own.
  if (a.body.find(kSecret) != std::string::npos && text.find(kSecret) == std::string::npos) {
    __builtin_trap();
  }
  if (!nlohmann::json::accept(a.body)) __builtin_trap();
  std::string sent = queue.TakeLast();
  if ((a.status == 202) != !sent.empty()) __builtin_trap();
  if (!sent.empty()) {
    auto intent = DecodeIntent(sent);
    if (!intent.ok() || EncodeIntent(*intent) != sent) __builtin_trap();
  }
  return 0;
}
