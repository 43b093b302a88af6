#include "action/server_handle.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/encoding.h"

namespace mvr::action {
namespace {

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
  std::string text = EncodeServerHandle(SampleHandle());
  EXPECT_EQ(text.rfind("lmvm1_", 0), 0u);
  EXPECT_TRUE(IsServerHandle(text));
  EXPECT_FALSE(IsServerHandle("phase2-proof"));
  ServerHandle h = DecodeServerHandle(text).value();
  EXPECT_EQ(h.microvm_id, "mvm-0123456789abcdef");
  EXPECT_EQ(h.reuse_deadline, FromUnixSeconds(1'800'005'400));
  EXPECT_EQ(h.runner_id, 42);
  EXPECT_EQ(h.server_name, "phase2-proof");
}

TEST(ServerHandleTest, SafeAsAJobOutput) {
  std::string text = EncodeServerHandle(SampleHandle());
  for (char c : text) {
    EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') << c;
  }
}

TEST(ServerHandleTest, RejectsMalformedHandlesClearly) {
  EXPECT_NE(DecodeServerHandle("lmvm3_abc").status().message().find("unknown version"),
            std::string::npos);
  // A pool lease handle given where an lmvm1_ one is expected says what to do instead.
  EXPECT_NE(DecodeServerHandle("lmvm2_abc").status().message().find("state-table"),
            std::string::npos);
  EXPECT_FALSE(DecodeServerHandle("nothandle").ok());
  EXPECT_FALSE(DecodeServerHandle("lmvm1_!!!").ok());
  EXPECT_FALSE(DecodeServerHandle("lmvm1_" + Base64UrlEncode("[1,2]")).ok());
  auto missing = DecodeServerHandle("lmvm1_" + Base64UrlEncode(R"({"v":1,"m":"x"})"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("'r'"), std::string::npos);
  std::string text = EncodeServerHandle(SampleHandle());
  EXPECT_FALSE(DecodeServerHandle(text.substr(0, text.size() / 2)).ok());
}

// Found by fuzz/server_handle: a handle is outside input (a job output anyone editing the workflow
// can replace), and a huge time made the seconds-to-milliseconds conversion overflow (undefined
// behaviour) instead of being refused.
TEST(ServerHandleTest, TimesAndLifetimeOutsideTheirRangeAreRefused) {
  auto with = [](const std::string& prefix, nlohmann::json j) {
    return prefix + Base64UrlEncode(j.dump());
  };
  const nlohmann::json v1 =
      nlohmann::json::parse(Base64UrlDecode(EncodeServerHandle(SampleHandle()).substr(6)).value());
  for (const char* key : {"s", "d"}) {
    for (int64_t bad :
         {int64_t{9'223'372'036'854'775'807}, int64_t{253'402'300'800}, int64_t{-1}}) {
      nlohmann::json j = v1;
      j[key] = bad;
      auto r = DecodeServerHandle(with("lmvm1_", j));
      ASSERT_FALSE(r.ok()) << key << "=" << bad;
      EXPECT_NE(r.status().message().find(std::string("'") + key + "' is out of range"),
                std::string::npos)
          << r.status().message();
    }
  }
  nlohmann::json long_life = v1;
  long_life["l"] = 9'223'372'036'854'775'807;
  EXPECT_FALSE(DecodeServerHandle(with("lmvm1_", long_life)).ok());
  // The last second of year 9999 is still a time.
  nlohmann::json last = v1;
  last["d"] = 253'402'300'799;
  EXPECT_TRUE(DecodeServerHandle(with("lmvm1_", last)).ok());

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
