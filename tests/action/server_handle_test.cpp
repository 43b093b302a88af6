#include "action/server_handle.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "base/encoding.h"

namespace mvr::action {
namespace {

const Secret kKey("repository-a-control-key-0001");
const std::vector<Secret> kKeys{kKey};

// `payload` (prefix + base64url JSON) sealed as EncodeServerHandle seals it.
std::string Sealed(const std::string& payload, const Secret& key = kKey) {
  return payload + "." +
         Base64UrlEncode(
             HmacSha256(key.Reveal(), "mvr-server-handle-v1\n" + payload).substr(0, 16));
}
std::string PayloadOf(const std::string& handle) { return handle.substr(0, handle.rfind('.')); }

ServerHandle SampleHandle() {
  ServerHandle h;
  h.microvm_id = "mvm-0123456789abcdef";
  h.region = "us-east-1";
  h.repository_id = "123456";
  h.server_name = "phase2-proof";
  h.started_at = FromUnixSeconds(1'800'000'000);
  h.max_lifetime_seconds = 7'200;
  h.reuse_deadline = FromUnixSeconds(1'800'005'400);
  h.runner_id = 42;
  h.runner_name = "lambda-mvm-abc";
  return h;
}

TEST(ServerHandleTest, RoundTrips) {
  std::string text = EncodeServerHandle(SampleHandle(), kKey);
  EXPECT_EQ(text.rfind("lmvm1_", 0), 0u);
  EXPECT_TRUE(IsServerHandle(text));
  EXPECT_FALSE(IsServerHandle("phase2-proof"));
  ServerHandle h = DecodeServerHandle(text, kKeys).value();
  EXPECT_EQ(h.microvm_id, "mvm-0123456789abcdef");
  EXPECT_EQ(h.reuse_deadline, FromUnixSeconds(1'800'005'400));
  EXPECT_EQ(h.runner_id, 42);
  EXPECT_EQ(h.server_name, "phase2-proof");
}

TEST(ServerHandleTest, SafeAsAJobOutput) {
  std::string text = EncodeServerHandle(SampleHandle(), kKey);
  for (char c : text) {
    EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')
        << c;
  }
  EXPECT_EQ(text.find(kKey.Reveal()), std::string::npos);
  EXPECT_EQ(Base64UrlDecode(PayloadOf(text).substr(6)).value().find(kKey.Reveal()),
            std::string::npos);
}

TEST(ServerHandleTest, AFlippedByteAnywhereIsRefusedByTheSeal) {
  const std::string text = EncodeServerHandle(SampleHandle(), kKey);
  int refused = 0;
  for (size_t i = 6; i < text.size(); ++i) {
    std::string flipped = text;
    flipped[i] = flipped[i] == 'A' ? 'B' : 'A';
    if (flipped == text) continue;
    auto r = DecodeServerHandle(flipped, kKeys);
    ASSERT_FALSE(r.ok()) << "byte " << i;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(r.status().message().find(kKey.Reveal()), std::string::npos);
    ++refused;
  }
  EXPECT_GT(refused, 100);
  // A payload changed and re-encoded (another MicroVM named) without the key fails the same way.
  nlohmann::json j = nlohmann::json::parse(Base64UrlDecode(PayloadOf(text).substr(6)).value());
  j["m"] = "mvm-ffffffffffffffff";
  auto forged = DecodeServerHandle(
      "lmvm1_" + Base64UrlEncode(j.dump()) + text.substr(text.rfind('.')), kKeys);
  ASSERT_FALSE(forged.ok());
  EXPECT_NE(forged.status().message().find("seal does not verify"), std::string::npos)
      << forged.status().message();
  EXPECT_NE(forged.status().message().find("start a new warm server"), std::string::npos);
}

TEST(ServerHandleTest, AHandleSealedUnderAnotherKeyIsRefusedAndThePreviousKeyOpensIt) {
  const Secret other("repository-b-control-key-0002");
  const std::string text = EncodeServerHandle(SampleHandle(), other);
  auto r = DecodeServerHandle(text, kKeys);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("seal does not verify"), std::string::npos);
  EXPECT_EQ(r.status().message().find(other.Reveal()), std::string::npos);
  EXPECT_EQ(r.status().message().find(kKey.Reveal()), std::string::npos);
  // The rotation window: the current key first, the previous one after it.
  EXPECT_TRUE(DecodeServerHandle(text, {kKey, other}).ok());
  // No key at all: says which secret to set.
  auto none = DecodeServerHandle(text, {Secret()});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("MVR_CONTROL_KEY"), std::string::npos);
}

TEST(ServerHandleTest, AnUnsealedHandleFromAnEarlierReleaseSaysToStartANewServer) {
  const std::string old = PayloadOf(EncodeServerHandle(SampleHandle(), kKey));
  auto r = DecodeServerHandle(old, kKeys);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().error_type(), kUnsealedHandleErrorType);
  EXPECT_NE(r.status().message().find("start a new warm server by name"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("mvm-0123456789abcdef"), std::string::npos);
}

TEST(ServerHandleTest, RejectsMalformedHandlesClearly) {
  EXPECT_NE(DecodeServerHandle("lmvm3_abc", kKeys).status().message().find("unknown version"),
            std::string::npos);
  // A pool lease handle given where an lmvm1_ one is expected says what to do instead.
  EXPECT_NE(DecodeServerHandle("lmvm2_abc", kKeys).status().message().find("state-table"),
            std::string::npos);
  EXPECT_FALSE(DecodeServerHandle("nothandle", kKeys).ok());
  EXPECT_FALSE(DecodeServerHandle(Sealed("lmvm1_!!!"), kKeys).ok());
  EXPECT_FALSE(DecodeServerHandle(Sealed("lmvm1_" + Base64UrlEncode("[1,2]")), kKeys).ok());
  auto missing =
      DecodeServerHandle(Sealed("lmvm1_" + Base64UrlEncode(R"({"v":1,"m":"x"})")), kKeys);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("'r'"), std::string::npos);
  std::string text = EncodeServerHandle(SampleHandle(), kKey);
  EXPECT_FALSE(DecodeServerHandle(text.substr(0, text.size() / 2), kKeys).ok());
}

// Found by fuzz/server_handle: a handle is outside input (a job output anyone editing the workflow
// can replace), and a huge time made the seconds-to-milliseconds conversion overflow (undefined
// behaviour) instead of being refused.
TEST(ServerHandleTest, TimesAndLifetimeOutsideTheirRangeAreRefused) {
  auto with = [](const std::string& prefix, nlohmann::json j) {
    return prefix + Base64UrlEncode(j.dump());
  };
  auto sealed_with = [&](const std::string& prefix, nlohmann::json j) {
    return Sealed(with(prefix, std::move(j)));
  };
  const nlohmann::json v1 = nlohmann::json::parse(
      Base64UrlDecode(PayloadOf(EncodeServerHandle(SampleHandle(), kKey)).substr(6)).value());
  for (const char* key : {"s", "d"}) {
    for (int64_t bad :
         {int64_t{9'223'372'036'854'775'807}, int64_t{253'402'300'800}, int64_t{-1}}) {
      nlohmann::json j = v1;
      j[key] = bad;
      auto r = DecodeServerHandle(sealed_with("lmvm1_", j), kKeys);
      ASSERT_FALSE(r.ok()) << key << "=" << bad;
      EXPECT_NE(r.status().message().find(std::string("'") + key + "' is out of range"),
                std::string::npos)
          << r.status().message();
    }
  }
  nlohmann::json long_life = v1;
  long_life["l"] = 9'223'372'036'854'775'807;
  EXPECT_FALSE(DecodeServerHandle(sealed_with("lmvm1_", long_life), kKeys).ok());
  // The last second of year 9999 is still a time.
  nlohmann::json last = v1;
  last["d"] = 253'402'300'799;
  EXPECT_TRUE(DecodeServerHandle(sealed_with("lmvm1_", last), kKeys).ok());

  PoolHandle pool;
  pool.repository_id = "123456";
  pool.server_key_hash = std::string(64, 'a');
  pool.server_name = "phase2-proof";
  pool.region = "us-east-1";
  pool.member_id = "m0123456789abcdef0123";
  pool.lease_id = "0123456789abcdef0123456789abcdef";
  pool.generation = 1;
  pool.microvm_id = "mvm-0123456789abcdef";
  pool.reuse_deadline = FromUnixSeconds(1'800'005'400);
  pool.runner_id = 42;
  pool.runner_name = "lambda-mvm-abc";
  nlohmann::json v2 =
      nlohmann::json::parse(Base64UrlDecode(EncodePoolHandle(pool).substr(6)).value());
  ASSERT_TRUE(DecodePoolHandle(with("lmvm2_", v2)).ok());
  v2["d"] = 9'223'372'036'854'775'807;
  EXPECT_FALSE(DecodePoolHandle(with("lmvm2_", v2)).ok());
}

}  // namespace
}  // namespace mvr::action
