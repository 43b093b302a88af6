// The IAM policy evaluator: each feature with a request it allows and one it refuses.
#include "aws/services/iam_policy.h"

#include <gtest/gtest.h>

namespace mvr::aws {
namespace {

constexpr char kImage[] = "arn:aws:lambda:us-east-1:123456789012:microvm-image:set1-abc";
constexpr char kVm[] = "arn:aws:lambda:us-east-1:123456789012:microvm:vm-1";

IamPolicy Policy(const std::string& text) {
  Result<IamPolicy> p = IamPolicy::ParseText(text, "test policy");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : IamPolicy();
}

IamRequest Req(const std::string& action, const std::string& resource,
               std::map<std::string, std::vector<std::string>> context = {}) {
  return IamRequest{action, resource, std::move(context)};
}

TEST(IamWildcard, StarAndQuestionMark) {
  EXPECT_TRUE(IamWildcardMatch("set1*", "set1-abc", false));
  EXPECT_TRUE(IamWildcardMatch("*", "", false));
  EXPECT_TRUE(IamWildcardMatch("a?c", "abc", false));
  EXPECT_FALSE(IamWildcardMatch("a?c", "ac", false));
  EXPECT_FALSE(IamWildcardMatch("set1*", "set2-abc", false));
  EXPECT_TRUE(IamWildcardMatch("*-abc*x", "1-abc-abcx", false));
  EXPECT_FALSE(IamWildcardMatch("ABC", "abc", false));
  EXPECT_TRUE(IamWildcardMatch("ABC", "abc", true));
}

TEST(IamPolicyEval, DefaultDenyWithoutAStatement) {
  IamPolicy p = Policy(R"({"Version":"2012-10-17","Statement":[
    {"Effect":"Allow","Action":"lambda:GetMicrovm","Resource":"*"}]})");
  EXPECT_EQ(p.Evaluate(Req("lambda:GetMicrovm", kVm)), IamDecision::kAllow);
  EXPECT_EQ(p.Evaluate(Req("lambda:TerminateMicrovm", kVm)), IamDecision::kImplicitDeny);
}

TEST(IamPolicyEval, ActionsMatchIgnoringCaseAndWithWildcards) {
  IamPolicy p = Policy(R"({"Statement":{"Effect":"Allow","Action":["lambda:get*"],
                          "Resource":"*"}})");
  EXPECT_EQ(p.Evaluate(Req("lambda:GetMicrovm", kVm)), IamDecision::kAllow);
  EXPECT_EQ(p.Evaluate(Req("LAMBDA:GETMICROVMIMAGE", kImage)), IamDecision::kAllow);
  EXPECT_EQ(p.Evaluate(Req("lambda:RunMicrovm", kVm)), IamDecision::kImplicitDeny);
  EXPECT_EQ(p.Evaluate(Req("dynamodb:GetItem", kVm)), IamDecision::kImplicitDeny);
}

TEST(IamPolicyEval, NotActionAppliesToEveryOtherAction) {
  IamPolicy p = Policy(R"({"Statement":[{"Effect":"Allow","NotAction":"lambda:Terminate*",
                          "Resource":"*"}]})");
  EXPECT_EQ(p.Evaluate(Req("lambda:GetMicrovm", kVm)), IamDecision::kAllow);
  EXPECT_EQ(p.Evaluate(Req("lambda:TerminateMicrovm", kVm)), IamDecision::kImplicitDeny);
}

TEST(IamPolicyEval, ResourcesMatchArnPartsWithWildcards) {
  IamPolicy p = Policy(R"({"Statement":[{"Effect":"Allow","Action":"lambda:RunMicrovm",
    "Resource":["arn:aws:lambda:us-east-1:123456789012:microvm-image:set1*",
                "arn:aws:lambda:*:123456789012:microvm:*"]}]})");
  EXPECT_EQ(p.Evaluate(Req("lambda:RunMicrovm", kImage)), IamDecision::kAllow);
  EXPECT_EQ(p.Evaluate(Req("lambda:RunMicrovm", kVm)), IamDecision::kAllow);
  EXPECT_EQ(p.Evaluate(Req("lambda:RunMicrovm",
                           "arn:aws:lambda:us-east-1:123456789012:microvm-image:set2-abc")),
            IamDecision::kImplicitDeny);
  // Another account, and a wildcard that would have to span a ':'.
  EXPECT_EQ(p.Evaluate(Req("lambda:RunMicrovm", "arn:aws:lambda:us-east-1:999999999999:microvm:x")),
            IamDecision::kImplicitDeny);
  IamPolicy spans = Policy(R"({"Statement":[{"Effect":"Allow","Action":"*",
    "Resource":"arn:aws:lambda:us-east-1*"}]})");
  EXPECT_EQ(spans.Evaluate(Req("lambda:GetMicrovm", kVm)), IamDecision::kImplicitDeny);
}

TEST(IamPolicyEval, ListOperationsNeedAStarResource) {
  IamPolicy named = Policy(R"({"Statement":[{"Effect":"Allow","Action":"lambda:ListMicrovms",
    "Resource":"arn:aws:lambda:us-east-1:123456789012:microvm:*"}]})");
  IamPolicy star = Policy(R"({"Statement":[{"Effect":"Allow","Action":"lambda:ListMicrovms",
    "Resource":"*"}]})");
  EXPECT_EQ(named.Evaluate(Req("lambda:ListMicrovms", "*")), IamDecision::kImplicitDeny);
  EXPECT_EQ(star.Evaluate(Req("lambda:ListMicrovms", "*")), IamDecision::kAllow);
}

TEST(IamPolicyEval, NotResourceAppliesToEveryOtherResource) {
  IamPolicy p = Policy(R"({"Statement":[{"Effect":"Allow","Action":"lambda:*",
    "NotResource":"arn:aws:lambda:us-east-1:123456789012:microvm-image:*"}]})");
  EXPECT_EQ(p.Evaluate(Req("lambda:GetMicrovm", kVm)), IamDecision::kAllow);
  EXPECT_EQ(p.Evaluate(Req("lambda:GetMicrovmImage", kImage)), IamDecision::kImplicitDeny);
}

TEST(IamPolicyEval, AnExplicitDenyWinsOverAnAllow) {
  IamPolicy p = Policy(R"({"Statement":[
    {"Effect":"Allow","Action":"lambda:*","Resource":"*"},
    {"Effect":"Deny","Action":"lambda:TerminateMicrovm","Resource":"*"}]})");
  EXPECT_EQ(p.Evaluate(Req("lambda:GetMicrovm", kVm)), IamDecision::kAllow);
  EXPECT_EQ(p.Evaluate(Req("lambda:TerminateMicrovm", kVm)), IamDecision::kExplicitDeny);
  // Across policies too.
  IamPolicy allow = Policy(R"({"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]})");
  IamPolicy deny = Policy(R"({"Statement":[{"Effect":"Deny","Action":"lambda:Run*",
                             "Resource":"*"}]})");
  EXPECT_EQ(EvaluatePolicies({allow, deny}, Req("lambda:RunMicrovm", kImage)),
            IamDecision::kExplicitDeny);
  EXPECT_EQ(EvaluatePolicies({allow, deny}, Req("lambda:GetMicrovm", kVm)), IamDecision::kAllow);
  EXPECT_EQ(EvaluatePolicies({}, Req("lambda:GetMicrovm", kVm)), IamDecision::kImplicitDeny);
}

const char kPassRole[] = R"({"Statement":[{"Effect":"Allow","Action":"iam:PassRole",
  "Resource":"arn:aws:iam::123456789012:role/vm-role",
  "Condition":{"StringEquals":{"iam:PassedToService":"lambda.amazonaws.com"}}}]})";
constexpr char kRole[] = "arn:aws:iam::123456789012:role/vm-role";

TEST(IamPolicyConditions, StringEqualsOnTheRequestsValue) {
  IamPolicy p = Policy(kPassRole);
  EXPECT_EQ(
      p.Evaluate(Req("iam:PassRole", kRole, {{"iam:passedtoservice", {"lambda.amazonaws.com"}}})),
      IamDecision::kAllow);
  EXPECT_EQ(
      p.Evaluate(Req("iam:PassRole", kRole, {{"iam:passedtoservice", {"ec2.amazonaws.com"}}})),
      IamDecision::kImplicitDeny);
  // Known but absent from this request: StringEquals does not hold.
  EXPECT_EQ(p.Evaluate(Req("iam:PassRole", kRole, {{"iam:passedtoservice", {}}})),
            IamDecision::kImplicitDeny);
}

TEST(IamPolicyConditions, AKeyTheRequestCannotSupplyMakesAnAllowNotApplyAndADenyApply) {
  IamPolicy allow = Policy(kPassRole);
  EXPECT_EQ(allow.Evaluate(Req("iam:PassRole", kRole)), IamDecision::kImplicitDeny);
  IamPolicy deny = Policy(R"({"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},
    {"Effect":"Deny","Action":"*","Resource":"*",
     "Condition":{"StringEquals":{"aws:SourceVpc":"vpc-1"}}}]})");
  EXPECT_EQ(deny.Evaluate(Req("lambda:GetMicrovm", kVm)), IamDecision::kExplicitDeny);
  EXPECT_EQ(deny.Evaluate(Req("lambda:GetMicrovm", kVm, {{"aws:sourcevpc", {"vpc-2"}}})),
            IamDecision::kAllow);
  // An operator the evaluator does not support is undecidable the same way.
  IamPolicy numeric = Policy(R"({"Statement":[{"Effect":"Allow","Action":"*","Resource":"*",
    "Condition":{"NumericLessThan":{"s3:max-keys":"10"}}}]})");
  EXPECT_EQ(numeric.Evaluate(Req("s3:ListBucket", "*", {{"s3:max-keys", {"5"}}})),
            IamDecision::kImplicitDeny);
}

TEST(IamPolicyConditions, ConditionKeysIgnoreCase) {
  IamPolicy p = Policy(R"({"Statement":[{"Effect":"Allow","Action":"*","Resource":"*",
    "Condition":{"StringEquals":{"AWS:RequestedRegion":"us-east-1"}}}]})");
  EXPECT_EQ(p.Evaluate(Req("lambda:GetMicrovm", kVm, {{"aws:requestedregion", {"us-east-1"}}})),
            IamDecision::kAllow);
  EXPECT_EQ(p.Evaluate(Req("lambda:GetMicrovm", kVm, {{"aws:requestedregion", {"eu-west-1"}}})),
            IamDecision::kImplicitDeny);
}

TEST(IamPolicyConditions, StringLikeAndStringNotLike) {
  IamPolicy like = Policy(R"({"Statement":[{"Effect":"Allow","Action":"s3:ListBucket",
    "Resource":"arn:aws:s3:::bkt","Condition":{"StringLike":{"s3:prefix":["mvr/set1*"]}}}]})");
  EXPECT_EQ(like.Evaluate(Req("s3:ListBucket", "arn:aws:s3:::bkt", {{"s3:prefix", {"mvr/set1a"}}})),
            IamDecision::kAllow);
  EXPECT_EQ(like.Evaluate(Req("s3:ListBucket", "arn:aws:s3:::bkt", {{"s3:prefix", {"other/"}}})),
            IamDecision::kImplicitDeny);
  IamPolicy not_like = Policy(R"({"Statement":[{"Effect":"Allow","Action":"*","Resource":"*",
    "Condition":{"StringNotLike":{"s3:prefix":"secret/*"}}}]})");
  EXPECT_EQ(not_like.Evaluate(Req("s3:ListBucket", "*", {{"s3:prefix", {"mvr/"}}})),
            IamDecision::kAllow);
  EXPECT_EQ(not_like.Evaluate(Req("s3:ListBucket", "*", {{"s3:prefix", {"secret/a"}}})),
            IamDecision::kImplicitDeny);
  // A negated operator holds when the key is absent from the request.
  EXPECT_EQ(not_like.Evaluate(Req("s3:ListBucket", "*", {{"s3:prefix", {}}})), IamDecision::kAllow);
}

TEST(IamPolicyConditions, IfExistsHoldsWhenTheKeyIsAbsent) {
  IamPolicy p = Policy(R"({"Statement":[{"Effect":"Allow","Action":"*","Resource":"*",
    "Condition":{"StringEqualsIfExists":{"iam:PassedToService":"lambda.amazonaws.com"}}}]})");
  EXPECT_EQ(p.Evaluate(Req("iam:PassRole", kRole, {{"iam:passedtoservice", {}}})),
            IamDecision::kAllow);
  EXPECT_EQ(
      p.Evaluate(Req("iam:PassRole", kRole, {{"iam:passedtoservice", {"ec2.amazonaws.com"}}})),
      IamDecision::kImplicitDeny);
}

TEST(IamPolicyConditions, ArnLikeMatchesArnParts) {
  IamPolicy p = Policy(R"({"Statement":[{"Effect":"Allow","Action":"*","Resource":"*",
    "Condition":{"ArnLike":{"aws:SourceArn":"arn:aws:lambda:*:123456789012:microvm-image:set1*"}}}]})");
  EXPECT_EQ(p.Evaluate(Req("x:Y", "*", {{"aws:sourcearn", {kImage}}})), IamDecision::kAllow);
  EXPECT_EQ(p.Evaluate(Req(
                "x:Y", "*",
                {{"aws:sourcearn", {"arn:aws:lambda:us-east-1:999999999999:microvm-image:set1"}}})),
            IamDecision::kImplicitDeny);
  IamPolicy not_arn = Policy(R"({"Statement":[{"Effect":"Allow","Action":"*","Resource":"*",
    "Condition":{"ArnNotEquals":{"aws:SourceArn":"arn:aws:lambda:us-east-1:123456789012:*"}}}]})");
  EXPECT_EQ(not_arn.Evaluate(Req("x:Y", "*", {{"aws:sourcearn", {kImage}}})),
            IamDecision::kImplicitDeny);
}

TEST(IamPolicyConditions, BoolAndNull) {
  IamPolicy secure = Policy(R"({"Statement":[{"Effect":"Allow","Action":"*","Resource":"*",
    "Condition":{"Bool":{"aws:SecureTransport":true}}}]})");
  EXPECT_EQ(secure.Evaluate(Req("x:Y", "*", {{"aws:securetransport", {"true"}}})),
            IamDecision::kAllow);
  EXPECT_EQ(secure.Evaluate(Req("x:Y", "*", {{"aws:securetransport", {"false"}}})),
            IamDecision::kImplicitDeny);
  IamPolicy absent = Policy(R"({"Statement":[{"Effect":"Allow","Action":"*","Resource":"*",
    "Condition":{"Null":{"iam:PassedToService":"true"}}}]})");
  EXPECT_EQ(absent.Evaluate(Req("x:Y", "*", {{"iam:passedtoservice", {}}})), IamDecision::kAllow);
  EXPECT_EQ(absent.Evaluate(Req("x:Y", "*", {{"iam:passedtoservice", {"lambda.amazonaws.com"}}})),
            IamDecision::kImplicitDeny);
}

TEST(IamPolicyParse, RefusesWhatItCannotEvaluate) {
  struct Case {
    const char* text;
    const char* expect;
  };
  const Case cases[] = {
      {R"({"Version":"2012-10-17"})", "no Statement"},
      {R"({"Statement":[{"Effect":"Maybe","Action":"*","Resource":"*"}]})", "Effect must be"},
      {R"({"Statement":[{"Effect":"Allow","Resource":"*"}]})", "exactly one of Action"},
      {R"({"Statement":[{"Effect":"Allow","Action":"*","NotAction":"*","Resource":"*"}]})",
       "exactly one of Action"},
      {R"({"Statement":[{"Effect":"Allow","Action":"*"}]})", "exactly one of Resource"},
      {R"({"Statement":[{"Sid":"S1","Effect":"Allow","Action":[1],"Resource":"*"}]})",
       "statement 1 (S1) Action must be a string"},
      {R"({"Statement":[{"Effect":"Allow","Principal":"*","Action":"*","Resource":"*"}]})",
       "Principal"},
      {R"({"Statement":[{"Effect":"Allow","Action":"*",
          "Resource":"arn:aws:s3:::b/${aws:username}"}]})",
       "policy variable"},
      {R"({"Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Condition":[]}]})",
       "Condition must be an object"},
      {R"({"Statement":[{"Effect":"Allow","Action":"*","Resource":"*",
          "Condition":{"StringEquals":"x"}}]})",
       "must map condition keys"},
      {"{", "not valid JSON"},
  };
  for (const Case& c : cases) {
    Result<IamPolicy> p = IamPolicy::ParseText(c.text, "p.json");
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_NE(p.status().message().find(c.expect), std::string::npos) << p.status().message();
    EXPECT_NE(p.status().message().find("p.json"), std::string::npos) << p.status().message();
  }
}

}  // namespace
}  // namespace mvr::aws
