// The S3 client without a server: SigV4 for S3 checked against the worked examples of AWS's S3
// API reference ("Signature calculations for the Authorization header"), addressing, error
// mapping, and a multipart upload that fails half-way being aborted.
#include <gtest/gtest.h>

#include "aws/services/s3.h"
#include "aws/signing/sigv4.h"
#include "base/encoding.h"
#include "fake_http.h"

namespace mvr::aws {
namespace {

using testing::FakeHttpClient;

constexpr char kExampleKeyId[] = "AKIAIOSFODNN7EXAMPLE";
constexpr char kExampleSecret[] = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
// 20130524T000000Z, the examples' time.
const TimePoint kExampleTime = FromUnixSeconds(1369353600);

AwsCredentials ExampleCredentials() {
  AwsCredentials c;
  c.access_key_id = kExampleKeyId;
  c.secret_access_key = Secret(kExampleSecret);
  return c;
}

std::string SignatureOf(const http::HttpRequest& req) {
  std::string authz = req.headers.GetOr("Authorization", "");
  return authz.substr(authz.find("Signature=") + 10);
}

http::HttpRequest SignedExample(const std::string& method, const std::string& url,
                                http::Headers headers, const std::string& body = "") {
  http::HttpRequest req;
  req.method = method;
  req.url = url;
  req.headers = std::move(headers);
  req.body = body;
  SigningScope scope{"us-east-1", "s3"};
  scope.path_as_sent = true;
  EXPECT_TRUE(SignRequest(req, ExampleCredentials(), scope, kExampleTime, true).ok());
  return req;
}

TEST(S3SigningTest, GetObjectWithRangeMatchesTheReferenceExample) {
  http::HttpRequest req = SignedExample("GET", "https://examplebucket.s3.amazonaws.com/test.txt",
                                        {{"Range", "bytes=0-9"}});
  EXPECT_EQ(req.headers.GetOr("x-amz-content-sha256", ""), Sha256Hex(""));
  EXPECT_NE(req.headers.GetOr("Authorization", "")
                .find("SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"),
            std::string::npos);
  EXPECT_EQ(SignatureOf(req), "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(S3SigningTest, PutObjectHashesThePayloadAndEncodesTheKeyOnce) {
  // The key "test$file.text" travels as test%24file.text; S3 signs that path as sent.
  http::HttpRequest req = SignedExample(
      "PUT", "https://examplebucket.s3.amazonaws.com/test%24file.text",
      {{"Date", "Fri, 24 May 2013 00:00:00 GMT"}, {"x-amz-storage-class", "REDUCED_REDUNDANCY"}},
      "Welcome to Amazon S3.");
  EXPECT_EQ(req.headers.GetOr("x-amz-content-sha256", ""),
            "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  EXPECT_EQ(SignatureOf(req), "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

TEST(S3SigningTest, SubresourceWithoutValueSignsAsEmptyValue) {
  // GET ?lifecycle, the reference's bucket-configuration example (the same rule as ?uploads).
  http::HttpRequest req =
      SignedExample("GET", "https://examplebucket.s3.amazonaws.com/?lifecycle", {});
  EXPECT_EQ(SignatureOf(req), "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
}

TEST(S3SigningTest, QueryParametersAreSortedAndEncoded) {
  http::HttpRequest req =
      SignedExample("GET", "https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J", {});
  EXPECT_EQ(SignatureOf(req), "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST(S3UriTest, ParsesBucketAndKey) {
  Result<S3Location> at = ParseS3Uri("s3://my-bucket/mvr/ci0-0a1b2c3d.zip");
  ASSERT_TRUE(at.ok()) << at.status().ToString();
  EXPECT_EQ(at->bucket, "my-bucket");
  EXPECT_EQ(at->key, "mvr/ci0-0a1b2c3d.zip");
  EXPECT_EQ(at->Uri(), "s3://my-bucket/mvr/ci0-0a1b2c3d.zip");
}

TEST(S3UriTest, RefusesWhatS3OrTheSignerWouldNot) {
  for (const char* bad : {"https://b/k", "s3://bucket", "s3://bucket/", "s3://Bucket/k",
                          "s3://ab/k", "s3://bucket/a//b", "s3://bucket/a/../b", "s3://bucket/a b",
                          "s3://-bucket/k", "s3://bucket/k/"}) {
    Result<S3Location> at = ParseS3Uri(bad);
    EXPECT_FALSE(at.ok()) << bad;
    if (!at.ok()) {
      EXPECT_EQ(at.status().code(), Code::kInvalidArgument) << bad;
    }
  }
}

class S3ClientTest : public ::testing::Test {
 protected:
  S3Client Make(const std::string& url, const std::string& source, int64_t threshold = 64LL << 20) {
    S3ClientOptions o;
    o.endpoint = ServiceEndpoint{url, "us-east-1", "s3", source};
    o.retry.max_attempts = 2;
    o.multipart_threshold = threshold;
    o.part_size = 5LL << 20;
    return S3Client(o, http_, creds_, seam_.seam);
  }

  FakeHttpClient http_;
  StaticCredentialsProvider creds_{testing::TestCredentials()};
  testing::ManualSeam seam_;
};

TEST_F(S3ClientTest, PathStyleOnAConfiguredEndpointVirtualHostedOnAws) {
  S3Location at{"bucket", "dir/a+b.zip"};
  EXPECT_EQ(Make("http://127.0.0.1:5000", "AWS_ENDPOINT_URL").ObjectUrl(at).value(),
            "http://127.0.0.1:5000/bucket/dir/a%2Bb.zip");
  EXPECT_EQ(Make("https://s3.eu-west-1.amazonaws.com", "regional default").ObjectUrl(at).value(),
            "https://bucket.s3.eu-west-1.amazonaws.com/dir/a%2Bb.zip");
  // A dotted bucket would break the wildcard certificate: path style.
  EXPECT_EQ(Make("https://s3.eu-west-1.amazonaws.com", "regional default")
                .ObjectUrl({"my.bucket", "k"})
                .value(),
            "https://s3.eu-west-1.amazonaws.com/my.bucket/k");
}

TEST_F(S3ClientTest, PutObjectSendsTheBodyItsHashAndMetadata) {
  http_.Push(http::HttpResponse::Text(200, ""));
  S3Client s3 = Make("http://127.0.0.1:5000", "AWS_ENDPOINT_URL");
  ASSERT_TRUE(
      s3.PutObject({"bucket", "k.zip"}, "zip-bytes", "application/zip", {{"sha256", "abc"}}).ok());
  ASSERT_EQ(http_.requests().size(), 1u);
  const http::HttpRequest& req = http_.requests()[0];
  EXPECT_EQ(req.method, "PUT");
  EXPECT_EQ(req.body, "zip-bytes");
  EXPECT_EQ(req.headers.GetOr("X-Amz-Content-Sha256", ""), Sha256Hex("zip-bytes"));
  EXPECT_EQ(req.headers.GetOr("x-amz-meta-sha256", ""), "abc");
  EXPECT_NE(req.headers.GetOr("Authorization", "").find("x-amz-meta-sha256"), std::string::npos);
  EXPECT_EQ(req.headers.GetOr("Authorization", "").find("test-secret"), std::string::npos);
}

TEST_F(S3ClientTest, ErrorsMapToCodesAndKeepS3sName) {
  S3Client s3 = Make("http://127.0.0.1:5000", "AWS_ENDPOINT_URL");
  http_.Push(http::HttpResponse::Text(
      404,
      "<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist"
      "</Message></Error>"));
  Status s = s3.PutObject({"bucket", "k"}, "x", "application/zip");
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_EQ(s.error_type(), "NoSuchBucket");
  EXPECT_NE(s.message().find("s3://bucket/k"), std::string::npos) << s.message();
  http_.Push(http::HttpResponse::Text(403, ""));  // HEAD answers carry no body
  EXPECT_EQ(s3.HeadObject({"bucket", "k"}).status().code(), Code::kUnauthorized);
  http_.Push(http::HttpResponse::Text(404, ""));
  EXPECT_EQ(s3.HeadObject({"bucket", "k"}).status().code(), Code::kNotFound);
}

TEST_F(S3ClientTest, SlowDownIsRetried) {
  http_.Push(http::HttpResponse::Text(
      503, "<Error><Code>SlowDown</Code><Message>Please reduce</Message></Error>"));
  http_.Push(http::HttpResponse::Text(200, ""));
  S3Client s3 = Make("http://127.0.0.1:5000", "AWS_ENDPOINT_URL");
  EXPECT_TRUE(s3.PutObject({"bucket", "k"}, "x", "application/zip").ok());
  EXPECT_EQ(http_.requests().size(), 2u);
}

TEST_F(S3ClientTest, CompleteWithAnErrorInsideA200IsAFailure) {
  http_.Push(http::HttpResponse::Text(
      200,
      "<Error><Code>InternalError</Code><Message>We encountered an internal error"
      "</Message></Error>"));
  http_.Push(http::HttpResponse::Text(
      200, "<Error><Code>InternalError</Code><Message>again</Message></Error>"));
  S3Client s3 = Make("http://127.0.0.1:5000", "AWS_ENDPOINT_URL");
  Status s = s3.CompleteMultipartUpload({"bucket", "k"}, "id", {"\"e1\""});
  EXPECT_EQ(s.code(), Code::kTransient);
}

TEST_F(S3ClientTest, MultipartUploadThatFailsIsAborted) {
  int part_calls = 0;
  http_.SetHandler([&](const http::HttpRequest& req) -> Result<http::HttpResponse> {
    if (req.method == "POST" && req.url.find("?uploads=") != std::string::npos) {
      return http::HttpResponse::Text(200,
                                      "<InitiateMultipartUploadResult><UploadId>up-1</UploadId>"
                                      "</InitiateMultipartUploadResult>");
    }
    if (req.method == "PUT" && req.url.find("partNumber=") != std::string::npos) {
      if (++part_calls == 1) {
        http::HttpResponse ok = http::HttpResponse::Text(200, "");
        ok.headers.Set("ETag", "\"p1\"");
        return ok;
      }
      return http::HttpResponse::Text(
          400, "<Error><Code>InvalidPart</Code><Message>bad part</Message></Error>");
    }
    if (req.method == "DELETE") return http::HttpResponse::Text(204, "");
    return Internal("unexpected request " + req.method + " " + req.url);
  });
  S3Client s3 = Make("http://127.0.0.1:5000", "AWS_ENDPOINT_URL", /*threshold=*/6LL << 20);
  std::string body((11LL << 20), 'x');
  auto done = s3.UploadObject({"bucket", "big.zip"}, body, "application/zip");
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.status().error_type(), "InvalidPart");
  const auto& reqs = http_.requests();
  ASSERT_FALSE(reqs.empty());
  EXPECT_EQ(reqs.back().method, "DELETE");
  EXPECT_NE(reqs.back().url.find("uploadId=up-1"), std::string::npos) << reqs.back().url;
  for (const auto& r : reqs) {
    EXPECT_EQ(r.url.find("?uploadId=up-1&"), std::string::npos);  // never completed
    EXPECT_FALSE(r.method == "POST" && r.url.find("uploadId=") != std::string::npos);
  }
}

}  // namespace
}  // namespace mvr::aws
