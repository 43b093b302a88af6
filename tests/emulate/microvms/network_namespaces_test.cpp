// Namespace mode without root: the `ip` commands NetworkNamespaces runs (through the
// ProcessRunner seam) to set up and remove each instance's namespace and veth pair, the undo after
// a failure part-way through setup, /30 allocation that avoids the host's own networks, the range
// and root checks, and a VmHost that starts, hooks and stops a guest inside its namespace.
#include <gtest/gtest.h>

#include <filesystem>

#include "base/clock.h"
#include "base/logger.h"
#include "emulate/microvms/host/network_namespaces.h"
#include "emulate/microvms/host/vm_host.h"
#include "emulator_harness.h"
#include "support/fake_process_runner.h"

namespace mvr::emulate::microvms {
namespace {

using process::testing::FakeProcessRunner;

namespace fs = std::filesystem;

class NetworkNamespacesTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir("mvr-netns-test"); }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::unique_ptr<NetworkNamespaces> Make(FakeProcessRunner& runner,
                                          NetworkNamespaces::HostNetworks networks = nullptr,
                                          const std::string& range = "10.213.0.0/16") {
    NetworkNamespaces::Options o;
    o.range = range;
    o.scratch_dir = dir_ + "/netns";
    o.host_networks = networks ? networks : [] {
      return std::vector<std::pair<uint32_t, uint32_t>>{{0x7F000001, 0xFF000000}};  // lo only
    };
    auto made = NetworkNamespaces::Create(
        NetworkNamespaces::Deps{Seam{clock_, sleeper_, random_, random_, logger_}, runner}, o);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return made.ok() ? std::move(made).value() : nullptr;
  }

  std::string dir_;
  ManualClock clock_;
  ManualSleeper sleeper_{clock_};
  SeededRandom random_{1};
  MemorySink sink_;
  Logger logger_{sink_, clock_};
};

TEST_F(NetworkNamespacesTest, AcquireCreatesNamespaceVethAndAddressesAndReleaseRemovesThem) {
  FakeProcessRunner runner(FakeProcessRunner::ExitAtOnce());
  auto netns = Make(runner);
  Result<NetworkLease> lease = netns->Acquire("mvm-0123456789abcdef0123");
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  const std::string ns = NetworkNamespaces::NamespaceNameFor("mvm-0123456789abcdef0123");
  EXPECT_EQ(ns.rfind("mvr-", 0), 0u);
  EXPECT_EQ(lease->netns, ns);
  EXPECT_EQ(lease->host_link, ns + "-h");
  EXPECT_LE(lease->host_link.size(), 15u) << "Linux interface names have at most 15 characters";
  EXPECT_EQ(lease->host_address, "10.213.0.1");
  EXPECT_EQ(lease->guest_address, "10.213.0.2");
  EXPECT_EQ(runner.Commands(),
            (std::vector<std::string>{
                "ip netns add " + ns,
                "ip link add " + ns + "-h type veth peer name " + ns + "-g netns " + ns,
                "ip addr add 10.213.0.1/30 dev " + ns + "-h",
                "ip link set " + ns + "-h up",
                "ip -n " + ns + " addr add 10.213.0.2/30 dev " + ns + "-g",
                "ip -n " + ns + " link set " + ns + "-g up",
                "ip -n " + ns + " link set lo up",
            }));
  EXPECT_EQ(NetworkNamespaces::InNamespace(*lease, {"/bin/guest", "--x"}),
            (std::vector<std::string>{"ip", "netns", "exec", ns, "/bin/guest", "--x"}));

  Result<NetworkLease> second = netns->Acquire("mvm-second");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->guest_address, "10.213.0.6");
  EXPECT_NE(second->netns, ns);

  runner.Clear();
  netns->Release(*lease);
  EXPECT_EQ(runner.Commands(),
            (std::vector<std::string>{"ip link del " + ns + "-h", "ip netns del " + ns}));
  // The freed /30 is used again.
  Result<NetworkLease> third = netns->Acquire("mvm-third");
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->guest_address, "10.213.0.2");
  // Command output files do not pile up.
  EXPECT_TRUE(fs::is_empty(dir_ + "/netns"));
}

TEST_F(NetworkNamespacesTest, FailurePartWayThroughSetupUndoesWhatWasMade) {
  FakeProcessRunner runner([](const std::vector<std::string>& argv) {
    FakeProcessRunner::Outcome exit;
    if (argv.size() > 4 && argv[1] == "-n" && argv[3] == "addr") {
      exit.code = 2;
      exit.message = "RTNETLINK answers: Permission denied";
    }
    return exit;
  });
  auto netns = Make(runner);
  Result<NetworkLease> lease = netns->Acquire("mvm-broken");
  ASSERT_FALSE(lease.ok());
  const std::string ns = NetworkNamespaces::NamespaceNameFor("mvm-broken");
  const std::string why = lease.status().message();
  EXPECT_NE(why.find("ip -n " + ns + " addr add 10.213.0.2/30"), std::string::npos) << why;
  EXPECT_NE(why.find("Permission denied"), std::string::npos) << why;
  std::vector<std::string> commands = runner.Commands();
  ASSERT_EQ(commands.size(), 7u);
  EXPECT_EQ(commands[5], "ip link del " + ns + "-h");
  EXPECT_EQ(commands[6], "ip netns del " + ns);
}

TEST_F(NetworkNamespacesTest, FailureOfTheFirstStepLeavesNothingToUndo) {
  int calls = 0;
  FakeProcessRunner runner([&calls](const std::vector<std::string>&) {
    FakeProcessRunner::Outcome exit;
    if (calls++ == 0) exit = {1, "Cannot create namespace file"};
    return exit;
  });
  auto netns = Make(runner);
  Result<NetworkLease> lease = netns->Acquire("mvm-x");
  ASSERT_FALSE(lease.ok());
  EXPECT_NE(lease.status().message().find("Cannot create namespace file"), std::string::npos);
  EXPECT_EQ(runner.Commands().size(), 1u);
  // The slot was given back.
  EXPECT_EQ(netns->Acquire("mvm-y")->guest_address, "10.213.0.2");
}

TEST_F(NetworkNamespacesTest, SlotsOverlappingHostNetworksAreSkipped) {
  FakeProcessRunner runner(FakeProcessRunner::ExitAtOnce());
  auto netns = Make(runner, [] {
    // Someone already uses 10.213.0.0/30 and 10.213.0.4/30.
    return std::vector<std::pair<uint32_t, uint32_t>>{{0x0AD50001, 0xFFFFFFFC},
                                                      {0x0AD50006, 0xFFFFFFFC}};
  });
  EXPECT_EQ(netns->Acquire("mvm-a")->guest_address, "10.213.0.10");

  FakeProcessRunner runner2(FakeProcessRunner::ExitAtOnce());
  auto covered = Make(runner2, [] {
    return std::vector<std::pair<uint32_t, uint32_t>>{{0x0A000001, 0xFF000000}};  // 10/8
  });
  Result<NetworkLease> none = covered->Acquire("mvm-b");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("--netns-range"), std::string::npos);
  EXPECT_TRUE(runner2.Commands().empty());
}

TEST_F(NetworkNamespacesTest, ReleaseAllRemovesEveryLeaseStillHeld) {
  FakeProcessRunner runner(FakeProcessRunner::ExitAtOnce());
  auto netns = Make(runner, nullptr, "192.168.77.0/29");  // room for two /30s
  ASSERT_TRUE(netns->Acquire("mvm-a").ok());
  ASSERT_TRUE(netns->Acquire("mvm-b").ok());
  EXPECT_EQ(netns->Acquire("mvm-c").status().code(), Code::kQuotaExceeded);
  runner.Clear();
  netns->ReleaseAll();
  std::vector<std::string> commands = runner.Commands();
  for (const char* target : {"mvm-a", "mvm-b"}) {
    const std::string ns = NetworkNamespaces::NamespaceNameFor(target);
    EXPECT_NE(std::find(commands.begin(), commands.end(), "ip netns del " + ns), commands.end());
  }
  EXPECT_TRUE(netns->Acquire("mvm-c").ok());
}

TEST(Ipv4RangeTest, ParsesNetworksAndRefusesOthers) {
  Result<Ipv4Range> r = Ipv4Range::Parse("10.213.5.7/16");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(FormatIpv4(r->base), "10.213.0.0");
  EXPECT_EQ(r->Slots(), 16384u);
  for (const char* bad :
       {"10.213.0.0", "10.213.0.0/31", "10.213.0.0/7", "fd00::/64", "10.213.0.0/16x", "ten/16"}) {
    Result<Ipv4Range> refused = Ipv4Range::Parse(bad);
    EXPECT_EQ(refused.status().code(), Code::kInvalidArgument) << bad;
    EXPECT_NE(refused.status().message().find("a.b.c.d/n"), std::string::npos);
  }
}

TEST(NamespaceModeTest, OnlyRootMayAskForIt) {
  EXPECT_TRUE(CheckNamespaceModeAllowed(0).ok());
  Status refused = CheckNamespaceModeAllowed(1000);
  EXPECT_EQ(refused.code(), Code::kInvalidArgument);
  EXPECT_NE(refused.message().find("needs root"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("default --network host"), std::string::npos);
}

}  // namespace
}  // namespace mvr::emulate::microvms
