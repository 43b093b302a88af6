// WebhookEndpoint: POST /webhook of `mvr serve` as one function from the raw request to a
// decision: the status code to answer, the intent to put on the queue (if any) and the decision's
// name for the metrics. The signature is checked over the exact body before anything is parsed
// (timing-safe); a missing or bad signature is 401, a malformed payload 400, and events the set
// does not act on are acknowledged with 2xx. A queued workflow_job with one of the classes'
// labels becomes a launch intent; a completed one whose runner name carries the set's prefix
// becomes a terminate intent.
// Thread-safety: pure function of its inputs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/secret.h"
#include "http/server.h"
#include "runnerset/intent.h"

namespace mvr::runnerset {

struct WebhookSettings {
  Secret secret;
  std::vector<std::string> class_labels;
  std::string runner_name_prefix;
};

struct WebhookDecision {
  int status = 200;
  std::optional<Intent> intent;
  std::string decision;  // "launch", "terminate", "bad_signature", "malformed", "ignored_..."
  std::string message;   // the answer's text; never a secret
};

// `received_at` stamps a launch intent (the start of the job's timeline).
WebhookDecision DecideWebhook(const http::ServerRequest& request, const WebhookSettings& settings,
                              TimePoint received_at);

}  // namespace mvr::runnerset
