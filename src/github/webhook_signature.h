// Webhook signature check ("Validating webhook deliveries"): GitHub sends
// X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body, keyed with the webhook secret>.
// Verify over the exact bytes received, before parsing, and compare in constant time.
// Thread-safety: pure functions; a WebhookSignatureVerifier is immutable after construction and
// may be shared by any number of threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/secret.h"
#include "base/status.h"

namespace mvr::github {

inline constexpr char kSignatureHeader[] = "X-Hub-Signature-256";

// Checks signatures for one secret. The HMAC key schedule (the SHA-256 states after the inner and
// outer key blocks) is computed once here, so a check costs one pass of SHA-256 over the body plus
// two blocks, with no allocation. The key state is secret material: it never prints and is wiped
// when the last copy of the verifier goes away.
class WebhookSignatureVerifier {
 public:
  explicit WebhookSignatureVerifier(const Secret& secret);

  // OK when `signature_header` (the X-Hub-Signature-256 value; empty when absent) is the signature
  // of `body`: "sha256=" and 64 hex digits of either case. Missing, malformed or wrong signatures
  // are Unauthorized with error_type SignatureMissing / SignatureMalformed / SignatureMismatch
  // (the caller answers 401); an empty secret is InvalidArgument (configure one). Messages never
  // include the secret or the expected signature. The comparison takes the same time wherever the
  // first differing byte is.
  Status Verify(std::string_view signature_header, std::string_view body) const;

  // "sha256=<64 lower-case hex digits>" for `body`.
  std::string Sign(std::string_view body) const;

 private:
  struct KeyState;
  std::shared_ptr<const KeyState> key_;
  bool secret_empty_ = true;
};

// "sha256=<64 lower-case hex digits>" for `body` under `secret`.
std::string WebhookSignature(const Secret& secret, std::string_view body);

// One-off form of WebhookSignatureVerifier(secret).Verify(signature_header, body).
Status VerifyWebhookSignature(const Secret& secret, std::string_view signature_header,
                              std::string_view body);

}  // namespace mvr::github
