// Namespace mode with real namespaces (root only; skipped otherwise): a guest serving the real
// ports (hooks on 9000, ingress on 8080) in its own network namespace gets /run, answers ingress
// through the proxy, calls the emulator's API from inside the namespace (GetMicrovm, then
// TerminateMicrovm on itself), and once it is TERMINATED no namespace or veth named for it is
// left. Image builds (and their /validate test instance) run in namespaces of their own too.
// Traffic stays on loopback and on the namespaces this test's emulator creates.
#include <unistd.h>

#include "emulate/microvms/host/network_namespaces.h"
#include "emulator_harness.h"

namespace mvr::emulate::microvms {
namespace {

using nlohmann::json;

class NetworkNamespaceProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0)
      GTEST_SKIP() << "namespace mode needs root (running as " << geteuid() << ")";
    work_ = MakeTempDir("mvr-netns-e2e");
    auto [status, output] = Run({"ip", "netns", "list"});
    if (status != 0) GTEST_SKIP() << "`ip netns` is not available here: " << output;
  }
  void TearDown() override {
    // Whatever happened above, nothing named for this test's instances may stay behind.
    for (const std::string& target : targets_) {
      if (Run({"ip", "link", "show", NetworkNamespaces::HostLinkFor(target)}).first == 0) {
        ADD_FAILURE() << "veth left for " << target;
        Run({"ip", "link", "del", NetworkNamespaces::HostLinkFor(target)});
      }
      if (NamespaceExists(target)) {
        ADD_FAILURE() << "namespace left for " << target;
        Run({"ip", "netns", "del", NetworkNamespaces::NamespaceNameFor(target)});
      }
    }
    std::error_code ec;
    if (!work_.empty()) std::filesystem::remove_all(work_, ec);
  }

  // Each test has a range of its own: ctest may run them side by side.
  static Emulator::Options Options(const std::string& hook_log, const std::string& range) {
    Emulator::Options o;
    o.network = Emulator::Options::Network::kNamespace;
    o.namespace_range = range;
    o.images = {{"guest", "MVR_TEST_HOOK_LOG=" + hook_log + " exec " + GuestBinary()}};
    o.stop_grace = Duration(2000);
    return o;
  }

  // Runs a command to completion (bounded); its exit code and output.
  std::pair<int, std::string> Run(std::vector<std::string> argv) {
    process::ProcessSpec spec = HostProcessSpec(std::move(argv));
    spec.output_path = work_ + "/cmd-" + std::to_string(++runs_) + ".out";
    Result<int> pid = processes_.Spawn(spec);
    if (!pid.ok()) return {-1, pid.status().ToString()};
    const TimePoint deadline = clock_.Now() + Duration(15'000);
    std::optional<process::ExitStatus> status;
    while (!(status = process::PollExit(processes_, *pid)) && clock_.Now() < deadline) {
      sleeper_.Sleep(Duration(10));
    }
    if (!status) {
      processes_.Signal(*pid, SIGKILL).IgnoreError();
      while (!process::PollExit(processes_, *pid)) sleeper_.Sleep(Duration(10));
    }
    const int code = status && !status->signaled ? status->code : -1;
    return {code, ReadText(spec.output_path)};
  }

  bool NamespaceExists(const std::string& target) {
    std::istringstream lines(Run({"ip", "netns", "list"}).second);
    std::string name;
    while (lines >> name) {
      if (name == NetworkNamespaces::NamespaceNameFor(target)) return true;
      lines.ignore(1 << 20, '\n');  // "(id: N)" follows some names
    }
    return false;
  }

  std::string work_;
  std::vector<std::string> targets_;  // instances whose names TearDown checks
  SystemClock clock_;
  RealSleeper sleeper_;
  process::PosixProcessRunner processes_;
  int runs_ = 0;
};

TEST_F(NetworkNamespaceProcessTest, GuestServesRealPortsInItsNamespaceAndCallsTheApiFromThere) {
  const std::string hook_log = work_ + "/hooks.log";
  EmulatorHarness h(Options(hook_log, "10.213.200.0/24"));
  auto run = h.Call("POST", "/2025-09-09/microvms",
                    {{"imageIdentifier", "guest"}, {"runHookPayload", "in-a-namespace"}});
  ASSERT_EQ(run.status, 200) << run.body.dump();
  const std::string id = run.body["microvmId"];
  targets_.push_back(id);
  json got = h.WaitForState(id, "RUNNING");
  ASSERT_EQ(got["state"], "RUNNING") << got.dump();
  // The emulator's default /run body is the payload itself, as the platform documents it.
  EXPECT_NE(ReadText(hook_log).find("run in-a-namespace\n"), std::string::npos)
      << ReadText(hook_log);
  EXPECT_TRUE(NamespaceExists(id));
  EXPECT_EQ(Run({"ip", "link", "show", NetworkNamespaces::HostLinkFor(id)}).first, 0);

  auto token =
      h.Call("POST", "/2025-09-09/microvms/" + id + "/auth-token",
             {{"expirationInMinutes", 5}, {"allowedPorts", json::array({{{"port", 8080}}})}});
  ASSERT_EQ(token.status, 200) << token.body.dump();
  const std::string endpoint = run.body["endpoint"];
  auto ingress = [&](const std::string& method, const std::string& path) {
    http::HttpRequest r;
    r.method = method;
    r.url = endpoint + path;
    r.headers.Set("X-aws-proxy-auth", token.body["authToken"]["X-aws-proxy-auth"]);
    Result<http::HttpResponse> res = h.http().Send(r);
    EXPECT_TRUE(res.ok()) << res.status().ToString();
    return res.value_or(http::HttpResponse());
  };

  http::HttpResponse echo = ingress("GET", "v1/echo");
  ASSERT_EQ(echo.status, 200) << echo.body;
  EXPECT_EQ(json::parse(echo.body)["port"], 8080) << "the guest must serve the real port";

  http::HttpResponse self = ingress("GET", "v1/self");  // guest → emulator API over the veth
  ASSERT_EQ(self.status, 200) << self.body;
  json seen = json::parse(self.body);
  EXPECT_EQ(seen["microvmId"], id);
  EXPECT_EQ(seen["state"], "RUNNING");

  http::HttpResponse terminate = ingress("POST", "v1/terminate-self");
  EXPECT_EQ(terminate.status, 200) << terminate.body;
  json done = h.WaitForState(id, "TERMINATED");
  EXPECT_EQ(done.value("stateReason", ""), "") << "terminated by its own request, not a failure";
  EXPECT_NE(ReadText(hook_log).find("terminate "), std::string::npos);
  EXPECT_FALSE(NamespaceExists(id));
  EXPECT_NE(Run({"ip", "link", "show", NetworkNamespaces::HostLinkFor(id)}).first, 0);
}

TEST_F(NetworkNamespaceProcessTest, ImageBuildAndItsValidateInstanceUseNamespacesAndLeaveNone) {
  EmulatorHarness h(Options(work_ + "/hooks.log", "10.213.201.0/24"));
  const std::string app = h.work() + "/app";
  json create = GuestImageRequest(
      "netapp", app, "MVR_TEST_HOOK_PIDS=" + work_ + "/pids",
      {{"port", 9000},
       {"microvmImageHooks",
        {{"ready", "ENABLED"}, {"validate", "ENABLED"}, {"validateTimeoutInSeconds", 20}}}});
  ASSERT_EQ(h.Call("POST", "/2025-09-09/microvm-images", create).status, 201);
  auto builds = h.Call("GET", "/2025-09-09/microvm-images/netapp/versions/1/builds");
  ASSERT_EQ(builds.status, 200);
  const std::string build = "build-" + builds.body["items"][0]["buildId"].get<std::string>();
  targets_ = {build, ValidationInstanceOf(build)};
  json version;
  const TimePoint deadline = h.clock().Now() + Duration(30'000);
  while (h.clock().Now() < deadline) {
    version = h.Call("GET", "/2025-09-09/microvm-images/netapp/versions/1").body;
    if (version.value("state", "") == "SUCCESSFUL" || version.value("state", "") == "FAILED") break;
    h.sleeper().Sleep(Duration(50));
  }
  ASSERT_EQ(version["state"], "SUCCESSFUL") << version.dump();
  EXPECT_NE(ReadText(work_ + "/pids").find("validate "), std::string::npos);
  for (const std::string& target : targets_) EXPECT_FALSE(NamespaceExists(target)) << target;
}

}  // namespace
}  // namespace mvr::emulate::microvms
