// Containers' names: dockerd gets the VPC resolver (docker.dns → --dns), /validate runs the
// container name check (docker.dnsCheck) and refuses a VM whose containers would only have its
// loopback stub, and /resume's network check refuses the same.
#include <gtest/gtest.h>

#include "script_fixture.h"
#include "supervisor/config.h"
#include "supervisor/docker_control.h"
#include "supervisor/network_check.h"

namespace mvr::supervisor {
namespace {

TEST(DockerDns, DockerdGetsTheVpcResolverByDefaultAfterTheDriverFlag) {
  DockerConfig config;
  config.dockerd = {"dockerd", "--data-root", "/var/lib/docker"};
  EXPECT_EQ(DockerdArgv(config, "vfs"), (Argv{"dockerd", "--data-root", "/var/lib/docker",
                                              "--storage-driver=vfs", "--dns=169.254.169.253"}));
  config.dns = {"10.0.0.2", "fd00::2"};
  EXPECT_EQ(DockerdArgv(config, "overlay2"),
            (Argv{"dockerd", "--data-root", "/var/lib/docker", "--storage-driver=overlay2",
                  "--dns=10.0.0.2", "--dns=fd00::2"}));
  config.dns.clear();
  EXPECT_EQ(DockerdArgv(config, "vfs").back(), "--storage-driver=vfs");
}

TEST(DockerDns, ConfigReadsDnsAndDnsCheckAndRefusesAnAddressThatIsNone) {
  auto defaults = ParseSupervisorConfig("{}");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->docker.dns, std::vector<std::string>{"169.254.169.253"});
  EXPECT_TRUE(defaults->docker.dns_check.empty());
  auto set = ParseSupervisorConfig(
      R"({"docker":{"dns":[],"dnsCheck":["/opt/mvr/validate.sh","dns","example.com"]}})");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_TRUE(set->docker.dns.empty());
  EXPECT_EQ(set->docker.dns_check, (Argv{"/opt/mvr/validate.sh", "dns", "example.com"}));
  auto bad = ParseSupervisorConfig(R"({"docker":{"dns":["vpc-resolver"]}})");
  ASSERT_TRUE(bad.ok());
  Status refused = ValidateSupervisorConfig(*bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("docker.dns 'vpc-resolver'"), std::string::npos)
      << refused.message();
}

TEST(DockerDns, OnlyALoopbackStubWithoutDockerDnsLeavesContainersUnresolved) {
  const std::string stub = "nameserver 127.0.0.53\noptions edns0 trust-ad\n";
  Status s = CheckContainerDns(stub, {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("docker.dns"), std::string::npos) << s.message();
  EXPECT_FALSE(CheckContainerDns("nameserver ::1\n", {}).ok());
  EXPECT_TRUE(CheckContainerDns(stub, {"169.254.169.253"}).ok());
  EXPECT_TRUE(CheckContainerDns(stub + "nameserver 10.0.0.2\n", {}).ok());
}

struct DnsCheckFixture {
  DnsCheckFixture() : dir("mvr-docker-dns"), logger(sink, clock) {
    testing::WriteFakeDocker(dir);
    dir.Script("validate", "exit 0");
    dir.Script("dns-check", "echo checked >> \"$D/dns-checked\"; exit \"$(cat \"$D/dns-exit\")\"");
    config.containerd = {dir.file("containerd")};
    config.dockerd = {dir.file("dockerd")};
    config.info = {dir.file("docker-info")};
    config.validate = {dir.file("validate")};
    config.dns_check = {dir.file("dns-check")};
    config.driver_timeout = Duration(3'000);
    config.stop_timeout = Duration(5'000);
    config.poll_interval = Duration(20);
  }
  Result<std::string> Validate() {
    DockerControl docker(config, {{"PATH", "/usr/bin:/bin"}},
                         DockerDeps{processes, Seam{clock, sleeper, random, random, logger}});
    Result<std::string> r = docker.Validate();
    docker.Stop().IgnoreError();
    return r;
  }
  testing::ScriptDir dir;
  DockerConfig config;
  process::PosixProcessRunner processes;
  SystemClock clock;
  RealSleeper sleeper;
  SeededRandom random{1};
  MemorySink sink;
  Logger logger;
};

TEST(DockerDns, ValidateRunsTheNameCheckAndFailsNamingItAndTheSetting) {
  DnsCheckFixture f;
  f.dir.Write("dns-exit", "0");
  Result<std::string> ok = f.Validate();
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(f.dir.Read("dns-checked"), "checked\n");
  f.dir.Write("dns-exit", "1");
  Result<std::string> failed = f.Validate();
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("containers cannot resolve names"), std::string::npos)
      << failed.status().message();
  EXPECT_NE(failed.status().message().find("docker.dnsCheck"), std::string::npos)
      << failed.status().message();
}

}  // namespace
}  // namespace mvr::supervisor
