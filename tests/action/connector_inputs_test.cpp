// The connector inputs and what the start's RunMicrovm carries: AWS's managed connectors of the
// region unless the inputs name others, "none" for no list, a bad entry refused by name; and the
// request gets the image's ARN once StartFlow resolved it.
#include <gtest/gtest.h>

#include "action/inputs.h"
#include "action/start_parts.h"
#include "tests/action/actions_env.h"

namespace mvr::action {
namespace {

using testing::ActionsEnv;

constexpr char kIngress[] =
    "arn:aws:lambda:us-east-1:aws:network-connector:aws-network-connector:ALL_INGRESS";
constexpr char kEgress[] =
    "arn:aws:lambda:us-east-1:aws:network-connector:aws-network-connector:INTERNET_EGRESS";

StartCommand Parse(std::map<std::string, std::string> flags) {
  MapEnvironment env = ActionsEnv();
  env.Set("AWS_REGION", "us-east-1");
  flags.emplace("region", "us-east-1");
  Result<StartCommand> c = ParseStart(InputReader(env, std::move(flags)), "");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : StartCommand{};
}

TEST(ConnectorInputsTest, DefaultsAreAwsManagedConnectorsOfTheRegion) {
  StartCommand c = Parse({});
  EXPECT_EQ(c.ingress_connectors, std::vector<std::string>{kIngress});
  EXPECT_EQ(c.egress_connectors, std::vector<std::string>{kEgress});
}

TEST(ConnectorInputsTest, NamesBecomeArnsNoneSendsNoListAndBadEntriesAreRefusedByName) {
  const std::string vpc = "arn:aws:lambda:us-east-1:123456789012:network-connector:nc-1";
  StartCommand c = Parse({{"ingress-connectors", "none"}, {"egress-connectors", vpc}});
  EXPECT_TRUE(c.ingress_connectors.empty());
  EXPECT_EQ(c.egress_connectors, std::vector<std::string>{vpc});
  c = Parse({{"ingress-connectors", "ALL_INGRESS, SHELL_INGRESS"}});
  ASSERT_EQ(c.ingress_connectors.size(), 2u);
  EXPECT_EQ(c.ingress_connectors[1],
            "arn:aws:lambda:us-east-1:aws:network-connector:aws-network-connector:SHELL_INGRESS");
  MapEnvironment env = ActionsEnv();
  Result<StartCommand> bad =
      ParseStart(InputReader(env, {{"region", "us-east-1"}, {"egress-connectors", "my-vpc"}}), "");
  ASSERT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("input 'egress-connectors': \"my-vpc\" is not a network "
                                        "connector"),
            std::string::npos)
      << bad.status().message();
}

TEST(ConnectorInputsTest, RunMicrovmGetsTheConnectorsAndTheResolvedImageArn) {
  StartCommand c = Parse({{"image-id", "mvr-runner"}});
  aws::RunMicrovmRequest before = internal::RunRequest(c, "tok", "payload", 3600);
  EXPECT_EQ(before.image_identifier, "mvr-runner");
  c.image_arn = "arn:aws:lambda:us-east-1:123456789012:microvm-image:mvr-runner";
  aws::RunMicrovmRequest r = internal::RunRequest(c, "tok", "payload", 3600);
  EXPECT_EQ(r.image_identifier, c.image_arn);
  EXPECT_EQ(r.ingress_network_connectors, std::vector<std::string>{kIngress});
  EXPECT_EQ(r.egress_network_connectors, std::vector<std::string>{kEgress});
}

}  // namespace
}  // namespace mvr::action
