// End to end through the HTTP API with real guest processes: hooks in order with the payload,
// suspend really freezes the guest and keeps its directory, the ingress proxy enforces tokens and
// strips x-aws-proxy-* headers, a guest failing /run is terminated, images build from a
// Dockerfile, and every answer fits the service model.
#include <chrono>

#include "aws/signing/sigv4.h"
#include "emulator_harness.h"
#include "raw_http.h"

namespace mvr::emulate::microvms {
namespace {

using nlohmann::json;

const aws::ServiceModel& Model() { return aws::ServiceModel::LambdaMicrovms(); }

class EmulatorProcessTest : public ::testing::Test {
 protected:
  static Emulator::Options Options(const std::string& hook_log, bool fail_run = false,
                                   RunBody run_body = RunBody::kEnvelopeWithId) {
    Emulator::Options o;
    o.model.run_body = run_body;
    std::string command = "MVR_TEST_HOOK_LOG=" + hook_log + " ";
    if (fail_run) command += "MVR_TEST_FAIL_RUN=1 ";
    o.images = {{"guest", command + "exec " + GuestBinary()}};
    o.stop_grace = Duration(2000);
    return o;
  }

  // Waits (real time, bounded) until the guest's counter passes `above`.
  long CounterAbove(EmulatorHarness& h, const std::string& dir, long above) {
    const TimePoint deadline = h.clock().Now() + Duration(20'000);
    long c = GuestCounter(dir);
    while (c <= above && h.clock().Now() < deadline) {
      h.sleeper().Sleep(Duration(20));
      c = GuestCounter(dir);
    }
    return c;
  }
};

TEST_F(EmulatorProcessTest, GuestSeesHooksInOrderAndSuspendFreezesItKeepingItsDisk) {
  ScopedTempDir hook_dir("mvr-hooks");
  const std::string hook_log = hook_dir.path() + "/hooks.log";
  EmulatorHarness h(Options(hook_log));
  auto run = h.Call("POST", "/2025-09-09/microvms",
                    {{"imageIdentifier", "guest"}, {"runHookPayload", "payload-123"}});
  ASSERT_EQ(run.status, 200) << run.body.dump();
  EXPECT_TRUE(Model().ValidateOutput("RunMicrovm", run.body).ok());
  const std::string id = run.body["microvmId"];
  json got = h.WaitForState(id, "RUNNING");
  EXPECT_TRUE(Model().ValidateOutput("GetMicrovm", got).ok());

  const std::string dir = h.state_dir() + "/vms/" + id;
  long before = CounterAbove(h, dir, 5);
  ASSERT_GT(before, 5);
  { std::ofstream(dir + "/marker") << "kept"; }

  ASSERT_EQ(h.Call("POST", "/2025-09-09/microvms/" + id + "/suspend").status, 200);
  h.WaitForState(id, "SUSPENDED");
  const long frozen = GuestCounter(dir);
  h.sleeper().Sleep(Duration(300));  // a running guest would count ~30 times meanwhile
  EXPECT_EQ(GuestCounter(dir), frozen) << "the guest kept counting while SUSPENDED";

  ASSERT_EQ(h.Call("POST", "/2025-09-09/microvms/" + id + "/resume").status, 200);
  h.WaitForState(id, "RUNNING");
  EXPECT_GT(CounterAbove(h, dir, frozen), frozen);
  EXPECT_EQ(ReadText(dir + "/marker"), "kept");

  ASSERT_EQ(h.Call("DELETE", "/2025-09-09/microvms/" + id).status, 200);
  json done = h.WaitForState(id, "TERMINATED");
  EXPECT_TRUE(done.contains("terminatedAt"));
  h.sleeper().Sleep(Duration(200));
  EXPECT_FALSE(std::filesystem::exists(dir)) << "a terminated VM's directory must be removed";

  std::string hooks = ReadText(hook_log);
  size_t run_at = hooks.find("run {");
  size_t suspend_at = hooks.find("suspend ");
  size_t resume_at = hooks.find("resume ");
  size_t terminate_at = hooks.find("terminate ");
  ASSERT_NE(run_at, std::string::npos) << hooks;
  EXPECT_LT(hooks.find("ready "), run_at);
  EXPECT_LT(run_at, suspend_at);
  EXPECT_LT(suspend_at, resume_at);
  EXPECT_LT(resume_at, terminate_at);
  EXPECT_NE(terminate_at, std::string::npos);
  json run_body = json::parse(hooks.substr(run_at + 4, hooks.find('\n', run_at) - run_at - 4));
  EXPECT_EQ(run_body["runHookPayload"], "payload-123");
  EXPECT_EQ(run_body["microvmId"], id);
  EXPECT_EQ(h.RequestLog().find("payload-123"), std::string::npos) << "payload in request log";
}

// The /run body in each form --run-body offers; the default is the payload text itself.
TEST_F(EmulatorProcessTest, RunHookBodyTakesEachConfiguredForm) {
  EXPECT_EQ(emulate::microvms::MicrovmModelOptions().run_body, RunBody::kRaw);
  for (RunBody form : {RunBody::kRaw, RunBody::kEnvelope}) {
    ScopedTempDir hook_dir("mvr-hooks");
    const std::string hook_log = hook_dir.path() + "/hooks.log";
    EmulatorHarness h(Options(hook_log, false, form));
    auto run = h.Call("POST", "/2025-09-09/microvms",
                      {{"imageIdentifier", "guest"}, {"runHookPayload", "payload-456"}});
    ASSERT_EQ(run.status, 200) << run.body.dump();
    const std::string id = run.body["microvmId"];
    h.WaitForState(id, "RUNNING");
    const TimePoint deadline = h.clock().Now() + Duration(10'000);
    while (ReadText(hook_log).find("run ") == std::string::npos && h.clock().Now() < deadline) {
      h.sleeper().Sleep(Duration(20));
    }
    const std::string hooks = ReadText(hook_log);
    const size_t at = hooks.find("run ");
    ASSERT_NE(at, std::string::npos) << hooks;
    const std::string body = hooks.substr(at + 4, hooks.find('\n', at) - at - 4);
    if (form == RunBody::kRaw) {
      EXPECT_EQ(body, "payload-456");
    } else {
      EXPECT_EQ(json::parse(body), (json{{"runHookPayload", "payload-456"}}));
    }
    ASSERT_EQ(h.Call("DELETE", "/2025-09-09/microvms/" + id).status, 200);
    h.WaitForState(id, "TERMINATED");
  }
}

TEST_F(EmulatorProcessTest, IngressProxyEnforcesTokensAndStripsProxyHeaders) {
  ScopedTempDir hook_dir("mvr-hooks");
  const std::string hook_log = hook_dir.path() + "/hooks.log";
  EmulatorHarness h(Options(hook_log));
  auto run = h.Call("POST", "/2025-09-09/microvms", {{"imageIdentifier", "guest"}});
  const std::string id = run.body["microvmId"];
  const std::string endpoint = run.body["endpoint"];
  ASSERT_EQ(endpoint.rfind("http://127.0.0.1:", 0), 0u) << endpoint;
  h.WaitForState(id, "RUNNING");
  auto token =
      h.Call("POST", "/2025-09-09/microvms/" + id + "/auth-token",
             {{"expirationInMinutes", 5}, {"allowedPorts", json::array({{{"port", 8080}}})}});
  ASSERT_EQ(token.status, 200) << token.body.dump();
  EXPECT_TRUE(Model().ValidateOutput("CreateMicrovmAuthToken", token.body).ok());
  const std::string secret = token.body["authToken"]["X-aws-proxy-auth"];

  auto send = [&](const std::string& auth, const std::string& port) {
    http::HttpRequest r;
    r.method = "POST";
    r.url = endpoint + "v1/echo?x=1";
    r.body = "hello";
    if (!auth.empty()) r.headers.Set("X-aws-proxy-auth", auth);
    if (!port.empty()) r.headers.Set("X-aws-proxy-port", port);
    r.headers.Set("X-aws-proxy-extra", "drop me");
    r.headers.Set("X-Keep", "kept");
    Result<http::HttpResponse> res = h.http().Send(r);
    EXPECT_TRUE(res.ok()) << res.status().ToString();
    return res.ok() ? *res : http::HttpResponse();
  };
  http::HttpResponse ok = send(secret, "");
  ASSERT_EQ(ok.status, 200) << ok.body;
  json echo = json::parse(ok.body);
  EXPECT_EQ(echo["path"], "/v1/echo");
  EXPECT_EQ(echo["query"], "x=1");
  EXPECT_EQ(echo["body"], "hello");
  for (const auto& [name, value] : echo["headers"].items()) {
    EXPECT_NE(name.rfind("X-aws-proxy", 0), 0u) << name << " reached the guest";
    EXPECT_NE(name.rfind("x-aws-proxy", 0), 0u) << name << " reached the guest";
  }
  EXPECT_EQ(echo["headers"]["X-Keep"], "kept");
  EXPECT_EQ(send("", "").status, 403);
  EXPECT_EQ(send("mvmtok_forged", "").status, 403);
  EXPECT_EQ(send(secret, "9000").status, 403);
  EXPECT_EQ(h.RequestLog().find(secret), std::string::npos) << "token in request log";
}

TEST_F(EmulatorProcessTest, IngressRefusesTargetsThatAreNotAPathEvenWithAValidToken) {
  ScopedTempDir hook_dir("mvr-hooks");
  EmulatorHarness h(Options(hook_dir.path() + "/hooks.log"));
  auto run = h.Call("POST", "/2025-09-09/microvms", {{"imageIdentifier", "guest"}});
  const std::string id = run.body["microvmId"];
  const std::string endpoint = run.body["endpoint"];
  h.WaitForState(id, "RUNNING");
  auto token =
      h.Call("POST", "/2025-09-09/microvms/" + id + "/auth-token",
             {{"expirationInMinutes", 5}, {"allowedPorts", json::array({{{"port", 8080}}})}});
  ASSERT_EQ(token.status, 200) << token.body.dump();
  const std::string secret = token.body["authToken"]["X-aws-proxy-auth"];
  const int port = std::stoi(endpoint.substr(std::string("http://127.0.0.1:").size()));
  auto request = [&](const std::string& target) {
    return "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-aws-proxy-auth: " + secret +
           "\r\nConnection: close\r\n\r\n";
  };
  // The guest answers an origin-form target: the token and the VM are fine.
  EXPECT_EQ(RawExchange(port, request("/v1/echo")), 200);
  // Another host, another port, userinfo tricks: refused before anything is forwarded.
  for (const char* target : {"http://127.0.0.1:1/x", "@127.0.0.1:1/x", "127.0.0.1:1/x"}) {
    std::string body;
    EXPECT_EQ(RawExchange(port, request(target), &body), 400) << target;
    EXPECT_NE(body.find("must be a path"), std::string::npos) << body;
  }
  std::string body;
  EXPECT_EQ(RawExchange(port, request("/v1/\xff\xfe"), &body), 400);
  EXPECT_FALSE(json::parse(body, nullptr, false).is_discarded()) << body;
  EXPECT_EQ(h.RequestLog().find(secret), std::string::npos) << "token in request log";
}

TEST_F(EmulatorProcessTest, GuestFailingRunIsTerminatedWithStateReason) {
  ScopedTempDir hook_dir("mvr-hooks");
  const std::string hook_log = hook_dir.path() + "/hooks.log";
  EmulatorHarness h(Options(hook_log, /*fail_run=*/true));
  auto run = h.Call("POST", "/2025-09-09/microvms", {{"imageIdentifier", "guest"}});
  ASSERT_EQ(run.status, 200);
  json done = h.WaitForState(run.body["microvmId"], "TERMINATED");
  EXPECT_NE(done.value("stateReason", "").find("/run hook failed"), std::string::npos)
      << done.dump();
  EXPECT_TRUE(Model().ValidateOutput("GetMicrovm", done).ok());
}

TEST_F(EmulatorProcessTest, WireErrorsUseTheModelShapes) {
  Emulator::Options o;
  o.images = {{"guest", "exec " + GuestBinary()}};
  o.model.rate_limits["RunMicrovm"] = RateLimit{0.01, 1};
  EmulatorHarness h(o);
  auto invalid = h.Call("POST", "/2025-09-09/microvms",
                        {{"imageIdentifier", "guest"}, {"runHookPayload", std::string(5000, 'p')}});
  EXPECT_EQ(invalid.status, 400);
  EXPECT_EQ(invalid.headers.Get("x-amzn-ErrorType"), "ValidationException");
  EXPECT_NE(invalid.body["message"].get<std::string>().find("runHookPayload"), std::string::npos);
  auto idle =
      h.Call("POST", "/2025-09-09/microvms",
             {{"imageIdentifier", "guest"}, {"idlePolicy", {{"maxIdleDurationSeconds", 60}}}});
  EXPECT_EQ(idle.status, 400);
  auto missing = h.Call("GET", "/2025-09-09/microvms/mvm-unknown");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.headers.Get("x-amzn-ErrorType"), "ResourceNotFoundException");
  auto list = h.Call("GET", "/2025-09-09/microvms?maxResults=51");
  EXPECT_EQ(list.status, 400);
  ASSERT_EQ(h.Call("POST", "/2025-09-09/microvms", {{"imageIdentifier", "guest"}}).status, 200);
  auto throttled = h.Call("POST", "/2025-09-09/microvms", {{"imageIdentifier", "guest"}});
  EXPECT_EQ(throttled.status, 429);
  EXPECT_EQ(throttled.headers.Get("x-amzn-ErrorType"), "ThrottlingException");
  EXPECT_TRUE(throttled.headers.Has("Retry-After"));
  EXPECT_EQ(h.Call("GET", "/2025-09-09/nothing-here").status, 404);
}

TEST_F(EmulatorProcessTest, MemoryQuotaAnswers402) {
  Emulator::Options o;
  o.images = {{"guest", "exec " + GuestBinary()}};
  o.model.memory_quota_mib = 2048;
  EmulatorHarness h(o);
  ASSERT_EQ(h.Call("POST", "/2025-09-09/microvms", {{"imageIdentifier", "guest"}}).status, 200);
  auto over = h.Call("POST", "/2025-09-09/microvms", {{"imageIdentifier", "guest"}});
  EXPECT_EQ(over.status, 402);
  EXPECT_EQ(over.headers.Get("x-amzn-ErrorType"), "ServiceQuotaExceededException");
}

TEST_F(EmulatorProcessTest, ImageBuiltFromADockerfileDirectoryRuns) {
  EmulatorHarness h(Emulator::Options{});
  const std::string app = h.work() + "/app";
  json create = GuestImageRequest(
      "fromdir", app, "MVR_TEST_HOOK_LOG=" + h.work() + "/hooks.log",
      {{"port", 9000},
       {"microvmImageHooks", {{"ready", "ENABLED"}, {"readyTimeoutInSeconds", 30}}},
       {"microvmHooks", {{"run", "ENABLED"}}}});
  auto created = h.Call("POST", "/2025-09-09/microvm-images", create);
  ASSERT_EQ(created.status, 201) << created.body.dump();
  EXPECT_TRUE(Model().ValidateOutput("CreateMicrovmImage", created.body).ok());
  json version;
  const TimePoint deadline = h.clock().Now() + Duration(30'000);
  while (h.clock().Now() < deadline) {
    version = h.Call("GET", "/2025-09-09/microvm-images/fromdir/versions/1").body;
    if (version.value("state", "") == "SUCCESSFUL" || version.value("state", "") == "FAILED") break;
    h.sleeper().Sleep(Duration(50));
  }
  ASSERT_EQ(version["state"], "SUCCESSFUL") << version.dump();
  EXPECT_EQ(version["status"], "ACTIVE");
  EXPECT_TRUE(Model().ValidateOutput("GetMicrovmImageVersion", version).ok());
  auto run = h.Call("POST", "/2025-09-09/microvms", {{"imageIdentifier", "fromdir"}});
  ASSERT_EQ(run.status, 200);
  h.WaitForState(run.body["microvmId"], "RUNNING");
  // The /run hook was called (with an empty body: the payload, raw, is empty).
  EXPECT_NE(ReadText(h.work() + "/hooks.log").find("run "), std::string::npos);
}

}  // namespace
}  // namespace mvr::emulate::microvms

namespace mvr::emulate::microvms {
namespace {

TEST(EmulatorSigV4Test, WithKeysConfiguredOnlySignedRequestsPass) {
  Emulator::Options o;
  o.sigv4_keys = {{"AKIDMVRTEST", "mvr-test-signing-secret"}};
  EmulatorHarness h(o);
  EXPECT_EQ(h.Call("GET", "/2025-09-09/microvms").status, 403);
  auto send = [&](const std::string& secret) {
    http::HttpRequest r;
    r.method = "GET";
    r.url = h.url() + "/2025-09-09/microvms?maxResults=5";
    aws::AwsCredentials creds;
    creds.access_key_id = "AKIDMVRTEST";
    creds.secret_access_key = Secret(secret);
    EXPECT_TRUE(
        aws::SignRequest(r, creds, aws::SigningScope{"us-east-1", "lambda"}, h.clock().Now()).ok());
    return h.http().Send(r).value_or(http::HttpResponse());
  };
  http::HttpResponse good = send("mvr-test-signing-secret");
  EXPECT_EQ(good.status, 200) << good.body;
  http::HttpResponse bad = send("another-secret");
  EXPECT_EQ(bad.status, 403);
  EXPECT_EQ(bad.headers.Get("x-amzn-ErrorType"), "AccessDeniedException");
  EXPECT_EQ(bad.body.find("mvr-test-signing-secret"), std::string::npos);
}

}  // namespace
}  // namespace mvr::emulate::microvms
