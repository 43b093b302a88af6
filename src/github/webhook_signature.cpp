#include "github/webhook_signature.h"

#include "base/encoding.h"

namespace mvr::github {

namespace {
constexpr std::string_view kPrefix = "sha256=";
constexpr size_t kHexDigits = 64;
}  // namespace

std::string WebhookSignature(const Secret& secret, std::string_view body) {
  return std::string(kPrefix) + HexEncode(HmacSha256(secret.Reveal(), body));
}

Status VerifyWebhookSignature(const Secret& secret, std::string_view signature_header,
                              std::string_view body) {
  if (secret.empty()) {
    return InvalidArgument(
        "the webhook secret is empty; set the same secret on the GitHub "
        "webhook (or App) and here");
  }
  if (signature_header.empty()) {
    return Unauthorized(std::string(kSignatureHeader) +
                        " is missing; is a secret set on the GitHub webhook?")
        .WithErrorType("SignatureMissing");
  }
  if (signature_header.substr(0, kPrefix.size()) != kPrefix ||
      signature_header.size() != kPrefix.size() + kHexDigits) {
    return Unauthorized(std::string(kSignatureHeader) +
                        " is malformed (expected sha256= and 64 hex digits)")
        .WithErrorType("SignatureMalformed");
  }
  Result<std::string> given = HexDecode(signature_header.substr(kPrefix.size()));
  if (!given.ok()) {
    return Unauthorized(std::string(kSignatureHeader) + " is malformed (not hex)")
        .WithErrorType("SignatureMalformed");
  }
  std::string expected = HmacSha256(secret.Reveal(), body);
  if (!ConstantTimeEquals(expected, *given)) {
    return Unauthorized(std::string(kSignatureHeader) +
                        " does not match the body; check that both sides use the same secret")
        .WithErrorType("SignatureMismatch");
  }
  return Status::Ok();
}

}  // namespace mvr::github
