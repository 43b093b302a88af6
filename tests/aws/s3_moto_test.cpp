// The S3 client against moto's server (label "moto"), path-style through AWS_ENDPOINT_URL as a
// user's configuration would give it: put/head/get/delete round trips with metadata, a multipart
// upload whose object reads back byte for byte, an aborted upload that takes no more parts, and
// the not-found answers. Skips without moto_server.
#include <gtest/gtest.h>

#include <memory>

#include "aws/services/s3.h"
#include "aws/signing/endpoints.h"
#include "fake_http.h"
#include "http/curl_client.h"
#include "support/moto.h"

namespace mvr::aws {
namespace {

using testing::EnvMap;

class S3MotoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MVR_START_MOTO_OR_SKIP(moto_);
    MapEnvironment env(EnvMap{{"AWS_REGION", "us-east-1"}, {"AWS_ENDPOINT_URL", moto_->url()}});
    S3ClientOptions o;
    o.endpoint = ResolveEndpoint(AwsService::kS3, env, SharedConfig()).value();
    o.multipart_threshold = 6LL << 20;
    o.part_size = 5LL << 20;
    o.retry.max_attempts = 1;
    s3_ = std::make_unique<S3Client>(o, http_, creds_, seam_.seam);
    // mvr never creates buckets; the test does, with a plain PUT (moto checks no signature).
    http::HttpRequest req;
    req.method = "PUT";
    req.url = moto_->url() + "/mvr-artifacts";
    auto made = http_.Send(req);
    ASSERT_TRUE(made.ok() && made->status == 200) << (made.ok() ? made->body : "");
  }

  // ListMultipartUploads' XML (mvr itself never lists uploads).
  std::string ListUploads() {
    http::HttpRequest req;
    req.url = moto_->url() + "/mvr-artifacts?uploads";
    auto resp = http_.Send(req);
    EXPECT_TRUE(resp.ok() && resp->status == 200);
    return resp.ok() ? resp->body : "";
  }

  std::unique_ptr<mvr::testing::MotoServer> moto_;
  http::CurlHttpClient http_;
  StaticCredentialsProvider creds_{testing::TestCredentials()};
  testing::ManualSeam seam_;
  std::unique_ptr<S3Client> s3_;
};

TEST_F(S3MotoTest, PutThenHeadAndGetRoundTrip) {
  S3Location at{"mvr-artifacts", "mvr/ci0-0a1b2c3d.zip"};
  ASSERT_TRUE(s3_->PutObject(at, "zip bytes", "application/zip", {{"sha256", "feed"}}).ok());
  Result<S3ObjectInfo> info = s3_->HeadObject(at);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->size, 9);
  EXPECT_FALSE(info->etag.empty());
  EXPECT_EQ(info->metadata["sha256"], "feed");
  Result<std::string> body = s3_->GetObject(at);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ(*body, "zip bytes");
  ASSERT_TRUE(s3_->DeleteObject(at).ok());
  EXPECT_EQ(s3_->HeadObject(at).status().code(), Code::kNotFound);
  EXPECT_TRUE(s3_->DeleteObject(at).ok());  // already gone: still fine
}

TEST_F(S3MotoTest, LargeObjectGoesUpInPartsAndReadsBackWhole) {
  std::string body;
  body.reserve(11 << 20);
  for (int i = 0; body.size() < (11u << 20); ++i) body += std::to_string(i) + ",";
  S3Location at{"mvr-artifacts", "big/artifact.zip"};
  Result<S3Client::UploadReport> done =
      s3_->UploadObject(at, body, "application/zip", {{"sha256", "cafe"}});
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_TRUE(done->multipart);
  EXPECT_EQ(done->parts, 3);
  Result<S3ObjectInfo> info = s3_->HeadObject(at);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->size, static_cast<int64_t>(body.size()));
  EXPECT_EQ(info->metadata["sha256"], "cafe");
  EXPECT_EQ(s3_->GetObject(at).value(), body);
}

TEST_F(S3MotoTest, AbortedUploadTakesNoMoreParts) {
  S3Location at{"mvr-artifacts", "aborted.zip"};
  Result<std::string> id = s3_->CreateMultipartUpload(at, "application/zip", {});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_NE(ListUploads().find(*id), std::string::npos);
  ASSERT_TRUE(s3_->AbortMultipartUpload(at, *id).ok());
  EXPECT_EQ(ListUploads().find(*id), std::string::npos);
  // S3 answers NoSuchUpload (404) here; moto answers 500. Either way the part is refused.
  EXPECT_FALSE(s3_->UploadPart(at, *id, 1, "data").ok());
  EXPECT_EQ(s3_->HeadObject(at).status().code(), Code::kNotFound);
  EXPECT_TRUE(s3_->AbortMultipartUpload(at, *id).ok()) << "aborting twice is done, not an error";
}

TEST_F(S3MotoTest, MissingBucketIsNotFoundNamingIt) {
  Status s = s3_->PutObject({"no-such-bucket", "k"}, "x", "application/zip");
  EXPECT_EQ(s.code(), Code::kNotFound) << s.ToString();
  EXPECT_EQ(s.error_type(), "NoSuchBucket");
  EXPECT_NE(s.message().find("s3://no-such-bucket/k"), std::string::npos);
}

}  // namespace
}  // namespace mvr::aws
