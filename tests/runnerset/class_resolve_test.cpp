// What a runner set settles about its classes before it launches: a class image given by name is
// resolved once to its ARN, unset connectors become AWS's managed ones of the region, and every
// launch then carries them. Against the MicroVMs model's strict readings (a bare image name
// refused, no ingress without a connector), a launch of an unresolved class fails and a resolved
// one runs.
#include "runnerset/classes/class_resolve.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "platform_fixture.h"

namespace mvr::runnerset::testing {
namespace {

constexpr char kRegion[] = "us-east-1";
constexpr char kImageArn[] = "arn:aws:lambda:us-east-1:123456789012:microvm-image:img-1";
constexpr char kIngress[] =
    "arn:aws:lambda:us-east-1:aws:network-connector:aws-network-connector:ALL_INGRESS";
constexpr char kEgress[] =
    "arn:aws:lambda:us-east-1:aws:network-connector:aws-network-connector:INTERNET_EGRESS";

class ClassResolveTest : public RunnerSetTest {
 protected:
  void Strict() {
    emulate::microvms::InProcessMicrovmsOptions o =
        mvr::testing::InProcessPlatform::DefaultOptions();
    o.model.require_image_arn = true;
    o.model.require_ingress_connector = true;
    platform_.Rebuild(o);
  }
};

TEST_F(ClassResolveTest, ANameBecomesItsArnAndUnsetConnectorsTheManagedOnes) {
  ASSERT_TRUE(ResolveClasses(config_, m_.seam, platform_.vms(), kRegion).ok());
  const RunnerClass& c = config_.classes[0];
  EXPECT_EQ(c.image, "img-1");  // as configured: pool rows and status keep naming it so
  EXPECT_EQ(c.RunImage(), kImageArn);
  EXPECT_EQ(c.ingress_connectors, std::vector<std::string>{kIngress});
  EXPECT_EQ(c.egress_connectors, std::vector<std::string>{kEgress});
  EXPECT_EQ(platform_.Calls("GetMicrovmImage"), 1);
}

TEST_F(ClassResolveTest, ConfiguredConnectorsAreKeptAndManagedNamesExpanded) {
  const std::string vpc = "arn:aws:lambda:us-east-1:123456789012:network-connector:nc-1";
  config_.classes[0].image = kImageArn;
  config_.classes[0].ingress_connectors = std::vector<std::string>{"ALL_INGRESS"};
  config_.classes[0].egress_connectors = std::vector<std::string>{vpc};
  ASSERT_TRUE(ResolveClasses(config_, m_.seam, platform_.vms(), kRegion).ok());
  EXPECT_EQ(config_.classes[0].ingress_connectors, std::vector<std::string>{kIngress});
  EXPECT_EQ(config_.classes[0].egress_connectors, std::vector<std::string>{vpc});
  EXPECT_EQ(platform_.Calls("GetMicrovmImage"), 0) << "an ARN needs no lookup";
}

TEST_F(ClassResolveTest, AnImageThatDoesNotResolveNamesTheClass) {
  config_.classes[0].image = "no-such-image";
  Status s = ResolveClasses(config_, m_.seam, platform_.vms(), kRegion);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("classes[0].image: resolving image \"no-such-image\"", 0), 0u)
      << s.message();
}

TEST_F(ClassResolveTest, UnderTheStrictReadingsOnlyAResolvedClassLaunches) {
  Strict();
  // As the set launched before: the bare name, no connectors.
  const int64_t refused_job = QueueJob();
  LaunchOutcome refused = L().Handle(Intent(refused_job));
  EXPECT_NE(refused.decision, LaunchDecision::kLaunched);
  EXPECT_TRUE(platform_.VmIds().empty());

  ASSERT_TRUE(ResolveClasses(config_, m_.seam, platform_.vms(), kRegion).ok());
  launchers_.clear();
  const int64_t job = QueueJob();
  LaunchOutcome o = L().Handle(Intent(job));
  ASSERT_EQ(o.decision, LaunchDecision::kLaunched) << o.detail;
  const nlohmann::json vm = platform_.microvms->Describe(o.microvm_id).value();
  EXPECT_EQ(vm.value("imageArn", ""), kImageArn);
  EXPECT_EQ(vm.value("ingressNetworkConnectors", nlohmann::json()),
            nlohmann::json::array({kIngress}));
  EXPECT_EQ(vm.value("egressNetworkConnectors", nlohmann::json()),
            nlohmann::json::array({kEgress}));
}

TEST_F(ClassResolveTest, ConnectorsKeyIsParsedAndCheckedByName) {
  const std::string text = R"({"runnerSetId": "demo",
    "github": {"repository": "octo/app", "patFile": "/p", "webhookSecretFile": "/s"},
    "classes": [{"label": "a", "image": "img-1", "ingressConnectors": [],
                 "egressConnectors": ["INTERNET_EGRESS"]},
                {"label": "b", "image": "img-1"}],
    "store": "memory:", "queue": "memory:"})";
  Result<ServeConfig> c = ParseServeConfig(text, "set.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->classes[0].ingress_connectors, std::vector<std::string>{});
  EXPECT_EQ(c->classes[0].egress_connectors, std::vector<std::string>{"INTERNET_EGRESS"});
  EXPECT_FALSE(c->classes[1].ingress_connectors.has_value());
  std::string bad = text;
  bad.replace(bad.find("\"INTERNET_EGRESS\""), 17, "\"vpc-123\"");
  Result<ServeConfig> refused = ParseServeConfig(bad, "set.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("classes[0].egressConnectors: \"vpc-123\" is not a "
                                            "network connector"),
            std::string::npos)
      << refused.status().message();
}

}  // namespace
}  // namespace mvr::runnerset::testing
