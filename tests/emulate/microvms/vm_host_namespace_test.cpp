// VmHost in namespace mode, without root: the guest is started through `ip netns exec` in its own
// namespace with the real ports (no MVR_HOOK_PORT / MVR_PORT_* remapping) and the API URL served
// on its veth, hooks go to the image's hook port on the guest's address, ingress reaches any port
// there, and stopping it (or failing part-way through starting it) removes its namespace, its API
// listener and its directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>

#include "base/clock.h"
#include "base/logger.h"
#include "emulate/microvms/host/vm_host.h"
#include "emulator_harness.h"
#include "support/fake_process_runner.h"

namespace mvr::emulate::microvms {
namespace {

using process::testing::FakeProcessRunner;

namespace fs = std::filesystem;

class RecordingHttp final : public http::HttpClient {
 public:
  Result<http::HttpResponse> Send(const http::HttpRequest& request) override {
    std::lock_guard<std::mutex> lock(mu_);
    urls.push_back(request.url);
    return http::HttpResponse::Json(200, "{}");
  }
  std::mutex mu_;
  std::vector<std::string> urls;
};

bool Contains(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

class VmHostNamespaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("mvr-vmhost-netns");
    NetworkNamespaces::Options o;
    o.scratch_dir = dir_ + "/netns";
    o.host_networks = [] { return std::vector<std::pair<uint32_t, uint32_t>>{}; };
    namespaces_ = std::move(NetworkNamespaces::Create(
                                NetworkNamespaces::Deps{
                                    Seam{clock_, sleeper_, random_, random_, logger_}, runner_},
                                o))
                      .value();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::unique_ptr<VmHost> MakeHost(bool api_fails = false) {
    VmHost::Options o;
    o.state_dir = dir_ + "/state";
    o.api_url = "http://127.0.0.1:1";
    o.open_guest_api = [this, api_fails](const std::string& target,
                                         const std::string& address) -> Result<std::string> {
      opened_.push_back(target + "@" + address);
      if (api_fails) return InvalidArgument("cannot bind " + address);
      return "http://" + address + ":4567";
    };
    o.close_guest_api = [this](const std::string& target) { closed_.push_back(target); };
    return std::make_unique<VmHost>(VmHost::Deps{Seam{clock_, sleeper_, random_, random_, logger_},
                                                 http_, runner_, namespaces_.get()},
                                    o);
  }

  static Effect MakeEffect(Effect::Kind kind, Hook hook = Hook::kReady) {
    Effect e;
    e.kind = kind;
    e.target = "mvm-0123456789abcdef0123";
    e.program.argv = {"/bin/guest"};
    e.hook = hook;
    e.hook_port = 9100;
    e.timeout = Duration(1000);
    e.body = Secret("{}");
    return e;
  }

  std::string dir_;
  ManualClock clock_;
  ManualSleeper sleeper_{clock_};
  SeededRandom random_{1};
  MemorySink sink_;
  Logger logger_{sink_, clock_};
  RecordingHttp http_;
  // `ip` commands succeed at once; a guest started with `ip netns exec` keeps running.
  FakeProcessRunner runner_{[](const std::vector<std::string>& argv) {
    FakeProcessRunner::Outcome exit;
    if (argv.size() > 2 && argv[1] == "netns" && argv[2] == "exec") exit.code = -1;
    return exit;
  }};
  std::unique_ptr<NetworkNamespaces> namespaces_;
  std::vector<std::string> opened_, closed_;
};

TEST_F(VmHostNamespaceTest, GuestRunsInItsNamespaceWithTheRealPortsAndIsCleanedUp) {
  auto host = MakeHost();
  const Effect start = MakeEffect(Effect::Kind::kStartProgram);
  const std::string ns = NetworkNamespaces::NamespaceNameFor(start.target);
  ASSERT_TRUE(host->Execute(start).ok);

  std::vector<process::ProcessSpec> specs = runner_.specs();
  const process::ProcessSpec& guest = specs.back();
  EXPECT_EQ(guest.argv, (std::vector<std::string>{"ip", "netns", "exec", ns, "/bin/guest"}));
  EXPECT_EQ(guest.env.count("MVR_HOOK_PORT"), 0u);
  EXPECT_EQ(guest.env.count("MVR_PORT_8080"), 0u);
  EXPECT_EQ(guest.env.at("MVR_VM_DIR"), dir_ + "/state/vms/" + start.target);
  // The platform tells a VM no id: neither does the emulator.
  EXPECT_EQ(guest.env.count("MVR_MICROVM_ID"), 0u);
  EXPECT_EQ(guest.env.at("AWS_ENDPOINT_URL_LAMBDA_MICROVMS"), "http://10.213.0.1:4567");
  EXPECT_EQ(opened_, std::vector<std::string>{start.target + "@10.213.0.1"});
  EXPECT_EQ(host->GuestAuthority(start.target, 8080), "10.213.0.2:8080");
  EXPECT_EQ(host->GuestAuthority(start.target, 3000), "10.213.0.2:3000");

  ASSERT_TRUE(host->Execute(MakeEffect(Effect::Kind::kCallHook, Hook::kRun)).ok);
  EXPECT_EQ(http_.urls,
            std::vector<std::string>{"http://10.213.0.2:9100/aws/lambda-microvms/runtime/v1/run"});

  runner_.Clear();
  ASSERT_TRUE(host->Execute(MakeEffect(Effect::Kind::kStop)).ok);
  EXPECT_TRUE(Contains(runner_.Commands(), "ip link del " + ns + "-h"));
  EXPECT_TRUE(Contains(runner_.Commands(), "ip netns del " + ns));
  EXPECT_EQ(closed_, std::vector<std::string>{start.target});
  EXPECT_FALSE(fs::exists(dir_ + "/state/vms/" + start.target));
  EXPECT_FALSE(host->GuestAuthority(start.target, 8080).has_value());
}

TEST_F(VmHostNamespaceTest, FailureToServeTheApiToTheGuestUndoesTheNamespace) {
  auto host = MakeHost(/*api_fails=*/true);
  const Effect start = MakeEffect(Effect::Kind::kStartProgram);
  const std::string ns = NetworkNamespaces::NamespaceNameFor(start.target);
  EffectOutcome out = host->Execute(start);
  ASSERT_FALSE(out.ok);
  EXPECT_NE(out.reason.find("cannot serve the API to the guest"), std::string::npos) << out.reason;
  std::vector<std::string> commands = runner_.Commands();
  EXPECT_TRUE(Contains(commands, "ip netns add " + ns));
  EXPECT_TRUE(Contains(commands, "ip netns del " + ns));
  for (const std::string& c : commands) {
    EXPECT_EQ(c.find("netns exec"), std::string::npos) << "the guest was started: " << c;
  }
  EXPECT_TRUE(closed_.empty());
  EXPECT_FALSE(fs::exists(dir_ + "/state/vms/" + start.target));
}

TEST_F(VmHostNamespaceTest, LeftoversAtShutdownAreKilledAndTheirNamespacesRemoved) {
  auto host = MakeHost();
  const Effect start = MakeEffect(Effect::Kind::kStartProgram);
  const std::string ns = NetworkNamespaces::NamespaceNameFor(start.target);
  ASSERT_TRUE(host->Execute(start).ok);
  runner_.Clear();
  host->StopLeftovers();
  EXPECT_TRUE(Contains(runner_.Commands(), "ip netns del " + ns));
  EXPECT_EQ(closed_, std::vector<std::string>{start.target});
  EXPECT_FALSE(fs::exists(dir_ + "/state/vms/" + start.target));
}

TEST(EmulatorNamespaceModeTest, ABadRangeFailsStartAndTheEmulatorStillShutsDown) {
  const std::string dir = MakeTempDir("mvr-emu-badrange");
  SystemClock clock;
  RealSleeper sleeper;
  SeededRandom random(1), secure(2);
  MemorySink sink;
  Logger logger(sink, clock, LogLevel::kWarn);
  RecordingHttp http;
  FakeProcessRunner runner(FakeProcessRunner::ExitAtOnce());
  Emulator::Options o;
  o.state_dir = dir;
  o.network = Emulator::Options::Network::kNamespace;
  o.namespace_range = "10.1.0.0/33";
  {
    Emulator emulator(Emulator::Deps{Seam{clock, sleeper, random, secure, logger}, http, runner},
                      o);
    Result<std::string> url = emulator.Start();
    ASSERT_FALSE(url.ok());
    EXPECT_EQ(url.status().code(), Code::kInvalidArgument);
    EXPECT_NE(url.status().message().find("a.b.c.d/n"), std::string::npos);
  }  // the destructor shuts down what Start had made (it once crashed here)
  EXPECT_TRUE(runner.Commands().empty());
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace mvr::emulate::microvms
