// DeliverRunnerStart over a scripted HTTP seam: what reaches the VM's ingress (control port,
// proxy token, requestId, microvmId, the JIT in the body only), retries that resend the very same
// request, final errors mapped from the supervisor's answers, and no secret in any error.
#include "fleet/control_delivery.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <vector>

#include "tests/fleet/fakes.h"

namespace mvr::fleet {
namespace {

using ::testing::_;
using ::testing::Invoke;
using testing::MockHttp;

const char kJit[] = "JITFIXTURE-delivery-0123456789abcdef";
const char kProxyToken[] = "PROXYTOKENFIXTURE-delivery";
const char kNonce[] = "0a1b2c3d4e5f60718293a4b5c6d7e8f9";

http::HttpResponse Answer(int status, const std::string& message = "") {
  http::HttpResponse res;
  res.status = status;
  if (!message.empty()) {
    res.body = nlohmann::json{{"error", "x"}, {"message", message}}.dump();
  }
  return res;
}

class ControlDeliveryTest : public ::testing::Test {
 protected:
  // The HTTP seam answers these in turn and records each request it was sent.
  void Script(std::vector<Result<http::HttpResponse>> answers) {
    EXPECT_CALL(http_, Send(_))
        .Times(static_cast<int>(answers.size()))
        .WillRepeatedly(Invoke([this, answers](const http::HttpRequest& req) {
          sent_.push_back(req);
          return answers[sent_.size() - 1];
        }));
  }
  Status Deliver() {
    RunnerStartDelivery d{"https://mvm-1.example.test",
                          Secret(kProxyToken),
                          "req-1",
                          "mvm-1",
                          Secret(kJit),
                          Secret(nonce_)};
    return DeliverRunnerStart(http_, seam_, d, clock_.Now() + std::chrono::seconds(120));
  }
  void ExpectNoSecret(const Status& s) {
    EXPECT_EQ(s.message().find(kJit), std::string::npos) << s.message();
    EXPECT_EQ(s.message().find(kProxyToken), std::string::npos) << s.message();
    EXPECT_EQ(s.message().find(kNonce), std::string::npos) << s.message();
  }

  std::string nonce_ = kNonce;

  testing::ManualSeam manual_;
  ManualClock& clock_ = manual_.clock;
  MemorySink& sink_ = manual_.sink;
  const Seam& seam_ = manual_.seam;
  ::testing::StrictMock<MockHttp> http_;
  std::vector<http::HttpRequest> sent_;
};

TEST_F(ControlDeliveryTest, PostsTheRunnerStartToTheControlPortThroughIngress) {
  Script({Answer(202)});
  ASSERT_TRUE(Deliver().ok());
  const http::HttpRequest& req = sent_.at(0);
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.url, "https://mvm-1.example.test/v1/runner/start");
  EXPECT_EQ(req.headers.GetOr("X-aws-proxy-port", ""), "8080");
  EXPECT_EQ(req.headers.GetOr("X-aws-proxy-auth", ""), kProxyToken);
  nlohmann::json body = nlohmann::json::parse(req.body);
  EXPECT_EQ(body["requestId"], "req-1");
  EXPECT_EQ(body["microvmId"], "mvm-1");
  EXPECT_EQ(body["jit"], kJit);
  EXPECT_EQ(body["nonce"], kNonce);
  EXPECT_EQ(req.url.find(kJit), std::string::npos);
  EXPECT_EQ(req.url.find(kNonce), std::string::npos);
}

// A VM launched without a nonce (by an older launcher) gets a body without one.
TEST_F(ControlDeliveryTest, SendsNoNonceMemberWhenTheVmHasNone) {
  nonce_.clear();
  Script({Answer(202)});
  ASSERT_TRUE(Deliver().ok());
  EXPECT_FALSE(nlohmann::json::parse(sent_.at(0).body).contains("nonce"));
}

TEST_F(ControlDeliveryTest, RetriesTransportErrors5xxAnd429WithTheSameRequest) {
  Script({Result<http::HttpResponse>(Transient("connection refused")), Answer(503, "booting"),
          Answer(429), Answer(200)});
  ASSERT_TRUE(Deliver().ok());
  ASSERT_EQ(sent_.size(), 4u);
  for (const http::HttpRequest& req : sent_) {
    EXPECT_EQ(req.body, sent_[0].body) << "a retry changed the request (its requestId)";
    EXPECT_EQ(req.url, sent_[0].url);
  }
}

TEST_F(ControlDeliveryTest, SupervisorRefusalsAreFinalAndNamed) {
  struct Case {
    int status;
    Code code;
  };
  for (Case c : {Case{409, Code::kConflict}, Case{403, Code::kUnauthorized},
                 Case{400, Code::kInvalidArgument}, Case{413, Code::kInvalidArgument}}) {
    sent_.clear();
    ::testing::Mock::VerifyAndClearExpectations(&http_);
    Script({Answer(c.status, "runner already started")});
    Status s = Deliver();
    EXPECT_EQ(s.code(), c.code) << c.status;
    EXPECT_EQ(sent_.size(), 1u) << c.status;
    EXPECT_NE(s.message().find("runner already started"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("mvm-1"), std::string::npos) << s.message();
    ExpectNoSecret(s);
  }
}

TEST_F(ControlDeliveryTest, GivesUpOnlyAtTheDeadlineWithoutLeakingTheRequest) {
  int sent = 0;
  EXPECT_CALL(http_, Send(_)).WillRepeatedly(Invoke([&](const http::HttpRequest&) {
    ++sent;
    return Result<http::HttpResponse>(Answer(502));
  }));
  const TimePoint start = clock_.Now();
  Status s = Deliver();
  EXPECT_EQ(s.code(), Code::kTransient);
  EXPECT_GE(clock_.Now() - start, std::chrono::seconds(110)) << "gave up long before the deadline";
  EXPECT_GT(sent, 10);
  ExpectNoSecret(s);
  EXPECT_EQ(sink_.Joined().find(kJit), std::string::npos);
}

http::HttpResponse Refusal(int status, const std::string& error, const std::string& state) {
  http::HttpResponse res;
  res.status = status;
  res.body = nlohmann::json{{"error", error}, {"message", "refused"}, {"state", state}}.dump();
  return res;
}

// GetMicrovm said RUNNING, but the /run or /resume hook has not finished in the VM yet.
TEST_F(ControlDeliveryTest, NotYetAnswersAreRetriedUntilTheHookHasRun) {
  Script({Result<http::HttpResponse>(Transient("connection refused")),
          Refusal(403, "wrong_microvm", "SNAPSHOTTED"), Refusal(409, "wrong_state", "SUSPENDED"),
          Refusal(409, "wrong_state", "RESUMING"), Answer(202)});
  Status s = Deliver();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(sent_.size(), 5u);
}

// The supervisor runs inside the MicroVM, which the job controls: an answer whose members have
// other types than documented is classified by its status code, never thrown on.
TEST_F(ControlDeliveryTest, MistypedSupervisorAnswerIsAnErrorNotAnException) {
  http::HttpResponse res;
  res.status = 409;
  res.body = R"({"error": 5, "message": ["x"], "state": {"s": 1}})";
  Script({res});
  Status s = Deliver();
  EXPECT_EQ(s.code(), Code::kConflict) << s.ToString();
  EXPECT_NE(s.message().find("HTTP 409"), std::string::npos) << s.message();
}

TEST_F(ControlDeliveryTest, DefiniteRefusalsAreNotRetried) {
  struct Case {
    int status;
    const char* error;
    const char* state;
    Code code;
  };
  for (Case c : {Case{409, "busy", "RUNNING", Code::kConflict},
                 Case{409, "wrong_state", "FAILED", Code::kConflict},
                 Case{403, "wrong_microvm", "IDLE", Code::kUnauthorized},
                 Case{403, "wrong_nonce", "IDLE", Code::kUnauthorized},
                 Case{409, "wrong_mode", "RUNNING", Code::kConflict}}) {
    sent_.clear();
    ::testing::Mock::VerifyAndClearExpectations(&http_);
    Script({Refusal(c.status, c.error, c.state)});
    Status s = Deliver();
    EXPECT_EQ(s.code(), c.code) << c.error;
    ExpectNoSecret(s);
    EXPECT_EQ(s.error_type() == kServerBusy, std::string(c.error) == "busy") << c.error;
    // Only a refused nonce is told apart: a launcher may try a previous key's nonce.
    EXPECT_EQ(s.error_type() == kWrongNonce, std::string(c.error) == "wrong_nonce") << c.error;
  }
}

}  // namespace
}  // namespace mvr::fleet
