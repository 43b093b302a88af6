// The model's strict readings (docs/emulate-microvms.md, "Strict readings"): with
// requireImageArn, RunMicrovm and ListMicrovms refuse a bare image name and take the ARN; with
// requireIngressConnector, a VM launched without an ingress connector (or with only NO_INGRESS)
// takes no ingress traffic while one launched with ALL_INGRESS does. Off, the model behaves as
// before. The knobs read from the emulator's --config JSON too.
#include "model_fixture.h"

namespace mvr::emulate::microvms {
namespace {

using nlohmann::json;

constexpr char kImageArn[] = "arn:aws:lambda:us-east-1:123456789012:microvm-image:img";
constexpr char kAllIngress[] =
    "arn:aws:lambda:us-east-1:aws:network-connector:aws-network-connector:ALL_INGRESS";
constexpr char kNoIngress[] =
    "arn:aws:lambda:us-east-1:aws:network-connector:aws-network-connector:NO_INGRESS";

class ModelStrictTest : public ModelFixture {
 protected:
  void Strict() {
    MicrovmModelOptions o;
    ASSERT_TRUE(o.ApplyJson({{"requireImageArn", true}, {"requireIngressConnector", true}}).ok());
    Rebuild(o);
  }
  Secret Token(const std::string& id) {
    auto out = Call("CreateMicrovmAuthToken", {{"microvmIdentifier", id},
                                               {"expirationInMinutes", 10},
                                               {"allowedPorts", json::array({{{"port", 8080}}})}});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? Secret((*out)["authToken"]["X-aws-proxy-auth"].get<std::string>()) : Secret();
  }
};

TEST_F(ModelStrictTest, BareImageNameIsRefusedInRunAndListButTheArnWorks) {
  Strict();
  auto run = Call("RunMicrovm", {{"imageIdentifier", "img"}});
  ASSERT_EQ(run.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(run.status().error_type(), "ValidationException");
  EXPECT_NE(run.status().message().find("is not an image ARN; give " + std::string(kImageArn)),
            std::string::npos)
      << run.status().message();
  auto list = Call("ListMicrovms", {{"imageIdentifier", "img"}});
  EXPECT_EQ(list.status().code(), Code::kInvalidArgument);
  auto by_arn = Call("RunMicrovm", {{"imageIdentifier", kImageArn}});
  ASSERT_TRUE(by_arn.ok()) << by_arn.status().ToString();
  auto listed = Call("ListMicrovms", {{"imageIdentifier", kImageArn}});
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ((*listed)["items"].size(), 1u);
  // Reading an image by name stays allowed: that is how a name becomes an ARN.
  EXPECT_TRUE(Call("GetMicrovmImage", {{"imageIdentifier", "img"}}).ok());
}

TEST_F(ModelStrictTest, AVmWithoutAnIngressConnectorTakesNoTraffic) {
  Strict();
  const std::string none = RunningVm({{"imageIdentifier", kImageArn}});
  const std::string blocked =
      RunningVm({{"imageIdentifier", kImageArn}, {"ingressNetworkConnectors", {kNoIngress}}});
  const std::string open =
      RunningVm({{"imageIdentifier", kImageArn}, {"ingressNetworkConnectors", {kAllIngress}}});
  for (const std::string& id : {none, blocked}) {
    Secret token = Token(id);
    auto grant = model_->AuthorizeIngress(id, &token, 8080);
    ASSERT_EQ(grant.status().code(), Code::kUnauthorized) << id;
    EXPECT_NE(grant.status().message().find("without an ingress network connector"),
              std::string::npos)
        << grant.status().message();
  }
  Secret token = Token(open);
  EXPECT_TRUE(model_->AuthorizeIngress(open, &token, 8080).ok());
  // The lists are echoed as given.
  auto got = Call("GetMicrovm", {{"microvmIdentifier", open}});
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["ingressNetworkConnectors"], json::array({kAllIngress}));
}

TEST_F(ModelStrictTest, OffByDefault) {
  const std::string id = RunningVm();  // a bare name, no connector
  Secret token = Token(id);
  EXPECT_TRUE(model_->AuthorizeIngress(id, &token, 8080).ok());
  MicrovmModelOptions o;
  EXPECT_EQ(o.ApplyJson({{"requireImageArn", "yes"}}).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace mvr::emulate::microvms
