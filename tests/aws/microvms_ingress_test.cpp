// Requests to a MicroVM's ingress endpoint carry the auth token and port headers the proxy wants.
#include "aws/microvms/microvms_ingress.h"

#include <gtest/gtest.h>

namespace mvr::aws {
namespace {

TEST(MicrovmsIngressTest, BareHostMeansHttps) {
  IngressRequest in;
  in.endpoint = "mvm-1.microvms.lambda.us-east-1.on.aws";
  in.port = 8080;
  in.method = "POST";
  in.path = "/v1/runner/start";
  in.body = R"({"requestId":"r1"})";
  in.content_type = "application/json";
  auto request = BuildIngressRequest(in, Secret("tok-123"));
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  EXPECT_EQ(request->url, "https://mvm-1.microvms.lambda.us-east-1.on.aws/v1/runner/start");
  EXPECT_EQ(request->method, "POST");
  EXPECT_EQ(request->headers.GetOr("X-aws-proxy-auth", ""), "tok-123");
  EXPECT_EQ(request->headers.GetOr("X-aws-proxy-port", ""), "8080");
  EXPECT_EQ(request->headers.GetOr("Content-Type", ""), "application/json");
  EXPECT_EQ(request->body, in.body);
}

TEST(MicrovmsIngressTest, EmulatorUrlKeepsSchemePortAndPrefix) {
  IngressRequest in;
  in.endpoint = "http://127.0.0.1:41234/ingress/mvm-1/";
  in.port = 9001;
  in.path = "/health?x=1";
  auto request = BuildIngressRequest(in, Secret("t"));
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->url, "http://127.0.0.1:41234/ingress/mvm-1/health?x=1");
  EXPECT_EQ(request->headers.GetOr("X-aws-proxy-port", ""), "9001");
}

TEST(MicrovmsIngressTest, DefaultPortIs8080) {
  IngressRequest in;
  in.endpoint = "http://127.0.0.1:5000";
  auto request = BuildIngressRequest(in, Secret("t"));
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->url, "http://127.0.0.1:5000/");
  EXPECT_EQ(request->headers.GetOr("X-aws-proxy-port", ""), "8080");
}

TEST(MicrovmsIngressTest, AllTokenPartsBecomeHeaders) {
  MicrovmAuthToken token;
  token.auth_token.emplace("X-aws-proxy-auth", Secret("main"));
  token.auth_token.emplace("X-aws-proxy-extra", Secret("second"));
  IngressRequest in;
  in.endpoint = "host.example";
  auto request = BuildIngressRequest(in, token);
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->headers.GetOr("X-aws-proxy-auth", ""), "main");
  EXPECT_EQ(request->headers.GetOr("X-aws-proxy-extra", ""), "second");
}

TEST(MicrovmsIngressTest, RefusesBadInputWithoutShowingTheToken) {
  IngressRequest in;
  in.endpoint = "host.example";
  in.port = 0;
  auto r = BuildIngressRequest(in, Secret("TOKEN-FIXTURE"));
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(r.status().message().find("TOKEN-FIXTURE"), std::string::npos);
  in.port = 65536;
  EXPECT_EQ(BuildIngressRequest(in, Secret("t")).status().code(), Code::kInvalidArgument);
  in.port = 8080;
  in.path = "no-slash";
  EXPECT_EQ(BuildIngressRequest(in, Secret("t")).status().code(), Code::kInvalidArgument);
  in.path = "/";
  EXPECT_EQ(BuildIngressRequest(in, Secret("")).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(BuildIngressRequest(in, MicrovmAuthToken{}).status().code(), Code::kInvalidArgument);
  in.endpoint = "ftp://host";
  EXPECT_EQ(BuildIngressRequest(in, Secret("t")).status().code(), Code::kInvalidArgument);
  in.endpoint = "";
  EXPECT_EQ(BuildIngressRequest(in, Secret("t")).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace mvr::aws
