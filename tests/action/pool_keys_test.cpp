#include "action/pool_keys.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>

#include "action/server_handle.h"
#include "base/encoding.h"

namespace mvr::action {
namespace {

EffectiveServerKey SampleKey() {
  EffectiveServerKey k;
  k.repository_id = "123456";
  k.server_name = "build-cache";
  k.region = "us-east-1";
  k.architecture = "x86_64";
  k.image_id = "img-0abc";
  k.image_version = "7";
  k.execution_role = "arn:aws:iam::123456789012:role/mvr";
  k.network_fingerprint = "subnet-1,sg-2";
  return k;
}

TEST(PoolKeysTest, NormalizesServerNames) {
  EXPECT_EQ(NormalizeServerName("  Build-Cache\n").value(), "build-cache");
  EXPECT_EQ(NormalizeServerName("a.b_c-1").value(), "a.b_c-1");
  EXPECT_FALSE(NormalizeServerName("   ").ok());
  EXPECT_FALSE(NormalizeServerName(std::string(65, 'a')).ok());
  EXPECT_NE(NormalizeServerName("cache/one").status().message().find("may hold only"),
            std::string::npos);
  EXPECT_NE(NormalizeServerName("lmvm2_abc").status().message().find("handle"), std::string::npos);
}

TEST(PoolKeysTest, EveryKeyFieldIsRequired) {
  EXPECT_TRUE(ValidateServerKey(SampleKey()).ok());
  EffectiveServerKey k = SampleKey();
  k.execution_role.clear();
  EXPECT_NE(ValidateServerKey(k).message().find("execution role"), std::string::npos);
}

TEST(PoolKeysTest, EveryFieldSeparatesPools) {
  const std::string base = ServerKeyHash(SampleKey());
  EXPECT_EQ(base.size(), 64u);
  EXPECT_EQ(base, ServerKeyHash(SampleKey()));
  std::string EffectiveServerKey::*fields[] = {
      &EffectiveServerKey::repository_id,  &EffectiveServerKey::server_name,
      &EffectiveServerKey::region,         &EffectiveServerKey::architecture,
      &EffectiveServerKey::image_id,       &EffectiveServerKey::image_version,
      &EffectiveServerKey::execution_role, &EffectiveServerKey::network_fingerprint,
  };
  for (auto field : fields) {
    EffectiveServerKey k = SampleKey();
    k.*field += "x";
    EXPECT_NE(ServerKeyHash(k), base);
  }
  // No field can bleed into its neighbour.
  EffectiveServerKey a = SampleKey(), b = SampleKey();
  a.region = "us-east-1x";
  a.architecture = "86_64";
  b.architecture = "x86_64";
  EXPECT_NE(ServerKeyHash(a), ServerKeyHash(b));
}

TEST(PoolKeysTest, PartitionAndSortKeys) {
  EffectiveServerKey k = SampleKey();
  EXPECT_EQ(PoolPartition(k), "REPOSITORY#123456#SERVER#" + ServerKeyHash(k));
  const std::string id = "m0123456789abcdef0123";
  EXPECT_TRUE(IsValidMemberId(id));
  EXPECT_FALSE(IsValidMemberId("m0123"));
  EXPECT_FALSE(IsValidMemberId("x0123456789abcdef0123"));
  EXPECT_EQ(MemberSortKey(id), "MEMBER#" + id);
  EXPECT_EQ(MemberIdFromSortKey("MEMBER#" + id).value(), id);
  EXPECT_FALSE(MemberIdFromSortKey("CONTROL").ok());
  EXPECT_FALSE(MemberIdFromSortKey("MEMBER#nope").ok());
}

PoolHandle SampleHandle() {
  PoolHandle h;
  h.repository_id = "123456";
  h.server_key_hash = ServerKeyHash(SampleKey());
  h.server_name = "build-cache";
  h.region = "us-east-1";
  h.member_id = "m0123456789abcdef0123";
  h.lease_id = "0123456789abcdef0123456789abcdef";
  h.generation = 3;
  h.microvm_id = "mvm-0123";
  h.reuse_deadline = FromUnixSeconds(1'800'005'400);
  h.runner_id = 42;
  h.runner_name = "lambda-mvm-abc";
  return h;
}

TEST(PoolHandleTest, RoundTripsWithoutSecrets) {
  std::string text = EncodePoolHandle(SampleHandle());
  EXPECT_EQ(text.rfind("lmvm2_", 0), 0u);
  EXPECT_TRUE(IsServerHandle(text));
  PoolHandle h = DecodePoolHandle(text).value();
  EXPECT_EQ(h.repository_id, "123456");
  EXPECT_EQ(h.server_key_hash, SampleHandle().server_key_hash);
  EXPECT_EQ(h.member_id, "m0123456789abcdef0123");
  EXPECT_EQ(h.lease_id, "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(h.generation, 3);
  EXPECT_EQ(h.microvm_id, "mvm-0123");
  EXPECT_EQ(ToUnixSeconds(h.reuse_deadline), 1'800'005'400);
  EXPECT_EQ(h.runner_id, 42);
  std::string payload = Base64UrlDecode(text.substr(6)).value();
  for (const char* word : {"token", "jit", "secret", "password", "credential"}) {
    EXPECT_EQ(payload.find(word), std::string::npos) << word;
  }
}

std::string Reencode(const std::string& json) { return "lmvm2_" + Base64UrlEncode(json); }

TEST(PoolHandleTest, DecodingIsStrict) {
  EXPECT_NE(DecodePoolHandle(EncodeServerHandle(ServerHandle{}, Secret("k")))
                .status()
                .message()
                .find("must start with lmvm2_"),
            std::string::npos);
  EXPECT_NE(DecodePoolHandle("lmvm2_***").status().message().find("base64url"), std::string::npos);
  EXPECT_NE(DecodePoolHandle(Reencode("[1]")).status().message().find("JSON object"),
            std::string::npos);

  auto payload = [](const std::function<void(nlohmann::json&)>& mutate) -> std::string {
    std::string text = EncodePoolHandle(SampleHandle());
    nlohmann::json j = nlohmann::json::parse(Base64UrlDecode(text.substr(6)).value());
    mutate(j);
    return DecodePoolHandle(Reencode(j.dump())).status().message();
  };
  EXPECT_NE(payload([](nlohmann::json& j) { j["v"] = 3; }).find("version"), std::string::npos);
  EXPECT_NE(payload([](nlohmann::json& j) { j.erase("li"); }).find("'li'"), std::string::npos);
  EXPECT_NE(payload([](nlohmann::json& j) { j["g"] = "3"; }).find("'g'"), std::string::npos);
  EXPECT_NE(payload([](nlohmann::json& j) { j["g"] = 0; }).find("generation"), std::string::npos);
  EXPECT_NE(payload([](nlohmann::json& j) { j["k"] = "abc"; }).find("server key hash"),
            std::string::npos);
  EXPECT_NE(payload([](nlohmann::json& j) { j["mb"] = "m1"; }).find("member id"),
            std::string::npos);
  EXPECT_NE(payload([](nlohmann::json& j) { j["li"] = "XYZ"; }).find("lease id"),
            std::string::npos);
  EXPECT_NE(
      payload([](nlohmann::json& j) { j["jit"] = "x"; }).find("server handle.jit: unknown member"),
      std::string::npos);
}

}  // namespace
}  // namespace mvr::action
