// deploy/iam/action.json enforced: the Action's real start and stop flows (ephemeral, warm, and
// pooled on a state table) against the in-process MicroVMs service that evaluates the policy
// (--iam-policies' evaluator) for the Action's access key. With the whole policy every scenario
// passes; without any one statement some scenario fails with AccessDenied, so every statement is
// needed (least privilege shown, not claimed).
#include <gtest/gtest.h>

#include "tests/action/iam_policy_fixture.h"

namespace mvr::action {
namespace {

using nlohmann::json;
using testing::ActionPolicyTest;

TEST_F(ActionPolicyTest, EveryScenarioPassesUnderTheWholePolicy) {
  for (const auto& [name, status] : RunScenarios(Policy())) {
    EXPECT_TRUE(status.ok()) << name << ": " << status.ToString();
  }
}

TEST_F(ActionPolicyTest, WithoutAnyOneStatementSomeScenarioIsDenied) {
  const json policy = Policy();
  const std::vector<std::string> sids = mvr::testing::StatementSids(policy);
  ASSERT_EQ(sids.size(), 5u);
  for (size_t i = 0; i < sids.size(); ++i) {
    std::string denied;
    for (const auto& [name, status] : RunScenarios(mvr::testing::WithoutStatement(policy, i))) {
      if (status.code() == Code::kUnauthorized &&
          status.message().find("is not authorized to perform") != std::string::npos) {
        denied += " " + name + " (" + status.message() + ")";
      }
    }
    EXPECT_FALSE(denied.empty()) << "no scenario needs statement " << sids[i];
    std::printf("without %s:%s\n", sids[i].c_str(), denied.c_str());
  }
}

TEST_F(ActionPolicyTest, AnotherImageOrRoleIsDeniedInAwsWords) {
  Enforce(Policy());
  // Given as an ARN, the image is not read first: RunMicrovm is what is refused.
  command_.image_id = "arn:aws:lambda:us-east-1:123456789012:microvm-image:img-2";
  Status other_image = Ephemeral();
  EXPECT_EQ(other_image.code(), Code::kUnauthorized);
  EXPECT_NE(other_image.message().find(
                "User: arn:aws:iam::123456789012:user/" + std::string(testing::kAccessKeyId) +
                " is not authorized to perform: lambda:RunMicrovm on resource: "
                "arn:aws:lambda:us-east-1:123456789012:microvm-image:img-2 because no "
                "identity-based policy allows the lambda:RunMicrovm action"),
            std::string::npos)
      << other_image.ToString();
  EXPECT_TRUE(VmIds().empty());
  command_.image_id = "img-1";
  command_.execution_role_arn = "arn:aws:iam::123456789012:role/admin";
  Status other_role = Ephemeral();
  EXPECT_NE(other_role.message().find("iam:PassRole on resource: "
                                      "arn:aws:iam::123456789012:role/admin"),
            std::string::npos)
      << other_role.ToString();
  EXPECT_TRUE(VmIds().empty());
}

TEST_F(ActionPolicyTest, ANetworkConnectorThePolicyDoesNotNameIsDenied) {
  Enforce(Policy());
  command_.egress_connectors = {"arn:aws:lambda:us-east-1:123456789012:network-connector:other"};
  Status denied = Ephemeral();
  EXPECT_EQ(denied.code(), Code::kUnauthorized);
  EXPECT_NE(denied.message().find("lambda:PassNetworkConnector on resource: "
                                  "arn:aws:lambda:us-east-1:123456789012:network-connector:other"),
            std::string::npos)
      << denied.ToString();
  EXPECT_TRUE(VmIds().empty());
}

}  // namespace
}  // namespace mvr::action
