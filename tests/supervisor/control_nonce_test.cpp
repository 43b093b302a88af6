// The control nonce (issue 29 §5): the platform does not tell a VM its id, so a control request is
// accepted when it carries the nonce of the VM's launch (from the run-hook payload), and names
// this VM only where the VM knows its id. Through the supervisor's own HTTP edges, /run in each
// body form the platform might use.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "supervisor/run_payload.h"
#include "supervisor/servers.h"
#include "supervisor_harness.h"

namespace mvr::supervisor {
namespace {

using nlohmann::json;
using testing::Harness;
using testing::Hook;
using testing::kVm;

constexpr char kNonce[] = "5f0c1e2d3c4b5a69788796a5b4c3d2e1";
constexpr char kOtherNonce[] = "00000000000000000000000000000000";

std::string Payload(const Secret& nonce = Secret(kNonce)) {
  return *EncodeRunPayload(RunPayload::Warm(nonce));
}

std::string Start(const std::string& request_id, const std::string& nonce,
                  const std::string& vm = kVm) {
  json body = {{"requestId", request_id}, {"microvmId", vm}, {"jit", "jit-" + request_id}};
  if (!nonce.empty()) body["nonce"] = nonce;
  return body.dump();
}

http::HttpResponse Send(Harness& h, const std::string& body) {
  return HandleRunnerStart(*h.supervisor, body, 16 * 1024);
}

std::string ErrorOf(const http::HttpResponse& r) {
  return json::parse(r.body, nullptr, false).value("error", "");
}

TEST(ControlNonce, RawRunBodyThenARequestWithTheNonceIsAcceptedWhateverIdItNames) {
  Harness h;
  ASSERT_EQ(Hook(h, "run", Payload()).status, 200);  // raw: the payload text is the body
  EXPECT_EQ(h.supervisor->Snapshot().microvm_id, "");
  auto r = Send(h, Start("r1", kNonce, "mvm-whatever-the-launcher-calls-it"));
  EXPECT_EQ(r.status, 202) << r.body;
}

TEST(ControlNonce, AMissingOrWrongNonceIsRefusedWith403WrongNonceAndNotRecorded) {
  for (const std::string& run_body :
       {Payload(), json{{"runHookPayload", Payload()}}.dump(),
        json{{"microvmId", kVm}, {"runHookPayload", Payload()}}.dump()}) {
    Harness h;
    ASSERT_EQ(Hook(h, "run", run_body).status, 200) << run_body;
    for (const std::string& nonce : {std::string(), std::string(kOtherNonce),
                                     std::string(kNonce).substr(0, 31), std::string("x")}) {
      auto r = Send(h, Start("r1", nonce));
      EXPECT_EQ(r.status, 403) << run_body << " / " << nonce;
      EXPECT_EQ(ErrorOf(r), "wrong_nonce") << r.body;
      EXPECT_EQ(r.body.find(kNonce), std::string::npos) << "a refusal echoed the nonce";
    }
    // Refusals leave no record: the same requestId with the nonce is a first request.
    auto ok = Send(h, Start("r1", kNonce));
    EXPECT_EQ(ok.status, 202) << ok.body;
  }
}

TEST(ControlNonce, AVmThatKnowsItsIdAlsoRefusesARequestForAnotherIdEvenWithTheNonce) {
  Harness h;
  ASSERT_EQ(Hook(h, "run", json{{"microvmId", kVm}, {"runHookPayload", Payload()}}.dump()).status,
            200);
  auto r = Send(h, Start("r1", kNonce, "mvm-other"));
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(ErrorOf(r), "wrong_microvm") << r.body;
  EXPECT_EQ(Send(h, Start("r1", kNonce)).status, 202);
}

TEST(ControlNonce, AVmWithNeitherNonceNorIdRefusesEveryRequestSayingWhy) {
  Harness h;
  ASSERT_EQ(Hook(h, "run", *EncodeRunPayload(RunPayload::Warm())).status, 200);
  for (const std::string& nonce : {std::string(), std::string(kNonce)}) {
    auto r = Send(h, Start("r1", nonce));
    EXPECT_EQ(r.status, 403);
    EXPECT_EQ(ErrorOf(r), "wrong_nonce");
    EXPECT_NE(r.body.find("accepts no control request"), std::string::npos) << r.body;
  }
}

// A VM launched by an older launcher (no nonce) still takes requests that name it, where it is
// told its id.
TEST(ControlNonce, WithoutANonceAVmThatKnowsItsIdChecksTheIdAlone) {
  Harness h;
  ASSERT_EQ(Hook(h, "run",
                 json{{"microvmId", kVm}, {"runHookPayload", *EncodeRunPayload(RunPayload::Warm())}}
                     .dump())
                .status,
            200);
  EXPECT_EQ(ErrorOf(Send(h, Start("r1", "", "mvm-other"))), "wrong_microvm");
  EXPECT_EQ(Send(h, Start("r1", "")).status, 202);
}

TEST(ControlNonce, ARepeatedRequestIdWithTheNonceIsStillIdempotent) {
  Harness h;
  ASSERT_EQ(Hook(h, "run", Payload()).status, 200);
  ASSERT_EQ(Send(h, Start("r1", kNonce)).status, 202);
  auto again = Send(h, Start("r1", kNonce));
  EXPECT_EQ(again.status, 200) << again.body;
  EXPECT_TRUE(json::parse(again.body).value("duplicate", false));
  EXPECT_EQ(h.processes.WaitForSpawn("runner", 1) > 0, true);
}

TEST(ControlNonce, ANonceThatIsNotAStringIsMalformed) {
  Harness h;
  ASSERT_EQ(Hook(h, "run", Payload()).status, 200);
  json body = json::parse(Start("r1", ""));
  body["nonce"] = 12;
  EXPECT_EQ(Send(h, body.dump()).status, 400);
}

TEST(ControlNonce, TheNonceReachesNoLogStatusOrAnswer) {
  Harness h;
  ASSERT_EQ(Hook(h, "run", Payload()).status, 200);
  std::string answers;
  answers += Send(h, Start("r1", kOtherNonce)).body;
  answers += Send(h, Start("r1", kNonce)).body;
  answers += Send(h, Start("r1", kNonce)).body;
  answers += HandleStatus(*h.supervisor).body;
  EXPECT_EQ(answers.find(kNonce), std::string::npos) << answers;
  const std::string logs = h.sink.Joined();
  EXPECT_FALSE(logs.empty());
  EXPECT_EQ(logs.find(kNonce), std::string::npos) << logs;
}

}  // namespace
}  // namespace mvr::supervisor
