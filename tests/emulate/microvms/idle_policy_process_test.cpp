// The idle policy with a real guest process, through the emulator's HTTP API and ingress proxy:
// with idle timers scaled 60 times (maxIdleDurationSeconds 60 → 1 s) an untouched VM suspends and
// its guest is really frozen, a request with a valid token through the proxy resumes it and is
// answered by the guest, and steady traffic keeps it RUNNING past the idle threshold.
#include "emulator_harness.h"

namespace mvr::emulate::microvms {
namespace {

using nlohmann::json;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(IdlePolicyProcessTest, IdleGuestFreezesIngressWakesItAndTrafficKeepsItRunning) {
  ScopedTempDir hook_dir("mvr-hooks");
  const std::string hook_log = hook_dir.path() + "/hooks.log";
  Emulator::Options o;
  o.images = {{"guest", "MVR_TEST_HOOK_LOG=" + hook_log + " exec " + GuestBinary()}};
  o.model.idle_time_scale = 60;
  o.stop_grace = Duration(2000);
  EmulatorHarness h(o);

  auto run = h.Call("POST", "/2025-09-09/microvms",
                    {{"imageIdentifier", "guest"},
                     {"idlePolicy",
                      {{"maxIdleDurationSeconds", 60},
                       {"suspendedDurationSeconds", 600},
                       {"autoResumeEnabled", true}}}});
  ASSERT_EQ(run.status, 200) << run.body.dump();
  const std::string id = run.body["microvmId"];
  const std::string endpoint = run.body["endpoint"];
  const std::string dir = h.state_dir() + "/vms/" + id;
  h.WaitForState(id, "RUNNING");
  auto token =
      h.Call("POST", "/2025-09-09/microvms/" + id + "/auth-token",
             {{"expirationInMinutes", 5}, {"allowedPorts", json::array({{{"port", 8080}}})}});
  ASSERT_EQ(token.status, 200) << token.body.dump();
  const std::string secret = token.body["authToken"]["X-aws-proxy-auth"];
  auto request = [&](const std::string& path) {
    http::HttpRequest r;
    r.method = "GET";
    r.url = endpoint + path;
    r.headers.Set("X-aws-proxy-auth", secret);
    return h.http().Send(r).value_or(http::HttpResponse());
  };

  // No ingress traffic: suspended after 1 s, and the guest no longer runs.
  json suspended = h.WaitForState(id, "SUSPENDED");
  EXPECT_EQ(suspended["idlePolicy"]["maxIdleDurationSeconds"], 60);
  EXPECT_EQ(Count(ReadText(hook_log), "suspend "), 1u);
  const long frozen = GuestCounter(dir);
  h.sleeper().Sleep(Duration(300));  // a running guest counts ~30 times meanwhile
  EXPECT_EQ(GuestCounter(dir), frozen) << "the guest kept counting while SUSPENDED";

  // A request through the proxy resumes it and the guest itself answers.
  http::HttpResponse woke = request("v1/echo?wake=1");
  ASSERT_EQ(woke.status, 200) << woke.body;
  EXPECT_EQ(json::parse(woke.body)["query"], "wake=1");
  EXPECT_EQ(h.Call("GET", "/2025-09-09/microvms/" + id).body["state"], "RUNNING");
  const std::string hooks = ReadText(hook_log);
  EXPECT_LT(hooks.find("suspend "), hooks.find("resume ")) << hooks;
  const TimePoint count_deadline = h.clock().Now() + Duration(10'000);
  while (GuestCounter(dir) <= frozen && h.clock().Now() < count_deadline) {
    h.sleeper().Sleep(Duration(20));
  }
  EXPECT_GT(GuestCounter(dir), frozen) << "the guest did not run again after the wake-up request";

  // Traffic every 200 ms for 1.8 s keeps it RUNNING past the 1 s idle threshold.
  const TimePoint busy_until = h.clock().Now() + Duration(1'800);
  int answered = 0;
  while (h.clock().Now() < busy_until) {
    if (request("v1/echo").status == 200) ++answered;
    h.sleeper().Sleep(Duration(200));
  }
  EXPECT_GE(answered, 5);
  EXPECT_EQ(h.Call("GET", "/2025-09-09/microvms/" + id).body["state"], "RUNNING");
  EXPECT_EQ(Count(ReadText(hook_log), "suspend "), 1u) << "suspended despite traffic";
  EXPECT_EQ(h.RequestLog().find(secret), std::string::npos) << "token in request log";
}

}  // namespace
}  // namespace mvr::emulate::microvms
