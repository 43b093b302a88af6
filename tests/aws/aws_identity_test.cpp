#include "aws/services/aws_identity.h"

#include <gtest/gtest.h>

#include "fake_http.h"

namespace mvr::aws {
namespace {

// AWS's documented answer shapes (the IAM API reference's example of SimulatePrincipalPolicy,
// trimmed): each result names its action, resource and decision; a nested
// ResourceSpecificResults repeats the resource under another decision name.
constexpr char kSimulation[] =
    R"(<SimulatePrincipalPolicyResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/">
  <SimulatePrincipalPolicyResult>
    <IsTruncated>false</IsTruncated>
    <EvaluationResults>
      <member>
        <EvalActionName>lambda:RunMicrovm</EvalActionName>
        <EvalResourceName>arn:aws:lambda:us-east-1:123456789012:microvm-image:ci0-1a2b3c4d</EvalResourceName>
        <EvalDecision>allowed</EvalDecision>
        <MatchedStatements><member><SourcePolicyId>p</SourcePolicyId></member></MatchedStatements>
        <ResourceSpecificResults><member>
          <EvalResourceName>arn:other</EvalResourceName>
          <EvalResourceDecision>implicitDeny</EvalResourceDecision>
        </member></ResourceSpecificResults>
      </member>
      <member>
        <EvalActionName>lambda:TerminateMicrovm</EvalActionName>
        <EvalResourceName>arn:aws:lambda:us-east-1:123456789012:microvm-image:ci0-1a2b3c4d</EvalResourceName>
        <EvalDecision>implicitDeny</EvalDecision>
      </member>
    </EvaluationResults>
  </SimulatePrincipalPolicyResult>
</SimulatePrincipalPolicyResponse>)";

class AwsIdentityTest : public ::testing::Test {
 protected:
  QueryProtocolClient Client(const std::string& service, const std::string& version) {
    return QueryProtocolClient(
        ServiceEndpoint{"https://" + service + ".amazonaws.com", "us-east-1", service, "test"},
        version, http_, creds_, seam_.seam);
  }
  testing::FakeHttpClient http_;
  StaticCredentialsProvider creds_{testing::TestCredentials()};
  testing::ManualSeam seam_;
};

TEST_F(AwsIdentityTest, GetCallerIdentityPostsTheQueryFormSignedForSts) {
  http_.Push(http::HttpResponse::Text(
      200,
      "<GetCallerIdentityResponse><GetCallerIdentityResult><Arn>arn:aws:sts::123456789012:"
      "assumed-role/mvr-ci-launcher/s1</Arn><UserId>AROA:s1</UserId><Account>123456789012"
      "</Account></GetCallerIdentityResult></GetCallerIdentityResponse>"));
  QueryProtocolClient sts = Client("sts", "2011-06-15");
  Result<CallerIdentity> who = GetCallerIdentity(sts);
  ASSERT_TRUE(who.ok()) << who.status().ToString();
  EXPECT_EQ(who->account, "123456789012");
  EXPECT_EQ(who->arn, "arn:aws:sts::123456789012:assumed-role/mvr-ci-launcher/s1");
  const http::HttpRequest& sent = http_.requests().at(0);
  EXPECT_EQ(sent.method, "POST");
  EXPECT_EQ(sent.body, "Action=GetCallerIdentity&Version=2011-06-15");
  EXPECT_NE(sent.headers.GetOr("Authorization", "").find("/us-east-1/sts/aws4_request"),
            std::string::npos);
}

TEST_F(AwsIdentityTest, SimulationReadsEachResultsOwnDecision) {
  http_.Push(http::HttpResponse::Text(200, kSimulation));
  QueryProtocolClient iam = Client("iam", "2010-05-08");
  auto r = SimulatePrincipalPolicy(iam, "arn:aws:iam::123456789012:role/mvr-ci-launcher",
                                   {"lambda:RunMicrovm", "lambda:TerminateMicrovm"}, "arn:x");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].action, "lambda:RunMicrovm");
  EXPECT_TRUE((*r)[0].allowed());
  EXPECT_EQ((*r)[1].action, "lambda:TerminateMicrovm");
  EXPECT_FALSE((*r)[1].allowed());
  EXPECT_EQ((*r)[1].decision, "implicitDeny");
  const std::string& body = http_.requests().at(0).body;
  EXPECT_NE(body.find("PolicySourceArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fmvr-ci-launcher"),
            std::string::npos)
      << body;
  EXPECT_NE(body.find("ActionNames.member.2=lambda%3ATerminateMicrovm"), std::string::npos) << body;
}

TEST_F(AwsIdentityTest, AccessDeniedIsUnauthorizedWithItsCode) {
  http_.Push(http::HttpResponse::Text(
      403,
      "<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>User is "
      "not authorized to perform: iam:SimulatePrincipalPolicy</Message></Error>"
      "</ErrorResponse>"));
  QueryProtocolClient iam = Client("iam", "2010-05-08");
  auto r = SimulatePrincipalPolicy(iam, "arn:aws:iam::1:user/u", {"lambda:RunMicrovm"}, "*");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnauthorized);
  EXPECT_EQ(r.status().error_type(), "AccessDenied");
}

TEST(PolicySourceArnTest, SessionsBecomeTheirRoleAndUsersStay) {
  EXPECT_EQ(*PolicySourceArn("arn:aws:sts::123456789012:assumed-role/mvr-ci/s1"),
            "arn:aws:iam::123456789012:role/mvr-ci");
  EXPECT_EQ(*PolicySourceArn("arn:aws:iam::123456789012:user/ci"),
            "arn:aws:iam::123456789012:user/ci");
  EXPECT_EQ(*PolicySourceArn("arn:aws:sts::123456789012:user/moto"),
            "arn:aws:iam::123456789012:user/moto");
  EXPECT_FALSE(PolicySourceArn("arn:aws:iam::123456789012:root").ok());
  EXPECT_FALSE(PolicySourceArn("not an arn").ok());
}

}  // namespace
}  // namespace mvr::aws
