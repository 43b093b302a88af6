// Docker inside a QEMU guest as the platform runs it (label vm, deep tier: each test boots a
// guest under software emulation). The platform runs the image's application as a container in
// the VM, blocks outbound UDP and gives the VM a local stub resolver:
//  - an image without additionalOsCapabilities ["ALL"] gets a container's capabilities, and the
//    supervisor's dockerd cannot start (with ALL, the tests after it run containers);
//  - a container resolves names through the VPC resolver (169.254.169.253) that the supervisor
//    gives dockerd (docker.dns), and resolves none without it: Docker drops the VM's loopback stub
//    and falls back to public resolvers, which the blocked UDP cannot reach.
// The guests' resolver answers only the emulator's --vm-dns-record names; no query leaves the
// guest (docs/emulate-microvms.md).
#include <regex>

#include "action_e2e_fixture.h"
#include "base/files.h"
#include "vm_support.h"

namespace mvr::testbed {
namespace {

constexpr char kName[] = "registry.test";
constexpr char kAddress[] = "192.0.2.10";

// A job's steps that import a one-file image (the guest's static busybox, for its nslookup) and
// look kName up from a container on Docker's bridge, after showing the container's resolv.conf.
// The lookup only runs once the guest's rule that refuses outbound UDP is seen in place, so a
// broken rule can never send a query past the guest.
std::vector<std::string> LookupFromAContainer() {
  return {"mkdir -p \"$RUNNER_TEMP/root/bin\" && cp /bin/busybox \"$RUNNER_TEMP/root/bin/\"",
          "tar -C \"$RUNNER_TEMP/root\" -cf \"$RUNNER_TEMP/root.tar\" . && "
          "docker import \"$RUNNER_TEMP/root.tar\" mvr-dns-check:1",
          "docker run --rm mvr-dns-check:1 /bin/busybox cat /etc/resolv.conf 2>&1",
          // iproute2's ip (busybox's lacks ipproto); the guest has no /etc/protocols.
          "/usr/bin/ip rule show | grep -E 'from all ipproto (udp|ipproto-17) prohibit'",
          std::string("if docker run --rm mvr-dns-check:1 /bin/busybox nslookup ") + kName +
              "; then echo container-lookup-ok; else echo container-lookup-failed; fi",
          std::string("echo \"guest stub: $(nslookup ") + kName + " 2>&1 | tr '\\n' ' ')\""};
}

class VmDockerPlatform : public ActionEndToEnd {
 protected:
  void SetUp() override {
    if (std::string why = WhyNoVms(); !why.empty()) GTEST_SKIP() << why;
    ActionEndToEnd::SetUp();
  }
  void ConfigureStack(LocalStack& stack) override {
    stack.UseQemuVms(KernelDir());
    stack.UseDockerBridgeInGuests();
    stack.AddMicrovmsArgs(
        {"--vm-memory-mib", "1024", "--vm-dns-record", std::string(kName) + "=" + kAddress});
  }

  // One ephemeral job on the Docker image; returns its output.
  JobResult RunOnDocker(const std::string& job, const std::vector<std::string>& steps) {
    StepResult start = Step("start", job, {{"IMAGE_ID", kDockerImage}});
    EXPECT_TRUE(start.ok()) << start.Describe();
    JobResult run = Job(start.outputs["label"], steps);
    StepResult stop = Step("stop", job, {});
    EXPECT_TRUE(stop.ok()) << stop.Describe();
    return run;
  }

  // Every guest console log of the stack, concatenated.
  std::string ConsoleLogs() {
    std::string all;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(stack_->dir() + "/microvms/logs", ec)) {
      all += ReadFile(e.path().string(), "a console log").value_or("");
    }
    return all;
  }
};

// The supervisor's dockerd has the VPC resolver (docker.dns by default): a container on Docker's
// bridge resolves the test name through it, and the guest's own lookups go through its stub.
TEST_F(VmDockerPlatform, AContainerResolvesNamesThroughTheVpcResolver) {
  JobResult run = RunOnDocker("vm-dns", LookupFromAContainer());
  std::printf("the job's output:\n%s\n", run.stdout_text.c_str());
  EXPECT_EQ(run.conclusion, "success") << run.stdout_text;
  EXPECT_NE(run.stdout_text.find("nameserver 169.254.169.253"), std::string::npos)
      << run.stdout_text;
  EXPECT_NE(run.stdout_text.find("container-lookup-ok"), std::string::npos) << run.stdout_text;
  EXPECT_NE(run.stdout_text.find(std::string("Address: ") + kAddress), std::string::npos)
      << run.stdout_text;
  EXPECT_TRUE(
      std::regex_search(run.stdout_text, std::regex("guest stub: Server:\\s+127\\.0\\.0\\.53"
                                                    ".*Address: 192\\.0\\.2\\.10")))
      << run.stdout_text;
  ExpectNothingLeft();
}

// Without docker.dns, dockerd gives containers its public fallback (the VM's only nameserver is
// its loopback stub), which the blocked UDP cannot reach: no name resolves in a container.
class VmDockerWithoutDns : public VmDockerPlatform {
 protected:
  void ConfigureStack(LocalStack& stack) override {
    VmDockerPlatform::ConfigureStack(stack);
    stack.SetDockerDns({});
  }
};

TEST_F(VmDockerWithoutDns, WithoutTheVpcResolverAContainerResolvesNothing) {
  JobResult run = RunOnDocker("vm-no-dns", LookupFromAContainer());
  std::printf("the job's output:\n%s\n", run.stdout_text.c_str());
  EXPECT_EQ(run.conclusion, "success") << run.stdout_text;
  EXPECT_EQ(run.stdout_text.find("nameserver 169.254.169.253"), std::string::npos)
      << run.stdout_text;
  EXPECT_EQ(run.stdout_text.find("nameserver 127.0.0.53"), std::string::npos)
      << "Docker keeps no loopback nameserver for a container:\n"
      << run.stdout_text;
  EXPECT_NE(run.stdout_text.find("container-lookup-failed"), std::string::npos) << run.stdout_text;
  // The guest itself still resolves through its stub: only containers are cut off.
  EXPECT_NE(run.stdout_text.find(kAddress), std::string::npos) << run.stdout_text;
  ExpectNothingLeft();
}

// An image without additionalOsCapabilities ["ALL"]: its program (the supervisor) runs with a
// container's capability set, and the dockerd it starts for the job cannot run, so no runner
// starts and the Action's start fails.
class VmDockerWithoutCapabilities : public VmDockerPlatform {
 protected:
  void ConfigureStack(LocalStack& stack) override {
    VmDockerPlatform::ConfigureStack(stack);
    stack.AddMicrovmsArgs({"--image-capabilities", "none"});
  }
};

TEST_F(VmDockerWithoutCapabilities, WithoutAllOsCapabilitiesDockerdCannotStart) {
  StepResult start =
      Step("start", "vm-no-caps", {{"IMAGE_ID", kDockerImage}, {"STARTUP_TIMEOUT_SECONDS", "150"}});
  EXPECT_FALSE(start.ok()) << start.Describe();
  const std::string logs = ConsoleLogs();
  EXPECT_NE(logs.find("no additionalOsCapabilities ALL: container capabilities"), std::string::npos)
      << logs;
  // Every storage driver fails (dockerd exits: it can neither mount nor make its bridge), and the
  // supervisor is FAILED without starting a runner.
  for (const char* driver : {"overlay2", "fuse-overlayfs", "vfs"}) {
    EXPECT_TRUE(std::regex_search(
        logs, std::regex(std::string("storage driver did not start\",\"reason\":\"dockerd "
                                     "exited with code [0-9]+\",\"storage_driver\":\"") +
                         driver)))
        << driver << "\n"
        << logs;
  }
  EXPECT_NE(logs.find("\"command\":\"docker_failed\""), std::string::npos) << logs;
  EXPECT_EQ(logs.find("runner process started"), std::string::npos) << logs;
  ExpectNothingLeft();
}

}  // namespace
}  // namespace mvr::testbed
