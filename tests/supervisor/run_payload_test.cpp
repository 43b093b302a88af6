#include "supervisor/run_payload.h"

#include <gtest/gtest.h>

#include "base/encoding.h"
#include "base/random.h"

#include <tuple>
#include "jit_fixture.h"

namespace mvr::supervisor {
namespace {

TEST(RunPayload, EphemeralRoundTripsARealisticJitConfigUnderTheLimit) {
  std::string jit = testing::MakeJitFixture();
  ASSERT_GE(jit.size(), 3000u);
  auto text = EncodeRunPayload(RunPayload::Ephemeral(Secret(jit)));
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_LE(text->size(), kMaxRunHookPayloadBytes);
  EXPECT_EQ(text->rfind("v1.", 0), 0u);
  ::testing::Test::RecordProperty("jit_bytes", static_cast<int>(jit.size()));
  ::testing::Test::RecordProperty("payload_bytes", static_cast<int>(text->size()));
  std::printf("jit config %zu bytes -> run-hook payload %zu bytes\n", jit.size(), text->size());
  auto back = DecodeRunPayload(*text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->mode, LaunchMode::kEphemeral);
  EXPECT_EQ(back->jit_config.Reveal(), jit);
}

TEST(RunPayload, JitConfigThatIsNotBase64RoundTripsUnchanged) {
  std::string jit = "not base64 at all: {\"x\": 1} ~~~";
  auto text = EncodeRunPayload(RunPayload::Ephemeral(Secret(jit)));
  ASSERT_TRUE(text.ok());
  auto back = DecodeRunPayload(*text);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->jit_config.Reveal(), jit);
}

TEST(RunPayload, WarmRoundTripsWithoutJit) {
  auto text = EncodeRunPayload(RunPayload::Warm());
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->rfind("v2.", 0), 0u);
  EXPECT_LT(text->size(), 16u);
  auto back = DecodeRunPayload(*text);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->mode, LaunchMode::kWarm);
  EXPECT_TRUE(back->jit_config.empty());
}

TEST(RunPayload, DeliveredRoundTripsWithoutJitAndRefusesOne) {
  auto text = EncodeRunPayload(RunPayload::Delivered());
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->rfind("v3.", 0), 0u);
  auto back = DecodeRunPayload(*text);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->mode, LaunchMode::kDelivered);
  EXPECT_TRUE(back->jit_config.empty());
  RunPayload with_jit = RunPayload::Delivered();
  with_jit.jit_config = Secret("abcdefgh");
  EXPECT_EQ(EncodeRunPayload(with_jit).status().code(), Code::kInvalidArgument);
}

TEST(RunPayload, EncodeRefusesEphemeralWithoutJitAndWarmWithJit) {
  EXPECT_EQ(EncodeRunPayload(RunPayload::Ephemeral(Secret(""))).status().code(),
            Code::kInvalidArgument);
  RunPayload warm = RunPayload::Warm();
  warm.jit_config = Secret("abcdefgh");
  EXPECT_EQ(EncodeRunPayload(warm).status().code(), Code::kInvalidArgument);
}

TEST(RunPayload, TooLargeIsATypedErrorWithoutTheSecret) {
  // Random key material does not compress: a key four times the usual size cannot fit.
  std::string jit = testing::MakeJitFixture(9, 1024);
  auto text = EncodeRunPayload(RunPayload::Ephemeral(Secret(jit)));
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(text.status().error_type(), kPayloadTooLargeErrorType);
  EXPECT_EQ(text.status().message().find(jit.substr(0, 12)), std::string::npos);
}

TEST(RunPayload, DecodeRefusesUnknownVersionsWithAClearReason) {
  for (const char* text : {"v6.AAAA", "v0.AAAA", "v10.AAAA", "v44.AAAA"}) {
    auto r = DecodeRunPayload(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().error_type(), kUnsupportedVersionErrorType) << text;
    EXPECT_NE(r.status().message().find("not supported"), std::string::npos);
  }
}

TEST(RunPayload, DecodeRefusesMalformedText) {
  for (const char* text : {"", "hello", "1.AAAA", "v.AAAA", "v1.***", "v1.AAAA", "v2.%%"}) {
    auto r = DecodeRunPayload(text);
    EXPECT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << text;
  }
}

TEST(RunPayload, DecodeRefusesOversizedInput) {
  std::string text = "v1." + std::string(5000, 'A');
  auto r = DecodeRunPayload(text);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().error_type(), kPayloadTooLargeErrorType);
}

TEST(RunPayload, DecodeRefusesADeflateBomb) {
  // A valid version-1 payload whose body inflates to far more than any JIT config.
  std::string big(1 << 20, 'A');
  auto text = EncodeRunPayload(RunPayload::Ephemeral(Secret(big)));
  if (text.ok()) {
    auto r = DecodeRunPayload(*text);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("inflates past"), std::string::npos);
  } else {
    EXPECT_EQ(text.status().error_type(), kPayloadTooLargeErrorType);
  }
}

TEST(RunPayload, DecodeErrorsNeverEchoTheInput) {
  std::string jit = testing::MakeJitFixture();
  auto text = EncodeRunPayload(RunPayload::Ephemeral(Secret(jit)));
  ASSERT_TRUE(text.ok());
  std::string corrupted = "v9" + text->substr(2);
  auto r = DecodeRunPayload(corrupted);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().find(text->substr(3, 16)), std::string::npos);
}

constexpr char kNonce[] = "00112233445566778899aabbccddeeff";

// Versions 4 and 5 carry the nonce; a supervisor from before them (which knows 1-3) refuses their
// "v4."/"v5." prefix as an unsupported version rather than misreading the payload.
TEST(RunPayload, WarmAndDeliveredWithANonceRoundTripAsVersions4And5) {
  for (auto [payload, prefix, mode] :
       {std::tuple{RunPayload::Warm(Secret(kNonce)), "v4.", LaunchMode::kWarm},
        std::tuple{RunPayload::Delivered(Secret(kNonce)), "v5.", LaunchMode::kDelivered}}) {
    auto text = EncodeRunPayload(payload);
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    EXPECT_EQ(text->rfind(prefix, 0), 0u) << *text;
    EXPECT_LE(text->size(), 40u) << "the nonce costs a few dozen of the 4096 bytes";
    EXPECT_EQ(text->find(kNonce), std::string::npos) << "stored as bytes, not as its hex";
    auto back = DecodeRunPayload(*text);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->mode, mode);
    EXPECT_EQ(back->control_nonce.Reveal(), kNonce);
    EXPECT_TRUE(back->jit_config.empty());
  }
  // Without a nonce, versions 2 and 3 as before, decoded without one.
  auto legacy = DecodeRunPayload(*EncodeRunPayload(RunPayload::Warm()));
  ASSERT_TRUE(legacy.ok());
  EXPECT_TRUE(legacy->control_nonce.empty());
}

TEST(RunPayload, EncodeRefusesANonceThatIsNot32LowercaseHexOrOnAnEphemeralPayload) {
  for (const char* bad :
       {"0011", "00112233445566778899AABBCCDDEEFF", "00112233445566778899aabbccddeefg",
        "00112233445566778899aabbccddeeff00"}) {
    auto r = EncodeRunPayload(RunPayload::Warm(Secret(bad)));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(r.status().message().find(bad), std::string::npos) << "echoed the nonce";
  }
  RunPayload ephemeral = RunPayload::Ephemeral(Secret("jit-config-1"));
  ephemeral.control_nonce = Secret(kNonce);
  EXPECT_EQ(EncodeRunPayload(ephemeral).status().code(), Code::kInvalidArgument);
}

// A version-4 payload whose body is 15 bytes (made from a version-1 one of that size).
TEST(RunPayload, DecodeRefusesAControlNonceOfTheWrongSize) {
  auto v1 = EncodeRunPayload(RunPayload::Ephemeral(Secret("~not~base64~~")));  // 1 + 14 bytes
  ASSERT_TRUE(v1.ok());
  for (const char* version : {"v4", "v5"}) {
    auto r = DecodeRunPayload(version + v1->substr(2));
    ASSERT_FALSE(r.ok()) << version;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("control nonce of 14 bytes; it must be 16"),
              std::string::npos)
        << r.status().message();
  }
}

TEST(ControlNonce, NewNoncesAre128RandomBitsInHex) {
  SeededRandom random(7);
  Secret a = NewControlNonce(random), b = NewControlNonce(random);
  EXPECT_TRUE(CheckControlNonce(a).ok());
  EXPECT_EQ(a.Reveal().size(), kControlNonceHexChars);
  EXPECT_NE(a.Reveal(), b.Reveal());
}

TEST(ControlNonce, DerivedNoncesDependOnKeyAndTokenAndNeedBoth) {
  auto a = DeriveControlNonce(Secret("key-one"), "mvr-pool-0001");
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(CheckControlNonce(*a).ok());
  EXPECT_EQ(a->Reveal(), DeriveControlNonce(Secret("key-one"), "mvr-pool-0001")->Reveal());
  EXPECT_NE(a->Reveal(), DeriveControlNonce(Secret("key-two"), "mvr-pool-0001")->Reveal());
  EXPECT_NE(a->Reveal(), DeriveControlNonce(Secret("key-one"), "mvr-pool-0002")->Reveal());
  // HMAC-SHA256(key, "mvr-control-nonce-v1\n" + token), first 16 bytes.
  EXPECT_EQ(a->Reveal(),
            HexEncode(HmacSha256("key-one", "mvr-control-nonce-v1\nmvr-pool-0001").substr(0, 16)));
  EXPECT_EQ(DeriveControlNonce(Secret(), "t").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(DeriveControlNonce(Secret("k"), "").status().code(), Code::kInvalidArgument);
}

TEST(ControlNonce, BoundNoncesDependOnRepositoryAndRegion) {
  const Secret key("org-wide-key");
  const NonceBinding a{"101", "us-east-1"};
  auto nonce = DeriveBoundControlNonce(key, a, "mvr-pool-0001");
  ASSERT_TRUE(nonce.ok());
  EXPECT_TRUE(CheckControlNonce(*nonce).ok());
  EXPECT_EQ(nonce->Reveal(), DeriveBoundControlNonce(key, a, "mvr-pool-0001")->Reveal());
  // Repository B, with the same key and A's launch token, derives another nonce.
  EXPECT_NE(nonce->Reveal(),
            DeriveBoundControlNonce(key, {"202", "us-east-1"}, "mvr-pool-0001")->Reveal());
  EXPECT_NE(nonce->Reveal(),
            DeriveBoundControlNonce(key, {"101", "eu-west-1"}, "mvr-pool-0001")->Reveal());
  EXPECT_NE(nonce->Reveal(), DeriveControlNonce(key, "mvr-pool-0001")->Reveal());
  EXPECT_EQ(
      nonce->Reveal(),
      HexEncode(HmacSha256("org-wide-key", "mvr-control-nonce-v2\n101\nus-east-1\nmvr-pool-0001")
                    .substr(0, 16)));
  // A field cannot forge the separator: "1\n01" is refused, not read as another binding.
  EXPECT_EQ(DeriveBoundControlNonce(key, {"1\n01", "us-east-1"}, "t").status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(DeriveBoundControlNonce(Secret(), a, "t").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(DeriveBoundControlNonce(key, a, "").status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace mvr::supervisor
