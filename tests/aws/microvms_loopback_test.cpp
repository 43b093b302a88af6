// The MicroVMs client over real HTTP on loopback: a stub server that verifies SigV4 and routes by
// the service model sees the operation, labels and query the client meant, and a wrong secret is
// refused as AccessDeniedException → Unauthorized.
#include <gtest/gtest.h>

#include <mutex>

#include "aws/fake_http.h"
#include "aws/microvms/microvms_client.h"
#include "aws/signing/sigv4.h"
#include "http/curl_client.h"
#include "http/server.h"

namespace mvr::aws {
namespace {

using nlohmann::json;

struct Seen {
  std::string operation;
  std::map<std::string, std::string> labels;
  std::vector<std::pair<std::string, std::string>> params;
  json body;
};

class MicrovmsLoopbackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<http::HttpServer>(
        [this](const http::ServerRequest& request) { return Handle(request); });
    auto port = server_->Start("127.0.0.1", 0);
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    options_.endpoint.url = "http://127.0.0.1:" + std::to_string(*port);
    options_.endpoint.region = "us-east-1";
    options_.endpoint.signing_name = "lambda";
  }
  // Closing the client's pooled keep-alive connections first lets the server stop at once.
  void TearDown() override {
    curl_.reset();
    server_->Stop();
  }

  http::HttpResponse Handle(const http::ServerRequest& request) {
    const auto& model = ServiceModel::LambdaMicrovms();
    Status verified = VerifyRequest(
        request,
        [](const std::string& key) -> std::optional<std::string> {
          if (key != "AKIDTESTKEY") return std::nullopt;
          return testing::TestCredentials().secret_access_key.Reveal();
        },
        clock_.Now());
    if (!verified.ok()) {
      auto r = http::HttpResponse::Json(403, json{{"message", "signature rejected"}}.dump());
      r.headers.Set("x-amzn-ErrorType", "AccessDeniedException");
      return r;
    }
    Seen seen;
    const auto* op = model.Route(request.method, request.raw_path, &seen.labels);
    if (op == nullptr) return http::HttpResponse::Json(404, "{}");
    seen.operation = op->name;
    seen.params = request.params;
    seen.body = request.body.empty() ? json::object() : json::parse(request.body, nullptr, false);
    {
      std::lock_guard<std::mutex> lock(mu_);
      seen_.push_back(seen);
    }
    if (op->name == "GetMicrovm") {
      return http::HttpResponse::Json(200, json{{"microvmId", seen.labels["microvmIdentifier"]},
                                                {"state", "RUNNING"},
                                                {"endpoint", "http://127.0.0.1:1/"},
                                                {"startedAt", 1767225600}}
                                               .dump());
    }
    if (op->name == "ListMicrovms") return http::HttpResponse::Json(200, R"({"items":[]})");
    return http::HttpResponse::Json(op->success_code, "{}");
  }

  std::vector<Seen> seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

  ManualClock clock_;
  SeededRandom random_{3};
  ManualSleeper sleeper_{clock_};
  MemorySink sink_;
  Logger logger_{sink_, clock_};
  std::unique_ptr<http::CurlHttpClient> curl_ = std::make_unique<http::CurlHttpClient>();
  MicrovmsClientOptions options_;
  std::unique_ptr<http::HttpServer> server_;
  std::mutex mu_;
  std::vector<Seen> seen_;
};

TEST_F(MicrovmsLoopbackTest, SignedRequestsRouteWithTheirLabelsAndQuery) {
  StaticCredentialsProvider creds(testing::TestCredentials());
  MicrovmsClient client(
      options_,
      MicrovmsClientDeps{*curl_, creds, Seam{clock_, sleeper_, random_, random_, logger_}});

  auto vm = client.GetMicrovm("mvm/1 x");
  ASSERT_TRUE(vm.ok()) << vm.status().ToString();
  EXPECT_EQ(vm->microvm_id, "mvm/1 x");
  EXPECT_EQ(vm->state, MicrovmState::kRunning);

  ListMicrovmsRequest list;
  list.next_token = "a+b/c=";
  list.max_results = 50;
  ASSERT_TRUE(client.ListMicrovms(list).ok());

  ASSERT_TRUE(client.TerminateMicrovm("mvm-2").ok());

  auto all = seen();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].operation, "GetMicrovm");
  EXPECT_EQ(all[0].labels["microvmIdentifier"], "mvm/1 x");
  EXPECT_EQ(all[1].operation, "ListMicrovms");
  std::map<std::string, std::string> params(all[1].params.begin(), all[1].params.end());
  EXPECT_EQ(params["nextToken"], "a+b/c=");
  EXPECT_EQ(params["maxResults"], "50");
  EXPECT_EQ(all[2].operation, "TerminateMicrovm");
  EXPECT_EQ(all[2].labels["microvmIdentifier"], "mvm-2");
}

TEST_F(MicrovmsLoopbackTest, WrongSecretIsUnauthorized) {
  AwsCredentials wrong = testing::TestCredentials();
  wrong.secret_access_key = Secret("not-the-secret");
  StaticCredentialsProvider creds(wrong);
  MicrovmsClient client(
      options_,
      MicrovmsClientDeps{*curl_, creds, Seam{clock_, sleeper_, random_, random_, logger_}});
  Status status = client.SuspendMicrovm("mvm-1");
  EXPECT_EQ(status.code(), Code::kUnauthorized) << status.ToString();
  EXPECT_EQ(status.error_type(), "AccessDeniedException");
  EXPECT_TRUE(seen().empty());
}

TEST_F(MicrovmsLoopbackTest, RefusedConnectionIsTransient) {
  server_->Stop();
  StaticCredentialsProvider creds(testing::TestCredentials());
  MicrovmsClient client(
      options_,
      MicrovmsClientDeps{*curl_, creds, Seam{clock_, sleeper_, random_, random_, logger_}});
  Status status = client.GetMicrovm("mvm-1").status();
  EXPECT_EQ(status.code(), Code::kTransient) << status.ToString();
}

}  // namespace
}  // namespace mvr::aws
