// The low-level SHA-256 API (deprecated in OpenSSL 3 but present) lets the HMAC key schedule be
// computed once and copied per delivery as a plain struct; EVP's one-shot HMAC() re-derives it and
// fetches the digest on every call, which costs more than parsing the payload.
#define OPENSSL_SUPPRESS_DEPRECATED

#include "github/webhook_signature.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <array>
#include <cstring>

#include "base/encoding.h"

namespace mvr::github {

namespace {
constexpr std::string_view kPrefix = "sha256=";
constexpr size_t kHexDigits = 2 * SHA256_DIGEST_LENGTH;

using Digest = std::array<unsigned char, SHA256_DIGEST_LENGTH>;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes 64 hex digits (either case); false on any other character.
bool DecodeDigest(std::string_view hex, Digest& out) {
  for (size_t i = 0; i < out.size(); ++i) {
    int hi = HexValue(hex[2 * i]);
    int lo = HexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  return true;
}
}  // namespace

struct WebhookSignatureVerifier::KeyState {
  SHA256_CTX inner;  // after (key XOR ipad)
  SHA256_CTX outer;  // after (key XOR opad)

  ~KeyState() { OPENSSL_cleanse(this, sizeof(*this)); }

  Digest Mac(std::string_view body) const {
    Digest inner_digest;
    Digest out;
    SHA256_CTX ctx = inner;
    SHA256_Update(&ctx, body.data(), body.size());
    SHA256_Final(inner_digest.data(), &ctx);
    ctx = outer;
    SHA256_Update(&ctx, inner_digest.data(), inner_digest.size());
    SHA256_Final(out.data(), &ctx);
    OPENSSL_cleanse(&ctx, sizeof(ctx));
    return out;
  }
};

WebhookSignatureVerifier::WebhookSignatureVerifier(const Secret& secret)
    : secret_empty_(secret.empty()) {
  // RFC 2104: a key longer than the block is replaced by its digest; then zero-padded.
  unsigned char block[SHA256_CBLOCK] = {};
  const std::string& key = secret.Reveal();
  if (key.size() > sizeof(block)) {
    SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), block);
  } else {
    std::memcpy(block, key.data(), key.size());
  }
  auto state = std::make_shared<KeyState>();
  unsigned char pad[SHA256_CBLOCK];
  for (size_t i = 0; i < sizeof(pad); ++i) pad[i] = block[i] ^ 0x36;
  SHA256_Init(&state->inner);
  SHA256_Update(&state->inner, pad, sizeof(pad));
  for (size_t i = 0; i < sizeof(pad); ++i) pad[i] = block[i] ^ 0x5c;
  SHA256_Init(&state->outer);
  SHA256_Update(&state->outer, pad, sizeof(pad));
  OPENSSL_cleanse(pad, sizeof(pad));
  OPENSSL_cleanse(block, sizeof(block));
  key_ = std::move(state);
}

Status WebhookSignatureVerifier::Verify(std::string_view signature_header,
                                        std::string_view body) const {
  if (secret_empty_) {
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
  Digest given;
  if (!DecodeDigest(signature_header.substr(kPrefix.size()), given)) {
    return Unauthorized(std::string(kSignatureHeader) + " is malformed (not hex)")
        .WithErrorType("SignatureMalformed");
  }
  Digest expected = key_->Mac(body);
  bool equal = CRYPTO_memcmp(expected.data(), given.data(), expected.size()) == 0;
  OPENSSL_cleanse(expected.data(), expected.size());
  if (!equal) {
    return Unauthorized(std::string(kSignatureHeader) +
                        " does not match the body; check that both sides use the same secret")
        .WithErrorType("SignatureMismatch");
  }
  return Status::Ok();
}

std::string WebhookSignatureVerifier::Sign(std::string_view body) const {
  Digest mac = key_->Mac(body);
  return std::string(kPrefix) +
         HexEncode(std::string_view(reinterpret_cast<const char*>(mac.data()), mac.size()));
}

std::string WebhookSignature(const Secret& secret, std::string_view body) {
  return std::string(kPrefix) + HexEncode(HmacSha256(secret.Reveal(), body));
}

Status VerifyWebhookSignature(const Secret& secret, std::string_view signature_header,
                              std::string_view body) {
  return WebhookSignatureVerifier(secret).Verify(signature_header, body);
}

}  // namespace mvr::github
