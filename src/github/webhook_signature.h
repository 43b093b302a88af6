// Webhook signature check ("Validating webhook deliveries"): GitHub sends
// X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body, keyed with the webhook secret>.
// Verify over the exact bytes received, before parsing, and compare in constant time.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "base/secret.h"
#include "base/status.h"

namespace mvr::github {

inline constexpr char kSignatureHeader[] = "X-Hub-Signature-256";

// "sha256=<64 lower-case hex digits>" for `body` under `secret`.
std::string WebhookSignature(const Secret& secret, std::string_view body);

// OK when `signature_header` (the X-Hub-Signature-256 value; empty when absent) is the signature
// of `body`. Missing, malformed or wrong signatures are Unauthorized (the caller answers 401); an
// empty secret is InvalidArgument (configure one). Messages never include the secret or the
// expected signature.
Status VerifyWebhookSignature(const Secret& secret, std::string_view signature_header,
                              std::string_view body);

}  // namespace mvr::github
