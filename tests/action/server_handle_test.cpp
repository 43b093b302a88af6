#include "action/server_handle.h"

#include <gtest/gtest.h>

#include "base/encoding.h"

namespace mvr::action {
namespace {

ServerHandle Sample() {
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
  std::string text = EncodeServerHandle(Sample());
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
  std::string text = EncodeServerHandle(Sample());
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
  std::string text = EncodeServerHandle(Sample());
  EXPECT_FALSE(DecodeServerHandle(text.substr(0, text.size() / 2)).ok());
}

}  // namespace
}  // namespace mvr::action
