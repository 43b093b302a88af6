// End to end against the MicroVMs emulator's strict readings (docs/emulate-microvms.md, "Strict
// readings"), which every e2e suite runs with: RunMicrovm and ListMicrovms refuse a bare image
// name, and a VM launched without an ingress network connector takes no traffic. Through
// action.yml's own steps: a start given an image *name* launches from the image's ARN, with AWS's
// managed connectors named; a warm start told to send no ingress connector fails at delivery and
// leaves nothing behind. Label: e2e (about 10 s).
#include "tests/e2e/action_e2e_fixture.h"

namespace mvr::testbed {
namespace {

constexpr char kAllIngress[] =
    "arn:aws:lambda:us-east-1:aws:network-connector:aws-network-connector:ALL_INGRESS";
constexpr char kInternetEgress[] =
    "arn:aws:lambda:us-east-1:aws:network-connector:aws-network-connector:INTERNET_EGRESS";

class StrictPlatformEndToEnd : public ActionEndToEnd {
 protected:
  http::HttpResponse Api(const std::string& method, const std::string& path_and_query,
                         const std::string& body = "") {
    http::HttpRequest req;
    req.method = method;
    req.url = stack_->microvms_url() + path_and_query;
    req.body = body;
    if (!body.empty()) req.headers.Set("Content-Type", "application/json");
    auto res = http_.Send(req);
    EXPECT_TRUE(res.ok()) << res.status().ToString();
    return res.ok() ? *res : http::HttpResponse{};
  }
};

TEST_F(StrictPlatformEndToEnd, ABareImageNameIsRefusedButStartLaunchesFromTheImageArn) {
  // The emulator, as the stricter reading of AWS's guide has it, refuses the bare name...
  http::HttpResponse run =
      Api("POST", "/2025-09-09/microvms", json{{"imageIdentifier", kCaptureImage}}.dump());
  EXPECT_EQ(run.status, 400) << run.body;
  EXPECT_NE(run.body.find("is not an image ARN"), std::string::npos) << run.body;
  http::HttpResponse list =
      Api("GET", std::string("/2025-09-09/microvms?imageIdentifier=") + kCaptureImage);
  EXPECT_EQ(list.status, 400) << list.body;

  // ...and a start configured with that name resolves it once and runs from the ARN.
  const std::string log = ReadWholeFile(stack_->request_log());
  const size_t before = static_cast<size_t>(std::count(log.begin(), log.end(), '\n'));
  StepResult start = Step("start", "strict-name", {{"IMAGE_ID", kCaptureImage}});
  ASSERT_TRUE(start.ok()) << start.Describe();
  Result<json> vm = workflow_->GetMicrovm(start.outputs["microvm-id"]);
  ASSERT_TRUE(vm.ok()) << vm.status().ToString();
  EXPECT_EQ(vm->value("imageArn", ""),
            std::string("arn:aws:lambda:us-east-1:123456789012:microvm-image:") + kCaptureImage);
  EXPECT_EQ(vm->value("ingressNetworkConnectors", json()), json::array({kAllIngress}));
  EXPECT_EQ(vm->value("egressNetworkConnectors", json()), json::array({kInternetEgress}));
  std::vector<std::string> ops = OperationsSince(before);
  auto get_image = std::find(ops.begin(), ops.end(), "GetMicrovmImage");
  EXPECT_LT(get_image - ops.begin(), std::find(ops.begin(), ops.end(), "RunMicrovm") - ops.begin())
      << "the name was not resolved before the launch";
  StepResult stop = Step(
      "stop", "strict-name",
      {{"MICROVM_ID", start.outputs["microvm-id"]}, {"RUNNER_ID", start.outputs["runner-id"]}});
  ASSERT_TRUE(stop.ok()) << stop.Describe();
  ExpectNothingLeft();
}

TEST_F(StrictPlatformEndToEnd, WarmStartWithoutAnIngressConnectorFailsAndWithTheDefaultRuns) {
  // No ingress connector: the VM boots, but its endpoint takes no traffic, so the runner's
  // delivery to the control port fails; the start says so and cleans up.
  StepResult refused = Step(
      "start", "strict-no-ingress",
      {{"SERVER", "strict"}, {"INGRESS_CONNECTORS", "none"}, {"STARTUP_TIMEOUT_SECONDS", "60"}});
  ASSERT_FALSE(refused.ok()) << "a warm start without an ingress connector succeeded";
  EXPECT_NE(refused.error.find("ingress network connector"), std::string::npos) << refused.error;
  ExpectNothingLeft();

  // The default names AWS's ALL_INGRESS connector: the same start runs.
  StepResult start = Step("start", "strict-default", {{"SERVER", "strict"}});
  ASSERT_TRUE(start.ok()) << start.Describe();
  JobResult job = Job(start.outputs["label"], {"echo warm"});
  EXPECT_EQ(job.conclusion, "success");
  StepResult done = Step("stop", "strict-teardown", {{"MICROVM_ID", start.outputs["microvm-id"]}});
  ASSERT_TRUE(done.ok()) << done.Describe();
  ExpectNothingLeft();
}

}  // namespace
}  // namespace mvr::testbed
