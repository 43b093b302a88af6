#include "supervisor/run_payload.h"

#include <gtest/gtest.h>

#include "base/encoding.h"
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
  for (const char* text : {"v4.AAAA", "v0.AAAA", "v10.AAAA"}) {
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

}  // namespace
}  // namespace mvr::supervisor
