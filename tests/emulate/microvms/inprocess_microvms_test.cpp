// The in-process MicroVMs service: the real client's requests reach the model through the
// rest-json front (signatures checked), VMs move only as the injected clock does, and the ingress
// enforces the model's tokens before the guest sees a request.
#include "emulate/microvms/front/inprocess_microvms.h"

#include <gtest/gtest.h>

#include "aws/microvms/microvms_client.h"
#include "aws/signing/credentials.h"
#include "support/manual_seam.h"

namespace mvr::emulate::microvms {
namespace {

class EchoGuest final : public InProcessGuest {
 public:
  http::HttpResponse Serve(const std::string& id, int port,
                           const http::ServerRequest& request) override {
    served.push_back(id + ":" + std::to_string(port) + " " + request.path);
    for (const auto& [name, value] : request.headers) {
      if (name.rfind("X-aws-proxy-", 0) == 0) proxy_headers_seen = true;
    }
    return http::HttpResponse::Json(200, "{}");
  }
  std::vector<std::string> served;
  bool proxy_headers_seen = false;
};

class InProcessMicrovmsTest : public ::testing::Test {
 protected:
  InProcessMicrovmsOptions Options(const std::string& secret) {
    InProcessMicrovmsOptions o;
    o.model.latency.run.low = Duration(10'000);
    o.front.sigv4_keys = {{"AKIDTEST", secret}};
    return o;
  }
  aws::MicrovmsClient Client(InProcessMicrovms& service, aws::CredentialsProvider& creds) {
    aws::MicrovmsClientOptions o;
    o.endpoint = {service.api_url(), "us-east-1", "lambda", "test"};
    return aws::MicrovmsClient(o, aws::MicrovmsClientDeps{service.api(), creds, seam_.seam});
  }

  mvr::testing::ManualSeam seam_;
  EchoGuest guest_;
  aws::StaticCredentialsProvider creds_{
      aws::AwsCredentials{"AKIDTEST", Secret("s3cret"), Secret(), std::nullopt, "test"}};
};

TEST_F(InProcessMicrovmsTest, VmBootsOnlyAsTheInjectedClockMoves) {
  InProcessMicrovms service(seam_.seam, Options("s3cret"), &guest_);
  aws::MicrovmsClient client = Client(service, creds_);
  aws::RunMicrovmRequest run;
  run.image_identifier = "img-1";
  Result<aws::Microvm> vm = client.RunMicrovm(run);
  ASSERT_TRUE(vm.ok()) << vm.status().ToString();
  EXPECT_EQ(client.GetMicrovm(vm->microvm_id)->state, aws::MicrovmState::kPending);
  ASSERT_TRUE(service.NextDeadline().has_value());
  seam_.clock.Advance(*service.NextDeadline() - seam_.clock.Now());
  EXPECT_EQ(client.GetMicrovm(vm->microvm_id)->state, aws::MicrovmState::kRunning);
  ASSERT_EQ(service.calls().size(), 3u);
  EXPECT_EQ(service.calls()[0].operation, "RunMicrovm");
  EXPECT_EQ(service.calls()[0].status, 200);
}

TEST_F(InProcessMicrovmsTest, WrongSignatureIsRefusedBeforeTheModel) {
  InProcessMicrovms service(seam_.seam, Options("another-secret"), &guest_);
  aws::MicrovmsClient client = Client(service, creds_);
  aws::RunMicrovmRequest run;
  run.image_identifier = "img-1";
  Result<aws::Microvm> vm = client.RunMicrovm(run);
  ASSERT_FALSE(vm.ok());
  EXPECT_EQ(vm.status().code(), Code::kUnauthorized);
  Result<nlohmann::json> list = service.WithModel(
      [](MicrovmModel& model) { return model.Invoke("ListMicrovms", nlohmann::json::object()); });
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE((*list)["items"].empty());
}

TEST_F(InProcessMicrovmsTest, IngressNeedsTheVmsTokenForThatPortAndStripsProxyHeaders) {
  InProcessMicrovms service(seam_.seam, Options("s3cret"), &guest_);
  aws::MicrovmsClient client = Client(service, creds_);
  aws::RunMicrovmRequest run;
  run.image_identifier = "img-1";
  const aws::Microvm vm = client.RunMicrovm(run).value();
  seam_.clock.Advance(std::chrono::seconds(10));  // booted
  aws::CreateMicrovmAuthTokenRequest token_request;
  token_request.microvm_identifier = vm.microvm_id;
  aws::PortSpecification control;
  control.port = 8080;
  token_request.allowed_ports = {control};
  const Secret proxy_auth = client.CreateMicrovmAuthToken(token_request).value().ProxyAuth();

  auto send = [&](const std::string& auth, const std::string& port) {
    http::HttpRequest r;
    r.url = vm.endpoint + "v1/status";
    if (!auth.empty()) r.headers.Set("X-aws-proxy-auth", auth);
    r.headers.Set("X-aws-proxy-port", port);
    return service.ingress().Send(r).value().status;
  };
  EXPECT_EQ(send("", "8080"), 403);
  EXPECT_EQ(send("not-the-token", "8080"), 403);
  EXPECT_EQ(send(proxy_auth.Reveal(), "9000"), 403);
  EXPECT_TRUE(guest_.served.empty());
  EXPECT_EQ(send(proxy_auth.Reveal(), "8080"), 200);
  EXPECT_EQ(guest_.served, std::vector<std::string>{vm.microvm_id + ":8080 /v1/status"});
  EXPECT_FALSE(guest_.proxy_headers_seen);
}

}  // namespace
}  // namespace mvr::emulate::microvms
