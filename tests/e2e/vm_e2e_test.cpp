// The Action on real virtual machines (`mvr emulate microvms --vm qemu`, label vm): each MicroVM
// is a QEMU guest restored from its image's one snapshot, and a suspend saves the guest's memory
// and ends its QEMU process. What the process backend cannot show:
//  - two VMs of one snapshot draw different random numbers after /run, and the same ones when the
//    supervisor is told not to reseed (so the test can see the failure it guards against);
//  - the warm pair's second job finds the file the first wrote, after a real suspend and resume;
//  - a connection the guest held is dead after the resume, and the program that held it
//    reconnects by itself;
//  - the guest's wall clock after a resume (measured and printed; docs/emulate-microvms.md);
//  - the warm pair on an ARM64 guest (`--vm-arch arm64`, Graviton's machine, under TCG).
// Skipped, with the reason, where QEMU or the guest kernel (scripts/fetch-vm-kernel.sh) is
// missing.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <regex>
#include <thread>

#include "action_e2e_fixture.h"
#include "base/files.h"
#include "vm_support.h"

namespace mvr::testbed {
namespace {

// The image whose runner first starts (once per VM) a loop that holds a connection to a listener
// of the test on this host, writing a line each second and reconnecting when it breaks.
constexpr char kHolderImage[] = "mvr-holder";

std::string Arm64KernelDir() {
  const char* dir = std::getenv("MVR_VM_KERNEL_DIR_ARM64");
  return dir != nullptr && *dir != '\0' ? dir : "/var/cache/mvr/vm-kernel-arm64";
}

std::string Arm64GuestBundle() {
  const char* dir = std::getenv("MVR_VM_GUEST_BUNDLE");
  return dir != nullptr && *dir != '\0' ? dir
                                        : std::string(MVR_SOURCE_DIR) + "/build-arm64/guest-bundle";
}

// Why ARM64 QEMU VMs cannot run here, or "" when they can.
std::string WhyNoArm64Vms() {
  if (!process::FindProgram("qemu-system-aarch64", {{"PATH", "/usr/bin:/usr/local/bin"}}).ok()) {
    return "qemu-system-aarch64 is not installed (scripts/setup.sh installs qemu-system-arm)";
  }
  if (!fs::exists(Arm64KernelDir() + "/root/usr/bin/ip")) {
    return "no ARM64 guest kernel and userland in " + Arm64KernelDir() +
           " (run scripts/fetch-vm-kernel.sh --arch arm64)";
  }
  if (!fs::exists(Arm64GuestBundle() + "/lib/mvr.bin")) {
    return "no ARM64 guest tools in " + Arm64GuestBundle() +
           " (run scripts/build-supervisor-arm64.sh)";
  }
  return "";
}

// A TCP listener on 127.0.0.1 (an ephemeral port, which guests reach at their own 127.0.0.1):
// records each connection's lines and whether it was closed.
class LineListener {
 public:
  struct Connection {
    std::vector<std::string> lines;
    bool closed = false;
  };
  LineListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(fd_, 8);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    accept_ = std::thread([this] { AcceptLoop(); });
  }
  ~LineListener() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    accept_.join();
    for (std::thread& t : readers_) t.join();
  }
  int port() const { return port_; }
  std::vector<Connection> Connections() {
    std::lock_guard<std::mutex> lock(mu_);
    return connections_;
  }

 private:
  void AcceptLoop() {
    while (!stop_) {
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      size_t index;
      {
        std::lock_guard<std::mutex> lock(mu_);
        index = connections_.size();
        connections_.emplace_back();
      }
      readers_.emplace_back([this, c, index] { ReadLoop(c, index); });
    }
  }
  void ReadLoop(int c, size_t index) {
    timeval tv{1, 0};
    ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string buffer;
    while (!stop_) {
      char chunk[512];
      ssize_t n = ::recv(c, chunk, sizeof chunk, 0);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      if (n <= 0) break;
      buffer.append(chunk, static_cast<size_t>(n));
      size_t nl;
      while ((nl = buffer.find('\n')) != std::string::npos) {
        std::lock_guard<std::mutex> lock(mu_);
        connections_[index].lines.push_back(buffer.substr(0, nl));
        buffer.erase(0, nl + 1);
      }
    }
    ::close(c);
    std::lock_guard<std::mutex> lock(mu_);
    connections_[index].closed = true;
  }
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<Connection> connections_;
  std::thread accept_;
  std::vector<std::thread> readers_;
};

// The pids of the QEMU processes (not zombies) whose command line names `dir`.
std::vector<int> QemuProcessesUnder(const std::string& dir) {
  std::vector<int> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = ReadFile(e.path().string() + "/cmdline", "cmdline").value_or("");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find("qemu-system") == std::string::npos ||
        cmdline.find(dir) == std::string::npos) {
      continue;
    }
    const std::string stat = ReadFile(e.path().string() + "/stat", "stat").value_or("");
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z') continue;
    out.push_back(std::stoi(name));
  }
  return out;
}

class VmEndToEnd : public ActionEndToEnd {
 protected:
  void SetUp() override {
    if (std::string why = WhyNoVms(); !why.empty()) GTEST_SKIP() << why;
    ActionEndToEnd::SetUp();
  }
  void ConfigureStack(LocalStack& stack) override {
    stack.UseQemuVms(KernelDir());
    const std::string loop =
        "while true; do (echo \"start \\$\\$\"; while sleep 1; do echo tick; done) | "
        "nc 127.0.0.1 " +
        std::to_string(listener_.port()) + "; sleep 0.2; done";
    stack.AddImage(kHolderImage, "if [ ! -e /run/holder ]; then touch /run/holder; setsid sh -c '" +
                                     loop + "' </dev/null >/dev/null 2>&1 & fi\n" +
                                     stack.StandInRunner());
  }

  struct Draws {
    std::string supervisor;  // its status's cloneCheck
    std::string kernel;      // 8 bytes of the guest kernel's /dev/urandom, in hex
  };
  // Runs one ephemeral job on a new VM of the capture image that prints its supervisor's status
  // and draws from the guest kernel's generator.
  Draws DrawsOfANewVm(const std::string& job) {
    StepResult start = Step("start", job, {});
    EXPECT_TRUE(start.ok()) << start.Describe();
    JobResult run =
        Job(start.outputs["label"],
            {"wget -q -O - http://127.0.0.1:8080/v1/status",
             "echo \"kernel-random $(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \\n')\""});
    EXPECT_EQ(run.conclusion, "success") << run.stdout_text;
    StepResult stop = Step("stop", job, {});
    EXPECT_TRUE(stop.ok()) << stop.Describe();
    Draws d;
    std::smatch m;
    if (std::regex_search(run.stdout_text, m, std::regex("\"cloneCheck\":\"([0-9a-f]*)\""))) {
      d.supervisor = m[1];
    }
    if (std::regex_search(run.stdout_text, m, std::regex("kernel-random ([0-9a-f]+)"))) {
      d.kernel = m[1];
    }
    EXPECT_EQ(d.supervisor.size(), 16u) << run.stdout_text;
    EXPECT_EQ(d.kernel.size(), 16u) << run.stdout_text;
    return d;
  }

  LineListener listener_;
};

// The supervisor of every VM started with --keep-cloned-random: the random state stays as the
// snapshot held it.
class VmWithoutReseedEndToEnd : public VmEndToEnd {
 protected:
  void ConfigureStack(LocalStack& stack) override {
    VmEndToEnd::ConfigureStack(stack);
    stack.AddSupervisorArgs({"--keep-cloned-random"});
  }
};

// The supervisor reseeds on /run from what differs between the clones (its payload, the CPU's
// generator, the clocks), and makes the guest kernel reseed its generator too: without that, the
// kernel's getrandom() gave both VMs the same numbers, and so did the supervisor.
TEST_F(VmEndToEnd, TwoVmsOfOneSnapshotDrawDifferentRandomNumbersAfterRun) {
  const Draws a = DrawsOfANewVm("uniq-a");
  const Draws b = DrawsOfANewVm("uniq-b");
  EXPECT_NE(a.supervisor, b.supervisor)
      << "two VMs restored from one snapshot drew the same number after /run";
  EXPECT_NE(a.kernel, b.kernel) << "the guest kernels' generators were not reseeded";
  ExpectNothingLeft();
}

TEST_F(VmWithoutReseedEndToEnd, WithoutReseedingTwoVmsOfOneSnapshotDrawTheSameNumbers) {
  const Draws a = DrawsOfANewVm("same-a");
  const Draws b = DrawsOfANewVm("same-b");
  EXPECT_EQ(a.supervisor, b.supervisor)
      << "the VMs did not start from one snapshot, or something else reseeded them";
  ExpectNothingLeft();
}

// The warm pair on one VM: the first job writes a file on the VM's disk, the VM is suspended (its
// memory saved, its QEMU process ended) for a few seconds and resumed, and the second job finds
// the file. Also measured: the guest's wall clock right after the resume against this host's.
TEST_F(VmEndToEnd, WarmPairFindsTheFirstJobsFileAfterARealSuspendAndResume) {
  StepResult first = Step("start", "vm-warm-first", {{"SERVER", "vm-cache"}});
  ASSERT_TRUE(first.ok()) << first.Describe();
  const std::string handle = first.outputs["server"];
  const std::string microvm_id = first.outputs["microvm-id"];
  JobResult job1 =
      Job(first.outputs["label"],
          {"mkdir -p \"$MVR_DOCKER_DATA_ROOT/proof\"",
           "echo \"layer from $RUNNER_NAME\" > \"$MVR_DOCKER_DATA_ROOT/proof/layer\"", "sync"});
  EXPECT_EQ(job1.conclusion, "success");
  StepResult park = Step("stop", "vm-warm-first", {{"SERVER", handle}});
  ASSERT_TRUE(park.ok()) << park.Describe();
  EXPECT_EQ(StateOf(microvm_id), "SUSPENDED");
  // Suspended for real: no QEMU process runs for this VM, and nothing of it is on the host's
  // disk but its saved memory and its disk, a copy-on-write overlay of the image's that holds
  // what the job wrote (synced: not only in the guest's page cache).
  EXPECT_TRUE(fs::exists(stack_->vm_dir(microvm_id) + "/memory"));
  EXPECT_FALSE(fs::exists(stack_->vm_dir(microvm_id) + "/var/lib/docker/proof/layer"));
  const std::string overlay =
      ReadFile(stack_->vm_dir(microvm_id) + "/disk.qcow2", "the disk overlay").value_or("");
  EXPECT_NE(overlay.find("layer from " + first.outputs["runner-name"]), std::string::npos)
      << "the job's file is not on the VM's own disk (" << overlay.size() << " bytes)";
  // The scenario itself, not a wait for something to happen: the VM stays suspended this long,
  // the gap in the guest's clock that its resume must correct (checked below).
  constexpr int kSuspendedSeconds = 8;
  real_.sleeper.Sleep(std::chrono::seconds(kSuspendedSeconds));

  StepResult second = Step("start", "vm-warm-second", {{"SERVER", handle}});
  ASSERT_TRUE(second.ok()) << second.Describe();
  EXPECT_EQ(second.outputs["warm-hit"], "true");
  EXPECT_EQ(second.outputs["microvm-id"], microvm_id);
  auto host_seconds = [] {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const int64_t queued_at = host_seconds();
  JobResult job2 = Job(second.outputs["label"], {"cat \"$MVR_DOCKER_DATA_ROOT/proof/layer\"",
                                                 "echo \"guest-clock $(date +%s)\"",
                                                 "wget -q -O - http://127.0.0.1:8080/v1/status"});
  const int64_t host_now = host_seconds();
  EXPECT_EQ(job2.conclusion, "success");
  EXPECT_NE(job2.stdout_text.find("layer from " + first.outputs["runner-name"]), std::string::npos)
      << job2.stdout_text;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(job2.stdout_text, m, std::regex("guest-clock ([0-9]+)")))
      << job2.stdout_text;
  // The guest's clock continued from its snapshot's, over 8 s behind; its supervisor set it from
  // the API's Date on /resume, before the runner started.
  const int64_t guest = std::stoll(m[1]);
  EXPECT_GE(guest, queued_at - 3) << "the guest's clock was not set after the resume";
  EXPECT_LE(guest, host_now + 3);
  ASSERT_TRUE(
      std::regex_search(job2.stdout_text, m, std::regex("\"clockCorrectedSeconds\":([0-9.]+)")))
      << job2.stdout_text;
  const double corrected = std::stod(m[1]);
  EXPECT_GE(corrected, kSuspendedSeconds - 1);
  std::printf("guest wall clock after a %d s suspend: %.1f s behind, set on /resume\n",
              kSuspendedSeconds, corrected);
  StepResult park2 = Step("stop", "vm-warm-second", {{"SERVER", second.outputs["server"]}});
  ASSERT_TRUE(park2.ok()) << park2.Describe();
  StepResult done = Step("stop", "vm-warm-teardown", {{"MICROVM_ID", microvm_id}});
  ASSERT_TRUE(done.ok()) << done.Describe();
  ExpectNothingLeft();
}

// A connection the guest held before a suspend does not survive it: the host sees it closed when
// the VM is saved, nothing more arrives on it, and the loop that held it reconnects by itself
// after the resume (the same loop: its first line names the same shell).
TEST_F(VmEndToEnd, AConnectionHeldAcrossASuspendIsDeadAfterTheResumeAndTheGuestReconnects) {
  StepResult first =
      Step("start", "vm-hold-first", {{"SERVER", "vm-hold"}, {"IMAGE_ID", kHolderImage}});
  ASSERT_TRUE(first.ok()) << first.Describe();
  const std::string handle = first.outputs["server"];
  ASSERT_TRUE(Eventually([&] {
    auto c = listener_.Connections();
    return c.size() == 1 && c[0].lines.size() >= 2;
  })) << "the guest never connected to 127.0.0.1:"
      << listener_.port();
  JobResult job1 = Job(first.outputs["label"], {"true"});
  EXPECT_EQ(job1.conclusion, "success");
  StepResult park = Step("stop", "vm-hold-first", {{"SERVER", handle}});
  ASSERT_TRUE(park.ok()) << park.Describe();
  ASSERT_TRUE(Eventually([&] { return listener_.Connections().at(0).closed; }))
      << "the connection outlived the VM's process";
  const size_t lines_at_suspend = listener_.Connections().at(0).lines.size();
  EXPECT_EQ(listener_.Connections().size(), 1u);

  StepResult second =
      Step("start", "vm-hold-second", {{"SERVER", handle}, {"IMAGE_ID", kHolderImage}});
  ASSERT_TRUE(second.ok()) << second.Describe();
  // The connection is accepted before its first line arrives: wait for the line too.
  ASSERT_TRUE(Eventually([&] {
    auto c = listener_.Connections();
    return c.size() == 2 && !c[1].lines.empty();
  })) << "the guest did not reconnect after the resume";
  std::vector<LineListener::Connection> c = listener_.Connections();
  EXPECT_EQ(c[0].lines.size(), lines_at_suspend) << "the old connection carried data again";
  ASSERT_FALSE(c[1].lines.empty());
  EXPECT_EQ(c[1].lines[0], c[0].lines[0]) << "not the same loop that held the first connection";
  JobResult job2 = Job(second.outputs["label"], {"true"});
  EXPECT_EQ(job2.conclusion, "success");
  StepResult done = Step("stop", "vm-hold-teardown", {{"MICROVM_ID", first.outputs["microvm-id"]}});
  ASSERT_TRUE(done.ok()) << done.Describe();
  ExpectNothingLeft();
}

// The emulator killed with SIGKILL cannot stop anything, yet its VMs end with it: a QEMU process
// left behind would hold its memory and CPU until someone found it by hand.
TEST_F(VmEndToEnd, VmsEndWithTheirEmulatorEvenWhenItIsKilledWithKillNine) {
  StepResult start = Step("start", "vm-orphan", {});
  ASSERT_TRUE(start.ok()) << start.Describe();
  const std::string vms = stack_->dir() + "/microvms/";
  ASSERT_EQ(QemuProcessesUnder(vms).size(), 1u) << "one running VM, one QEMU process";
  ASSERT_EQ(::kill(stack_->microvms_pid(), SIGKILL), 0);
  EXPECT_TRUE(Eventually([&] { return QemuProcessesUnder(vms).empty(); }))
      << "a QEMU process outlived its emulator";
}

// VMs of the Docker image get more memory: its initramfs carries Debian's Docker engine.
class VmDockerEndToEnd : public VmEndToEnd {
 protected:
  void ConfigureStack(LocalStack& stack) override {
    VmEndToEnd::ConfigureStack(stack);
    stack.AddMicrovmsArgs({"--vm-memory-mib", "1024"});
  }
};

// Docker in the guest's own kernel: the supervisor starts containerd and dockerd inside the VM
// (with the first storage driver that works there), a job imports an image, the VM is suspended
// for real (dockerd stopped, memory saved, QEMU ended) and resumed, and the next job finds the
// image on the VM's disk.
TEST_F(VmDockerEndToEnd, AnImportedImageSurvivesARealSuspendAndResumeInTheGuestsOwnDocker) {
  StepResult first =
      Step("start", "vm-docker-first", {{"SERVER", "vm-docker"}, {"IMAGE_ID", kDockerImage}});
  ASSERT_TRUE(first.ok()) << first.Describe();
  const std::string microvm_id = first.outputs["microvm-id"];
  JobResult job1 = Job(first.outputs["label"],
                       {"echo \"guest-kernel $(uname -r)\"",
                        "mkdir -p \"$RUNNER_TEMP/rootfs\" && echo \"layer from $RUNNER_NAME\" > "
                        "\"$RUNNER_TEMP/rootfs/layer.txt\"",
                        "tar -C \"$RUNNER_TEMP/rootfs\" -cf \"$RUNNER_TEMP/rootfs.tar\" . && "
                        "docker import \"$RUNNER_TEMP/rootfs.tar\" mvr-vm-cache:1",
                        "wget -q -O - http://127.0.0.1:8080/v1/status"});
  ASSERT_EQ(job1.conclusion, "success") << job1.stdout_text;
  EXPECT_NE(job1.stdout_text.find("guest-kernel 6."), std::string::npos) << job1.stdout_text;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(job1.stdout_text, m, std::regex("\"storageDriver\":\"([a-z0-9-]+)\"")))
      << job1.stdout_text;
  std::printf("the guest's dockerd runs with the %s storage driver\n", m[1].str().c_str());
  StepResult park = Step("stop", "vm-docker-first", {{"SERVER", first.outputs["server"]}});
  ASSERT_TRUE(park.ok()) << park.Describe();
  EXPECT_EQ(StateOf(microvm_id), "SUSPENDED");
  EXPECT_TRUE(QemuProcessesUnder(stack_->vm_dir(microvm_id)).empty());

  StepResult second = Step("start", "vm-docker-second",
                           {{"SERVER", first.outputs["server"]}, {"IMAGE_ID", kDockerImage}});
  ASSERT_TRUE(second.ok()) << second.Describe();
  EXPECT_EQ(second.outputs["microvm-id"], microvm_id);
  EXPECT_EQ(second.outputs["warm-hit"], "true");
  JobResult job2 = Job(second.outputs["label"],
                       {"docker image inspect --format 'image {{.Id}}' mvr-vm-cache:1"});
  EXPECT_EQ(job2.conclusion, "success") << job2.stdout_text;
  EXPECT_NE(job2.stdout_text.find("image sha256:"), std::string::npos) << job2.stdout_text;
  StepResult park2 = Step("stop", "vm-docker-second", {{"SERVER", second.outputs["server"]}});
  ASSERT_TRUE(park2.ok()) << park2.Describe();
  StepResult done = Step("stop", "vm-docker-teardown", {{"MICROVM_ID", microvm_id}});
  ASSERT_TRUE(done.ok()) << done.Describe();
  ExpectNothingLeft();
}

// The platform runs Graviton: ARM64 guests (`--vm-arch arm64`) on QEMU's virt board under TCG,
// with Debian's arm64 cloud kernel, their own busybox and ip, and the ARM64 build of mvr's
// supervisor and stand-in runner (the guest bundle).
class VmArm64EndToEnd : public ActionEndToEnd {
 protected:
  void SetUp() override {
    if (std::string why = WhyNoArm64Vms(); !why.empty()) GTEST_SKIP() << why;
    ActionEndToEnd::SetUp();
  }
  void ConfigureStack(LocalStack& stack) override {
    stack.UseQemuVms(Arm64KernelDir(), "arm64");
    stack.AddMicrovmsArgs({"--vm-guest-bundle", Arm64GuestBundle()});
  }
};

// The warm pair on an ARM64 VM restored from its image's snapshot: the first job runs on an
// aarch64 machine and writes a file on the VM's disk, the VM is suspended for real (its memory
// saved, its QEMU process ended) and resumed, and the second job finds the file.
TEST_F(VmArm64EndToEnd, AWarmPairRunsOnAnArm64GuestAcrossARealSuspendAndResume) {
  StepResult first = Step("start", "arm64-first", {{"SERVER", "arm64-cache"}});
  ASSERT_TRUE(first.ok()) << first.Describe();
  const std::string microvm_id = first.outputs["microvm-id"];
  JobResult job1 = Job(first.outputs["label"],
                       {"echo \"machine $(uname -m)\"", "mkdir -p \"$MVR_DOCKER_DATA_ROOT/proof\"",
                        "echo \"file from $RUNNER_NAME\" > \"$MVR_DOCKER_DATA_ROOT/proof/file\"",
                        "sync", "wget -q -O - http://127.0.0.1:8080/v1/status"});
  ASSERT_EQ(job1.conclusion, "success") << job1.stdout_text;
  EXPECT_NE(job1.stdout_text.find("machine aarch64"), std::string::npos) << job1.stdout_text;
  EXPECT_NE(job1.stdout_text.find("\"cloneCheck\""), std::string::npos) << job1.stdout_text;
  StepResult park = Step("stop", "arm64-first", {{"SERVER", first.outputs["server"]}});
  ASSERT_TRUE(park.ok()) << park.Describe();
  EXPECT_EQ(StateOf(microvm_id), "SUSPENDED");
  EXPECT_TRUE(fs::exists(stack_->vm_dir(microvm_id) + "/memory"));
  EXPECT_TRUE(QemuProcessesUnder(stack_->vm_dir(microvm_id)).empty());

  StepResult second = Step("start", "arm64-second", {{"SERVER", first.outputs["server"]}});
  ASSERT_TRUE(second.ok()) << second.Describe();
  EXPECT_EQ(second.outputs["warm-hit"], "true");
  EXPECT_EQ(second.outputs["microvm-id"], microvm_id);
  JobResult job2 = Job(second.outputs["label"], {"cat \"$MVR_DOCKER_DATA_ROOT/proof/file\""});
  EXPECT_EQ(job2.conclusion, "success") << job2.stdout_text;
  EXPECT_NE(job2.stdout_text.find("file from " + first.outputs["runner-name"]), std::string::npos)
      << job2.stdout_text;
  StepResult park2 = Step("stop", "arm64-second", {{"SERVER", second.outputs["server"]}});
  ASSERT_TRUE(park2.ok()) << park2.Describe();
  StepResult done = Step("stop", "arm64-teardown", {{"MICROVM_ID", microvm_id}});
  ASSERT_TRUE(done.ok()) << done.Describe();
  ExpectNothingLeft();
}

}  // namespace
}  // namespace mvr::testbed
