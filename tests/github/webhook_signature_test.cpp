#include "github/webhook_signature.h"

#include <gtest/gtest.h>

namespace mvr::github {
namespace {

// GitHub's documented test vector ("Validating webhook deliveries").
const Secret kDocSecret("It's a Secret to Everybody");
constexpr char kDocPayload[] = "Hello, World!";
constexpr char kDocSignature[] =
    "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

TEST(WebhookSignatureTest, MatchesGitHubsDocumentedExample) {
  EXPECT_EQ(WebhookSignature(kDocSecret, kDocPayload), kDocSignature);
  EXPECT_TRUE(VerifyWebhookSignature(kDocSecret, kDocSignature, kDocPayload).ok());
}

TEST(WebhookSignatureTest, UpperCaseHexIsTheSameSignature) {
  std::string upper = "sha256=757107EA0EB2509FC211221CCE984B8A37570B6D7586C22C46F4379C8B043E17";
  EXPECT_TRUE(VerifyWebhookSignature(kDocSecret, upper, kDocPayload).ok());
}

TEST(WebhookSignatureTest, ChangedBodyIsRefused) {
  Status s = VerifyWebhookSignature(kDocSecret, kDocSignature, "Hello, World?");
  EXPECT_EQ(s.code(), Code::kUnauthorized);
  EXPECT_EQ(s.error_type(), "SignatureMismatch");
}

TEST(WebhookSignatureTest, WrongSecretIsRefused) {
  Status s = VerifyWebhookSignature(Secret("another secret"), kDocSignature, kDocPayload);
  EXPECT_EQ(s.code(), Code::kUnauthorized);
}

TEST(WebhookSignatureTest, MissingHeaderIsRefused) {
  Status s = VerifyWebhookSignature(kDocSecret, "", kDocPayload);
  EXPECT_EQ(s.code(), Code::kUnauthorized);
  EXPECT_EQ(s.error_type(), "SignatureMissing");
  EXPECT_NE(s.message().find("X-Hub-Signature-256"), std::string::npos);
}

TEST(WebhookSignatureTest, MalformedHeadersAreRefused) {
  std::string hex = "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
  for (std::string header :
       {hex, "sha1=" + hex, "sha256=" + hex.substr(2), "sha256=" + hex + "00",
        "sha256=zz" + hex.substr(2), "sha256 =" + hex, "SHA256=" + hex, std::string("sha256=")}) {
    Status s = VerifyWebhookSignature(kDocSecret, header, kDocPayload);
    EXPECT_EQ(s.code(), Code::kUnauthorized) << header;
    EXPECT_EQ(s.error_type(), "SignatureMalformed") << header;
  }
}

TEST(WebhookSignatureTest, EmptySecretIsAConfigurationError) {
  Status s = VerifyWebhookSignature(Secret(""), kDocSignature, kDocPayload);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
}

TEST(WebhookSignatureTest, ErrorsNeverShowTheSecretOrTheExpectedSignature) {
  std::string wrong = "sha256=" + std::string(64, '0');
  Status s = VerifyWebhookSignature(kDocSecret, wrong, kDocPayload);
  EXPECT_EQ(s.message().find("Secret to Everybody"), std::string::npos);
  EXPECT_EQ(s.message().find("757107ea"), std::string::npos);
}

TEST(WebhookSignatureTest, BinaryBodiesAreSignedByteForByte) {
  const char raw[] = "{\"a\":\"\xe2\x9c\x93\"}\0tail";
  std::string body(raw, sizeof(raw) - 1);
  std::string sig = WebhookSignature(kDocSecret, body);
  EXPECT_TRUE(VerifyWebhookSignature(kDocSecret, sig, body).ok());
  EXPECT_FALSE(VerifyWebhookSignature(kDocSecret, sig, body.substr(0, body.size() - 1)).ok());
}

// The verifier computes HMAC from a precomputed key schedule; it must agree with OpenSSL's one-shot
// HMAC for keys shorter than, equal to and longer than SHA-256's 64-byte block (RFC 2104 hashes a
// longer key first), and for bodies across block boundaries.
TEST(WebhookSignatureTest, PrecomputedKeyAgreesWithOneShotHmacForEveryKeyLength) {
  for (size_t key_size : {1, 20, 55, 63, 64, 65, 100, 200}) {
    Secret secret(std::string(key_size, 'k') + "!");
    WebhookSignatureVerifier verifier(secret);
    for (size_t body_size : {0, 1, 55, 56, 63, 64, 65, 127, 128, 10'000}) {
      std::string body(body_size, 'b');
      std::string expected = WebhookSignature(secret, body);
      EXPECT_EQ(verifier.Sign(body), expected) << key_size << " " << body_size;
      EXPECT_TRUE(verifier.Verify(expected, body).ok()) << key_size << " " << body_size;
    }
  }
}

TEST(WebhookSignatureTest, OneVerifierServesManyBodies) {
  WebhookSignatureVerifier verifier(kDocSecret);
  WebhookSignatureVerifier copy = verifier;
  EXPECT_TRUE(verifier.Verify(kDocSignature, kDocPayload).ok());
  EXPECT_EQ(verifier.Verify(kDocSignature, "Hello, World?").error_type(), "SignatureMismatch");
  EXPECT_TRUE(copy.Verify(kDocSignature, kDocPayload).ok());
  EXPECT_EQ(WebhookSignatureVerifier(Secret()).Verify(kDocSignature, kDocPayload).code(),
            Code::kInvalidArgument);
}

TEST(WebhookSignatureTest, OneFlippedDigitAnywhereIsAMismatch) {
  std::string good = kDocSignature;
  WebhookSignatureVerifier verifier(kDocSecret);
  for (size_t i = 7; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = bad[i] == '0' ? '1' : '0';
    EXPECT_EQ(verifier.Verify(bad, kDocPayload).error_type(), "SignatureMismatch") << i;
  }
}

}  // namespace
}  // namespace mvr::github
