// QemuHost::Create refuses what it cannot run before it starts anything, naming what is missing
// and what to run: an unknown machine, an ARM64 guest without its kernel's userland or without
// the ARM64 guest tools, KVM for an ARM64 guest, and a missing QEMU. A fake ProcessRunner stands
// in for the host's tools, so this runs where QEMU is not installed.
#include "emulate/microvms/host/qemu_host.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "emulate/microvms/emulator_harness.h"
#include "http/handler_client.h"
#include "support/fake_process_runner.h"
#include "support/manual_seam.h"

namespace mvr::emulate::microvms {
namespace {

namespace fs = std::filesystem;

class NoArtifacts final : public GuestHost {
 public:
  EffectOutcome Execute(const Effect&) override { return EffectOutcome::Failure("none"); }
  std::optional<std::string> GuestAuthority(const std::string&, int) const override {
    return std::nullopt;
  }
  std::string DirectoryOf(const std::string&) const override { return ""; }
  std::vector<std::pair<std::string, std::string>> ReapUnexpectedExits() override { return {}; }
  void StopLeftovers() override {}
};

void Touch(const std::string& path) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << "x";
}

class QemuHostCreateTest : public ::testing::Test {
 protected:
  Status CreateWith(QemuHost::Options options) {
    options.state_dir = dir_.path() + "/state";
    options.mvr_binary = "/proc/self/exe";
    Result<std::unique_ptr<QemuHost>> host =
        QemuHost::Create({seam_.seam, http_, processes_, artifacts_}, options);
    return host.ok() ? Status::Ok() : host.status();
  }
  QemuHost::Options Arm64() {
    QemuHost::Options o;
    o.arch = "arm64";
    o.kernel_dir = dir_.path() + "/kernel";
    o.guest_bundle = dir_.path() + "/bundle";
    return o;
  }
  ScopedTempDir dir_{"mvr-qemu-create"};
  testing::ManualSeam seam_;
  http::HandlerClient http_{[](const http::ServerRequest&) { return http::HttpResponse{}; }};
  process::testing::FakeProcessRunner processes_;
  NoArtifacts artifacts_;
};

TEST_F(QemuHostCreateTest, Arm64GuestsSayWhichPieceIsMissingAndHowToGetIt) {
  QemuHost::Options riscv = Arm64();
  riscv.arch = "riscv64";
  EXPECT_NE(CreateWith(riscv).message().find("--vm-arch must be x86_64 or arm64"),
            std::string::npos);

  Status no_kernel = CreateWith(Arm64());
  EXPECT_EQ(no_kernel.code(), Code::kInvalidArgument);
  EXPECT_NE(no_kernel.message().find("fetch-vm-kernel.sh --arch arm64"), std::string::npos)
      << no_kernel.message();

  Touch(dir_.path() + "/kernel/vmlinuz");
  Status no_userland = CreateWith(Arm64());
  EXPECT_NE(no_userland.message().find("the guest's own userland"), std::string::npos)
      << no_userland.message();

  Touch(dir_.path() + "/kernel/root/usr/bin/ip");
  Status no_bundle = CreateWith(Arm64());
  EXPECT_NE(no_bundle.message().find("scripts/build-supervisor-arm64.sh"), std::string::npos)
      << no_bundle.message();
  EXPECT_NE(no_bundle.message().find("--vm-guest-bundle"), std::string::npos);

  Touch(dir_.path() + "/bundle/lib/mvr.bin");
  processes_.SetRunResult("qemu-system-aarch64", 127);
  Status no_qemu = CreateWith(Arm64());
  EXPECT_NE(no_qemu.message().find("apt-get install qemu-system-arm"), std::string::npos)
      << no_qemu.message();

  processes_.SetRunResult("qemu-system-aarch64", 0);
  QemuHost::Options kvm = Arm64();
  kvm.accel = "kvm";
  EXPECT_NE(CreateWith(kvm).message().find("--accel kvm cannot run an arm64 guest"),
            std::string::npos);
  // With every piece there it is made, under TCG whatever --accel auto would probe.
  EXPECT_TRUE(CreateWith(Arm64()).ok());
}

}  // namespace
}  // namespace mvr::emulate::microvms
