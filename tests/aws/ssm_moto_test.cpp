// The SSM Parameter Store client against moto's server (label "moto"): a SecureString comes back
// decrypted, a missing parameter is NotFound naming it, and no error carries a value. Skips
// without moto_server.
#include <gtest/gtest.h>

#include <memory>

#include "aws/services/ssm.h"
#include "aws/signing/endpoints.h"
#include "fake_http.h"
#include "http/curl_client.h"
#include "support/moto.h"

namespace mvr::aws {
namespace {

using testing::EnvMap;

constexpr char kFixtureValue[] = "ssm-fixture-value-7f3a9c";

class SsmMotoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MVR_START_MOTO_OR_SKIP(moto_);
    MapEnvironment env(EnvMap{{"AWS_REGION", "us-east-1"}, {"AWS_ENDPOINT_URL", moto_->url()}});
    endpoint_ = ResolveEndpoint(AwsService::kSsm, env, SharedConfig()).value();
  }

  // PutParameter through the same protocol client (mvr itself never writes parameters).
  void Put(const std::string& name, const std::string& value, const std::string& type) {
    JsonServiceConfig c;
    c.endpoint = endpoint_;
    c.target_prefix = "AmazonSSM";
    c.content_type = "application/x-amz-json-1.1";
    JsonProtocolClient rpc(c, http_, creds_, seam_.seam);
    JsonCallResult r =
        rpc.Invoke("PutParameter", {{"Name", name}, {"Value", value}, {"Type", type}});
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  }

  std::unique_ptr<mvr::testing::MotoServer> moto_;
  ServiceEndpoint endpoint_;
  http::CurlHttpClient http_;
  StaticCredentialsProvider creds_{testing::TestCredentials()};
  testing::ManualSeam seam_;
};

TEST_F(SsmMotoTest, SecureStringComesBackDecrypted) {
  ASSERT_EQ(endpoint_.signing_name, "ssm");
  Put("/mvr/test/webhook-secret", kFixtureValue, "SecureString");
  SsmClient ssm(endpoint_, http_, creds_, seam_.seam);
  Result<Secret> got = ssm.GetParameter("/mvr/test/webhook-secret");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->Reveal(), kFixtureValue);
}

TEST_F(SsmMotoTest, MissingParameterIsNotFoundNamingIt) {
  SsmClient ssm(endpoint_, http_, creds_, seam_.seam);
  Result<Secret> got = ssm.GetParameter("/mvr/test/absent");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), Code::kNotFound);
  EXPECT_NE(got.status().message().find("/mvr/test/absent"), std::string::npos)
      << got.status().message();
}

TEST_F(SsmMotoTest, EmptyNameIsRefusedWithoutACall) {
  SsmClient ssm(endpoint_, http_, creds_, seam_.seam);
  EXPECT_EQ(ssm.GetParameter("").status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace mvr::aws
