// What every RunMicrovm carries: AWS's managed connectors by ARN unless configured, connector
// lists checked as the service model bounds them, the request's JSON shaped as service-2.json
// says, and a configured image name resolved once to its ARN.
#include "fleet/network_connectors.h"

#include <gtest/gtest.h>

#include "aws/microvms/microvms_json.h"
#include "aws/microvms/service_model.h"
#include "fleet/image_arn.h"
#include "tests/fleet/fakes.h"

namespace mvr::fleet {
namespace {

using ::testing::Return;

constexpr char kIngress[] =
    "arn:aws:lambda:us-east-1:aws:network-connector:aws-network-connector:ALL_INGRESS";
constexpr char kEgress[] =
    "arn:aws:lambda:us-east-1:aws:network-connector:aws-network-connector:INTERNET_EGRESS";

TEST(NetworkConnectorsTest, DefaultsAreAwsManagedConnectorsOfTheRegion) {
  NetworkConnectors d = DefaultConnectors("us-east-1");
  EXPECT_EQ(d.ingress, std::vector<std::string>{kIngress});
  EXPECT_EQ(d.egress, std::vector<std::string>{kEgress});
  EXPECT_EQ(ManagedConnectorArn("cn-north-1", "ALL_INGRESS"),
            "arn:aws-cn:lambda:cn-north-1:aws:network-connector:aws-network-connector:ALL_INGRESS");
  EXPECT_EQ(PartitionOfRegion("us-gov-west-1"), "aws-us-gov");
}

TEST(NetworkConnectorsTest, ManagedNamesBecomeArnsAndArnsStayAsGiven) {
  const std::string vpc = "arn:aws:lambda:us-east-1:123456789012:network-connector:nc-1";
  Result<std::vector<std::string>> r =
      ResolveConnectors({"INTERNET_EGRESS", vpc}, "us-east-1", "input 'egress-connectors'");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (std::vector<std::string>{kEgress, vpc}));
}

TEST(NetworkConnectorsTest, RefusesWhatIsNotAConnectorNamingTheSetting) {
  Result<std::vector<std::string>> r =
      ResolveConnectors({"my-vpc"}, "us-east-1", "classes[0].egressConnectors");
  ASSERT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("classes[0].egressConnectors: \"my-vpc\" is not a network "
                                      "connector"),
            std::string::npos)
      << r.status().message();
  EXPECT_FALSE(CheckConnectors({"arn:aws:lambda:us-east-1:1:microvm-image:x"}, "x").ok());
  EXPECT_FALSE(CheckConnectors(std::vector<std::string>(11, "ALL_INGRESS"), "x").ok());
  EXPECT_TRUE(CheckConnectors(std::vector<std::string>(10, "ALL_INGRESS"), "x").ok());
  EXPECT_EQ(ResolveConnectors({"ALL_INGRESS"}, "", "x").status().code(), Code::kInvalidArgument);
}

TEST(NetworkConnectorsTest, NoIngressConnectorLetsNothingIn) {
  EXPECT_FALSE(AllowsIngress({}));
  EXPECT_FALSE(AllowsIngress({ManagedConnectorArn("us-east-1", "NO_INGRESS")}));
  EXPECT_TRUE(AllowsIngress({kIngress}));
}

TEST(NetworkConnectorsTest, RunMicrovmCarriesBothListsShapedAsTheServiceModelSays) {
  aws::RunMicrovmRequest r;
  r.image_identifier = "arn:aws:lambda:us-east-1:123456789012:microvm-image:img-1";
  r.client_token = "tok";
  ApplyConnectors(DefaultConnectors("us-east-1"), r);
  const nlohmann::json in = aws::RunMicrovmInput(r);
  EXPECT_EQ(in.at("ingressNetworkConnectors"), nlohmann::json::array({kIngress}));
  EXPECT_EQ(in.at("egressNetworkConnectors"), nlohmann::json::array({kEgress}));
  Status valid = aws::ServiceModel::LambdaMicrovms().ValidateInput("RunMicrovm", in);
  EXPECT_TRUE(valid.ok()) << valid.ToString();
}

TEST(ImageArnTest, ANameIsResolvedOnceThroughGetMicrovmImage) {
  testing::ManualSeam manual;
  ::testing::StrictMock<testing::MockMicrovms> vms;
  aws::MicrovmImage image;
  image.name = "mvr-runner";
  image.image_arn = "arn:aws:lambda:us-east-1:123456789012:microvm-image:mvr-runner";
  EXPECT_CALL(vms, GetMicrovmImage("mvr-runner")).WillOnce(Return(image));
  Result<std::string> arn =
      ResolveImageArn(manual.seam, vms, "mvr-runner", manual.clock.Now() + Duration(10'000));
  ASSERT_TRUE(arn.ok()) << arn.status().ToString();
  EXPECT_EQ(*arn, image.image_arn);
  // An ARN is used as it is: no call.
  EXPECT_EQ(*ResolveImageArn(manual.seam, vms, image.image_arn, manual.clock.Now()),
            image.image_arn);
}

TEST(ImageArnTest, AnUnknownNameSaysWhatToDo) {
  testing::ManualSeam manual;
  ::testing::StrictMock<testing::MockMicrovms> vms;
  EXPECT_CALL(vms, GetMicrovmImage("nope")).WillOnce(Return(NotFound("image nope not found")));
  Result<std::string> arn = ResolveImageArn(manual.seam, vms, "nope", manual.clock.Now());
  ASSERT_EQ(arn.status().code(), Code::kNotFound);
  EXPECT_NE(arn.status().message().find("give the image's ARN"), std::string::npos)
      << arn.status().message();
}

}  // namespace
}  // namespace mvr::fleet
