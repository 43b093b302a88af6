// `mvr serve`'s front door end to end (issue 53, items 1, 8 and 13; figures in docs/security.md):
// the status routes on their own listener and gathered once however often they are asked, the
// webhook listener answering a signed delivery beside 300 half-sent connections, and a delivery
// replayed five times taken once.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <vector>

#include "github/webhook_signature.h"
#include "runner_set_e2e_fixture.h"
#include "tests/http/raw_connection.h"

namespace mvr::testbed {
namespace {

class RunnerSetFrontDoor : public RunnerSetEndToEnd {
 protected:
  json Config() override {
    json c = RunnerSetEndToEnd::Config();
    c["janitor"] = {{"intervalSeconds", 0}};  // no sweep spends GitHub calls during a count
    return c;
  }
  int Get(const std::string& url) {
    http::HttpRequest req;
    req.url = url;
    auto res = http_.Send(req);
    return res.ok() ? res->status : -1;
  }
  // The calls the set's PAT has spent of its hourly budget, as the GitHub emulator counts them.
  int64_t GitHubCallsUsed() {
    auto limits = workflow_->GitHub("GET", "/rate_limit");
    EXPECT_TRUE(limits.ok()) << limits.status().ToString();
    return limits.ok() ? (*limits)["resources"]["core"].value("used", int64_t{-1}) : -1;
  }
  int64_t Decisions(const std::string& decision) {
    http::HttpRequest req;
    req.url = StatusUrl() + "/metrics";
    auto res = http_.Send(req);
    if (!res.ok()) return -1;
    const std::string key = "mvr_runnerset_webhook_decisions_total{decision=\"" + decision + "\"} ";
    const size_t at = res->body.find(key);
    return at == std::string::npos ? 0 : std::stoll(res->body.substr(at + key.size()));
  }
};

// Item 1: the webhook listener answers POST /webhook and GET /healthz alone; 200 GET /status on
// the status listener cost GitHub at most 2 calls (they used to cost 200).
TEST_F(RunnerSetFrontDoor, StatusRoutesListenApartAndTwoHundredAsksCostAtMostTwoGitHubCalls) {
  // The first ask of all (nothing cached yet): at least one listing, so the count can see them.
  const int64_t before = GitHubCallsUsed();
  for (int i = 0; i < 200; ++i) ASSERT_EQ(Get(StatusUrl() + "/status"), 200);
  const int64_t spent = GitHubCallsUsed() - before;
  std::printf("GitHub calls made by 200 GET /status: %lld\n", static_cast<long long>(spent));
  EXPECT_GE(spent, 1);
  EXPECT_LE(spent, 2);
  for (const char* path : {"/", "/status", "/timeline", "/metrics"}) {
    EXPECT_EQ(Get(ServeUrl() + path), 404) << path << " on the webhook listener";
    EXPECT_EQ(Get(StatusUrl() + path), 200) << path << " on the status listener";
  }
  EXPECT_EQ(Get(ServeUrl() + "/healthz"), 200);
  EXPECT_EQ(Get(StatusUrl() + "/healthz"), 200);
}

// Item 8: 300 half-sent requests held open (past the listener's 256 connections, from the
// sender's own address) do not keep a signed webhook from its answer.
TEST_F(RunnerSetFrontDoor, ASignedWebhookIsAnsweredBesideThreeHundredHalfSentConnections) {
  std::vector<std::unique_ptr<http::testing::RawConnection>> crowd;
  for (int i = 0; i < 300; ++i) {
    crowd.push_back(std::make_unique<http::testing::RawConnection>(port_));
    ASSERT_TRUE(crowd.back()->connected());
    ASSERT_TRUE(
        crowd.back()->Send("POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                           "Content-Length: 4000\r\nX-GitHub-Event: ping\r\n"));
  }
  const std::string body = R"({"zen":"Keep it logically awesome.","hook_id":1})";
  http::HttpRequest req;
  req.method = "POST";
  req.url = ServeUrl() + "/webhook";
  req.body = body;
  req.headers.Set("Content-Type", "application/json");
  req.headers.Set("X-GitHub-Event", "ping");
  req.headers.Set("X-GitHub-Delivery", "front-door-ping-1");
  req.headers.Set("X-Hub-Signature-256", github::WebhookSignature(Secret(kWebhookSecret), body));
  req.timeout = Duration(10'000);
  const auto start = std::chrono::steady_clock::now();
  auto res = http_.Send(req);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 200) << res->body;
  std::printf("signed webhook answered beside 300 half-sent connections in %lld ms\n",
              static_cast<long long>(took.count()));
  EXPECT_LT(took, std::chrono::seconds(2));
}

// Item 13: GitHub's "Redeliver" (or anyone who saw the delivery) sends the same X-GitHub-Delivery
// again: the set takes it once.
TEST_F(RunnerSetFrontDoor, ADeliveryReplayedFiveTimesIsTakenOnce) {
  ExpectJobRunsOnAFreshVmThatIsThenTerminated();
  auto deliveries = workflow_->GitHub("GET", "/_emulator/deliveries");
  ASSERT_TRUE(deliveries.ok()) << deliveries.status().ToString();
  std::string guid;
  for (const json& d : (*deliveries)["deliveries"]) {
    if (d.value("action", "") == "queued") guid = d.value("guid", "");
  }
  ASSERT_FALSE(guid.empty()) << deliveries->dump();
  for (int i = 0; i < 5; ++i) {
    auto again = workflow_->GitHub("POST", "/_emulator/deliveries/" + guid + "/redeliver");
    ASSERT_TRUE(again.ok()) << again.status().ToString();
  }
  EXPECT_TRUE(Eventually([&] { return Decisions("ignored_duplicate_delivery") == 5; },
                         std::chrono::seconds(15)))
      << Decisions("ignored_duplicate_delivery");
  EXPECT_EQ(Decisions("launch"), 1);
  EXPECT_EQ(CountOperation("RunMicrovm"), 1);
}

// Item 1, the other half: with statusTokenFile the status routes ask for the token; `mvr status`
// sends it.
class RunnerSetFrontDoorToken : public RunnerSetFrontDoor {
 protected:
  static constexpr char kToken[] = "status-token-e2e-5c1d7a90";
  json Config() override {
    json c = RunnerSetFrontDoor::Config();
    {
      std::ofstream f(dir_ + "/status-token");
      f << kToken << "\n";
    }
    c["statusTokenFile"] = dir_ + "/status-token";
    return c;
  }
  int GetWith(const std::string& url, const std::string& authorization) {
    http::HttpRequest req;
    req.url = url;
    if (!authorization.empty()) req.headers.Set("Authorization", authorization);
    auto res = http_.Send(req);
    return res.ok() ? res->status : -1;
  }
};

TEST_F(RunnerSetFrontDoorToken, StatusRoutesAskForTheBearerTokenAndMvrStatusSendsIt) {
  for (const char* path : {"/", "/status", "/timeline", "/metrics"}) {
    EXPECT_EQ(GetWith(StatusUrl() + path, ""), 401) << path;
    EXPECT_EQ(GetWith(StatusUrl() + path, "Bearer wrong-token"), 401) << path;
    EXPECT_EQ(GetWith(StatusUrl() + path, std::string("Bearer ") + kToken), 200) << path;
  }
  EXPECT_EQ(GetWith(StatusUrl() + "/healthz", ""), 200);
  process::ProcessSpec spec;
  spec.argv = {mvr_, "status", "--config", dir_ + "/serve.json"};
  spec.output_path = dir_ + "/status.txt";
  auto pid = processes_.Spawn(spec);
  ASSERT_TRUE(pid.ok());
  auto exited = processes_.Wait(*pid);
  const std::string text = ReadWholeFile(spec.output_path);
  ASSERT_TRUE(exited.ok() && exited->ok()) << text;
  EXPECT_NE(text.find("jobs in flight:"), std::string::npos) << text;
  EXPECT_EQ(text.find(kToken), std::string::npos);
  EXPECT_EQ(ReadWholeFile(dir_ + "/serve.log").find(kToken), std::string::npos);
}

}  // namespace
}  // namespace mvr::testbed
