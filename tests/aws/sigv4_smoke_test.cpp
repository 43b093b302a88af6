#include <gtest/gtest.h>

#include "aws/sigv4.h"
#include "base/time_format.h"

namespace mvr::aws {
namespace {

// "get-vanilla" from AWS's SigV4 test suite.
TEST(SigV4SmokeTest, GetVanilla) {
  http::HttpRequest req;
  req.method = "GET";
  req.url = "https://example.amazonaws.com/";
  req.headers.Set("Host", "example.amazonaws.com");
  AwsCredentials creds;
  creds.access_key_id = "AKIDEXAMPLE";
  creds.secret_access_key = Secret("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
  TimePoint t = ParseRfc3339("2015-08-30T12:36:00Z").value();
  ASSERT_TRUE(SignRequest(req, creds, SigningScope{"us-east-1", "service"}, t).ok());
  EXPECT_EQ(req.headers.Get("Authorization"),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            "SignedHeaders=host;x-amz-date, "
            "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
}

}  // namespace
}  // namespace mvr::aws
