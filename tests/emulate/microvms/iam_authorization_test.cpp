// The MicroVMs emulator's --iam-policies: the IAM requests each operation makes, the file's
// forms and its errors, and the answer a denied request gets through the rest-json front.
#include "emulate/microvms/front/iam_authorization.h"

#include <gtest/gtest.h>

#include "aws/signing/sigv4.h"
#include "emulate/microvms/front/rest_json_front.h"

namespace mvr::emulate::microvms {
namespace {

using nlohmann::json;

constexpr char kArn[] = "arn:aws:lambda:us-east-1:123456789012:";

TEST(MicrovmsIamRequests, EachOperationNamesItsActionAndResource) {
  auto one = [](const std::string& op, const json& input) {
    auto r = MicrovmsIamRequests(op, input, "us-east-1", "123456789012");
    EXPECT_EQ(r.size(), 1u) << op;
    return r.empty() ? std::string() : r[0].action + " " + r[0].resource;
  };
  EXPECT_EQ(one("GetMicrovm", {{"microvmIdentifier", "mvm-1"}}),
            "lambda:GetMicrovm " + std::string(kArn) + "microvm:mvm-1");
  EXPECT_EQ(one("TerminateMicrovm", {{"microvmIdentifier", std::string(kArn) + "microvm:x"}}),
            "lambda:TerminateMicrovm " + std::string(kArn) + "microvm:x");
  EXPECT_EQ(one("GetMicrovmImageVersion", {{"imageIdentifier", "img"}, {"imageVersion", "1"}}),
            "lambda:GetMicrovmImageVersion " + std::string(kArn) + "microvm-image:img");
  EXPECT_EQ(one("CreateMicrovmImage", {{"name", "set1-a"}}),
            "lambda:CreateMicrovmImage " + std::string(kArn) + "microvm-image:set1-a");
  EXPECT_EQ(one("ListMicrovms", {{"imageIdentifier", "img"}}), "lambda:ListMicrovms *");
  EXPECT_EQ(one("ListMicrovmImages", json::object()), "lambda:ListMicrovmImages *");
}

TEST(MicrovmsIamRequests, RunMicrovmNeedsTheImageTheVmsAndPassRole) {
  auto r = MicrovmsIamRequests(
      "RunMicrovm",
      {{"imageIdentifier", "img"}, {"executionRoleArn", "arn:aws:iam::123456789012:role/r"}},
      "us-east-1", "123456789012");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].resource, std::string(kArn) + "microvm-image:img");
  EXPECT_EQ(r[1].resource, std::string(kArn) + "microvm:*");
  EXPECT_EQ(r[2].action, "iam:PassRole");
  EXPECT_EQ(r[2].context.at("iam:passedtoservice"),
            std::vector<std::string>{"lambda.amazonaws.com"});
  EXPECT_EQ(
      MicrovmsIamRequests("RunMicrovm", {{"imageIdentifier", "img"}}, "us-east-1", "1").size(), 2u);
  auto build = MicrovmsIamRequests("UpdateMicrovmImage",
                                   {{"imageIdentifier", "img"}, {"buildRoleArn", "arn:b"}},
                                   "us-east-1", "1");
  ASSERT_EQ(build.size(), 2u);
  EXPECT_EQ(build[1].resource, "arn:b");
}

TEST(MicrovmsIamRequests, RunMicrovmPassesEachNetworkConnector) {
  const std::string in =
      "arn:aws:lambda:us-east-1:aws:network-connector:aws-network-connector:ALL_INGRESS";
  const std::string out = "arn:aws:lambda:us-east-1:123456789012:network-connector:vpc";
  auto r = MicrovmsIamRequests("RunMicrovm",
                               {{"imageIdentifier", "img"},
                                {"ingressNetworkConnectors", {in}},
                                {"egressNetworkConnectors", {out}}},
                               "us-east-1", "123456789012");
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[2].action, "lambda:PassNetworkConnector");
  EXPECT_EQ(r[2].resource, in);
  EXPECT_EQ(r[3].action, "lambda:PassNetworkConnector");
  EXPECT_EQ(r[3].resource, out);
}

TEST(MicrovmsIamPoliciesFile, BadFilesAreRefusedWithWhereAndWhat) {
  struct Case {
    const char* text;
    const char* expect;
  };
  const Case cases[] = {
      {"[]", "must be a JSON object"},
      {"{}", "must be a JSON object"},
      {R"({"AKID1": []})", "key AKID1 must be a non-empty list"},
      {R"({"AKID1": {"principal": 3, "policies": []}})", "key AKID1 must be a list"},
      {R"({"AKID1": [{"Statement": [{"Effect": "Allow"}]}]})",
       "key AKID1 policy 1 statement 1 needs exactly one of Action"},
  };
  for (const Case& c : cases) {
    auto p = MicrovmsIamPolicies::Parse(c.text, "policies.json", "us-east-1", "123456789012");
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_NE(p.status().message().find(c.expect), std::string::npos) << p.status().message();
    EXPECT_NE(p.status().message().find("policies.json"), std::string::npos);
  }
}

class IamFrontTest : public ::testing::Test {
 protected:
  http::ServerRequest Signed(const std::string& key, const std::string& method,
                             const std::string& path, const std::string& body = "") {
    http::HttpRequest req;
    req.method = method;
    req.url = "http://127.0.0.1:1" + path;
    req.body = body;
    if (!body.empty()) req.headers.Set("Content-Type", "application/json");
    EXPECT_TRUE(aws::SignRequest(req, aws::AwsCredentials{key, Secret("s"), Secret(), {}, "t"},
                                 aws::SigningScope{"us-east-1", "lambda"}, now_)
                    .ok());
    http::ServerRequest s;
    s.method = method;
    s.path = path;
    s.raw_path = path;
    s.headers = req.headers;
    s.body = body;
    return s;
  }
  ApiExchange Serve(const http::ServerRequest& r, const MicrovmsIamPolicies& policies) {
    RestJsonFrontOptions options;
    options.iam_policies = &policies;
    return ServeRestJson(
        r, options, now_,
        [this](const std::string& op, const json&) -> Result<json> {
          invoked_.push_back(op);
          return json{{"items", json::array()}};
        },
        logger_);
  }

  TimePoint now_ = FromUnixSeconds(1'700'000'000);
  std::vector<std::string> invoked_;
  MemorySink sink_;
  SystemClock clock_;
  Logger logger_{sink_, clock_};
};

TEST_F(IamFrontTest, ADeniedOperationIs403AccessDeniedAndNeverReachesTheModel) {
  auto policies = MicrovmsIamPolicies::Parse(
      R"({"AKIDLIST": {"principal": "arn:aws:iam::123456789012:user/lister", "policies": [
            {"Statement": [{"Effect": "Allow", "Action": "lambda:ListMicrovms", "Resource": "*"}]}]},
          "AKIDNONE": [{"Statement": [{"Effect": "Deny", "Action": "*", "Resource": "*"}]}]})",
      "test", "us-east-1", "123456789012");
  ASSERT_TRUE(policies.ok()) << policies.status().ToString();
  ApiExchange allowed = Serve(Signed("AKIDLIST", "GET", "/2025-09-09/microvms"), *policies);
  EXPECT_EQ(allowed.response.status, 200) << allowed.response.body;
  ApiExchange denied = Serve(Signed("AKIDLIST", "GET", "/2025-09-09/microvms/mvm-1"), *policies);
  EXPECT_EQ(denied.response.status, 403);
  EXPECT_EQ(denied.response.headers.Get("x-amzn-ErrorType").value_or(""), "AccessDeniedException");
  EXPECT_EQ(json::parse(denied.response.body)["message"],
            "User: arn:aws:iam::123456789012:user/lister is not authorized to perform: "
            "lambda:GetMicrovm on resource: arn:aws:lambda:us-east-1:123456789012:microvm:mvm-1 "
            "because no identity-based policy allows the lambda:GetMicrovm action");
  ApiExchange explicit_deny = Serve(Signed("AKIDNONE", "GET", "/2025-09-09/microvms"), *policies);
  EXPECT_EQ(explicit_deny.response.status, 403);
  EXPECT_NE(explicit_deny.response.body.find("with an explicit deny in an identity-based policy"),
            std::string::npos);
  ApiExchange unknown = Serve(Signed("AKIDOTHER", "GET", "/2025-09-09/microvms"), *policies);
  EXPECT_EQ(unknown.response.status, 403);
  http::ServerRequest unsigned_request;
  unsigned_request.method = "GET";
  unsigned_request.path = unsigned_request.raw_path = "/2025-09-09/microvms";
  EXPECT_EQ(Serve(unsigned_request, *policies).response.status, 403);
  EXPECT_EQ(invoked_, std::vector<std::string>{"ListMicrovms"});
  // The entry "" stands for unsigned requests (a harness inspecting the emulator).
  auto with_unsigned = MicrovmsIamPolicies::Parse(
      R"({"": [{"Statement": [{"Effect": "Allow", "Action": "lambda:List*", "Resource": "*"}]}]})",
      "test", "us-east-1", "123456789012");
  ASSERT_TRUE(with_unsigned.ok());
  EXPECT_EQ(Serve(unsigned_request, *with_unsigned).response.status, 200);
  EXPECT_EQ(
      Serve(Signed("AKIDOTHER", "GET", "/2025-09-09/microvms"), *with_unsigned).response.status,
      403);
}

}  // namespace
}  // namespace mvr::emulate::microvms
