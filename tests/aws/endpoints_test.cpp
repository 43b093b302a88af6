#include "aws/signing/endpoints.h"

#include "fake_http.h"

#include <gtest/gtest.h>

namespace mvr::aws {
namespace {

using testing::EnvMap;

TEST(Endpoints, RegionalDefaults) {
  MapEnvironment env(EnvMap{{"AWS_REGION", "eu-central-1"}});
  SharedConfig none;
  auto d = ResolveEndpoint(AwsService::kDynamoDb, env, none);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->url, "https://dynamodb.eu-central-1.amazonaws.com");
  EXPECT_EQ(d->signing_name, "dynamodb");
  EXPECT_EQ(d->region, "eu-central-1");
  EXPECT_EQ(ResolveEndpoint(AwsService::kSqs, env, none)->url,
            "https://sqs.eu-central-1.amazonaws.com");
  auto m = ResolveEndpoint(AwsService::kLambdaMicrovms, env, none);
  EXPECT_EQ(m->url, "https://lambda.eu-central-1.amazonaws.com");
  EXPECT_EQ(m->signing_name, "lambda");
  EXPECT_EQ(DefaultEndpointUrl(AwsService::kSqs, "cn-north-1"),
            "https://sqs.cn-north-1.amazonaws.com.cn");
}

TEST(Endpoints, RegionPrecedence) {
  SharedConfig cfg = SharedConfigFromText("", "[default]\nregion = ap-south-1\n");
  MapEnvironment both(EnvMap{{"AWS_REGION", "us-east-2"}, {"AWS_DEFAULT_REGION", "us-west-1"}});
  EXPECT_EQ(ResolveRegion(both, cfg).value(), "us-east-2");
  MapEnvironment fallback(EnvMap{{"AWS_DEFAULT_REGION", "us-west-1"}});
  EXPECT_EQ(ResolveRegion(fallback, cfg).value(), "us-west-1");
  MapEnvironment empty;
  EXPECT_EQ(ResolveRegion(empty, cfg).value(), "ap-south-1");
  auto none = ResolveRegion(empty, SharedConfig());
  EXPECT_EQ(none.status().code(), Code::kInvalidArgument);
  EXPECT_NE(none.status().message().find("AWS_REGION"), std::string::npos);
  auto overridden = ResolveEndpoint(AwsService::kSqs, both, cfg, std::string("sa-east-1"));
  EXPECT_EQ(overridden->region, "sa-east-1");
}

TEST(Endpoints, MalformedRegionIsRefused) {
  MapEnvironment env(EnvMap{{"AWS_REGION", "us-east-1.evil.com/"}});
  EXPECT_EQ(ResolveEndpoint(AwsService::kSqs, env, SharedConfig()).status().code(),
            Code::kInvalidArgument);
}

TEST(Endpoints, ServiceSpecificOverrideBeatsGlobal) {
  MapEnvironment env(EnvMap{{"AWS_REGION", "us-east-1"},
                            {"AWS_ENDPOINT_URL", "http://127.0.0.1:5000/"},
                            {"AWS_ENDPOINT_URL_SQS", "http://127.0.0.1:9324"},
                            {"AWS_ENDPOINT_URL_LAMBDA_MICROVMS", "http://127.0.0.1:7000"}});
  SharedConfig none;
  auto sqs = ResolveEndpoint(AwsService::kSqs, env, none);
  EXPECT_EQ(sqs->url, "http://127.0.0.1:9324");
  EXPECT_EQ(sqs->source, "AWS_ENDPOINT_URL_SQS");
  auto ddb = ResolveEndpoint(AwsService::kDynamoDb, env, none);
  EXPECT_EQ(ddb->url, "http://127.0.0.1:5000");
  EXPECT_EQ(ddb->source, "AWS_ENDPOINT_URL");
  EXPECT_EQ(ddb->region, "us-east-1");  // the region still signs
  auto mvm = ResolveEndpoint(AwsService::kLambdaMicrovms, env, none);
  EXPECT_EQ(mvm->url, "http://127.0.0.1:7000");
  EXPECT_EQ(mvm->signing_name, "lambda");
}

TEST(Endpoints, ConfigFileServicesSectionAndProfileEndpoint) {
  SharedConfig cfg = SharedConfigFromText(
      "",
      "[profile dev]\nregion = us-east-1\nservices = local\nendpoint_url = http://127.0.0.1:4566\n"
      "[services local]\ndynamodb =\n  endpoint_url = http://127.0.0.1:8000\n",
      "dev");
  MapEnvironment env;
  EXPECT_EQ(ResolveEndpoint(AwsService::kDynamoDb, env, cfg)->url, "http://127.0.0.1:8000");
  EXPECT_EQ(ResolveEndpoint(AwsService::kSqs, env, cfg)->url, "http://127.0.0.1:4566");
  MapEnvironment with_env(EnvMap{{"AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:1"}});
  EXPECT_EQ(ResolveEndpoint(AwsService::kDynamoDb, with_env, cfg)->url, "http://127.0.0.1:1");
}

TEST(Endpoints, IgnoreConfiguredEndpointUrls) {
  MapEnvironment env(EnvMap{{"AWS_REGION", "us-east-1"},
                            {"AWS_ENDPOINT_URL", "http://127.0.0.1:5000"},
                            {"AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true"}});
  EXPECT_EQ(ResolveEndpoint(AwsService::kSqs, env, SharedConfig())->url,
            "https://sqs.us-east-1.amazonaws.com");
}

TEST(Endpoints, BadOverrideUrlNamesTheVariable) {
  MapEnvironment env(EnvMap{{"AWS_REGION", "us-east-1"}, {"AWS_ENDPOINT_URL_SQS", "ftp://x"}});
  auto r = ResolveEndpoint(AwsService::kSqs, env, SharedConfig());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("AWS_ENDPOINT_URL_SQS"), std::string::npos);
}

}  // namespace
}  // namespace mvr::aws
