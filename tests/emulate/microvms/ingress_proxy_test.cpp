// Where the ingress proxy forwards: only origin-form targets, always to the guest's own address
// and port, never to a host or port the request names.
#include "emulate/microvms/ingress_proxy.h"

#include <gtest/gtest.h>

#include <vector>

namespace mvr::emulate::microvms {
namespace {

TEST(IngressForwardUrl, OriginFormTargetGoesToTheGuestsOwnPort) {
  auto url = ForwardUrl("127.0.0.1:41234", "/v1/runner/start", "a=1&b=%20");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(*url, "http://127.0.0.1:41234/v1/runner/start?a=1&b=%20");
  EXPECT_EQ(*ForwardUrl("10.200.0.2:8080", "/", ""), "http://10.200.0.2:8080/");
}

TEST(IngressForwardUrl, TargetsThatAreNotAPathAreRefused) {
  for (const char* target : {"http://evil:1/x", "@evil/x", "evil:1/x", "", "*", "//evil:1/x?"}) {
    Status s = CheckRequestTarget(target, "");
    if (std::string(target).rfind("//", 0) == 0) {
      // "//evil" is a path on the guest ("http://127.0.0.1:8080//evil"), not an authority.
      EXPECT_TRUE(s.ok()) << target;
      EXPECT_EQ(*ForwardUrl("127.0.0.1:8080", target, ""), "http://127.0.0.1:8080//evil:1/x?");
      continue;
    }
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << target;
    EXPECT_FALSE(ForwardUrl("127.0.0.1:8080", target, "").ok()) << target;
  }
}

TEST(IngressForwardUrl, BytesThatWouldChangeTheUrlAreRefused) {
  for (const std::string& path :
       std::vector<std::string>{"/a b", "/a#@evil:1/", "/a\\@evil", "/a\r\nHost: evil", "/\xff",
                                std::string("/a\0b", 4)}) {
    EXPECT_FALSE(CheckRequestTarget(path, "").ok()) << path;
  }
  EXPECT_FALSE(CheckRequestTarget("/ok", "x=1#@evil:1").ok());
  EXPECT_FALSE(CheckRequestTarget("/ok", "x=\xfe").ok());
}

TEST(IngressForwardUrl, GuestAuthorityMustBeIpv4AndPort) {
  EXPECT_FALSE(ForwardUrl("evil@127.0.0.1:80", "/", "").ok());
  EXPECT_FALSE(ForwardUrl("127.0.0.1", "/", "").ok());
  EXPECT_FALSE(ForwardUrl("127.0.0.1:0", "/", "").ok());
  EXPECT_FALSE(ForwardUrl("127.0.0.1:8080x", "/", "").ok());
  EXPECT_FALSE(ForwardUrl("127.0.0.256:80", "/", "").ok());
  EXPECT_FALSE(ForwardUrl("localhost:80", "/", "").ok());
}

}  // namespace
}  // namespace mvr::emulate::microvms
