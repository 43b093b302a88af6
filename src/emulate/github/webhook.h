// Webhook delivery as GitHub does it: workflow_job payloads signed with HMAC-SHA256 of the exact
// bytes sent, handed to a WebhookSender. The model builds deliveries; the sender decides when (and
// whether) they arrive, so that the simulation can replace it and the real one can add delay,
// loss, duplication and reordering. GitHub never retries a failed delivery; senders don't either.
// Thread-safety: WebhookSender implementations must accept Send from many threads.
#pragma once

#include <functional>
#include <string>

#include "base/secret.h"
#include "emulate/github/model_types.h"

namespace mvr::emulate::github {

// What happened to one delivery: the HTTP status of the (first) copy that arrived, 0 when none
// did; `lost` when the sender dropped it on purpose.
struct DeliveryOutcome {
  int status = 0;
  bool lost = false;
  int copies_sent = 0;
  std::string error;  // transport failure, if any (never contains the payload)
};

using DeliveryCallback = std::function<void(const DeliveryOutcome&)>;

class WebhookSender {
 public:
  virtual ~WebhookSender() = default;
  // Takes the delivery for sending; calls `done` once, possibly later and from another thread.
  virtual void Send(const Delivery& delivery, DeliveryCallback done) = 0;
};

// "sha256=<hex>" over `payload` with `secret`.
std::string SignatureHeader(const Secret& secret, const std::string& payload);

// Sets the headers GitHub sends with a delivery (event, GUID, signature, hook ids, user agent).
// `form`: the hook's content type is "form" (application/x-www-form-urlencoded).
http::Headers DeliveryHeaders(const std::string& guid, const std::string& event,
                              const Secret& secret, const std::string& payload, int64_t hook_id,
                              int64_t installation_id, bool form = false);
// A "form" hook's body: payload=<json, URL-encoded>.
std::string FormPayload(const std::string& json);

}  // namespace mvr::emulate::github
