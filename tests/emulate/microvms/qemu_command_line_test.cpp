// The QEMU command line QemuHost runs a guest with (QemuCommandLine, a pure function): the hook's
// forward first, then each guest port's; the ARM64 board and CPU; KVM's host CPU; a restore's
// -incoming with its path quoted for the shell QEMU's exec: migration runs.
#include "emulate/microvms/host/qemu_command_line.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace mvr::emulate::microvms {
namespace {

QemuMachine Machine() {
  QemuMachine m;
  m.qemu = "qemu-system-x86_64";
  m.accel = "tcg";
  m.memory_mib = 768;
  m.kernel = "/k/vmlinuz";
  m.initrd = "/img/initrd.cpio";
  m.disk = "/vm/disk.qcow2";
  m.disk_format = "qcow2";
  m.kernel_command_line = "quiet panic=-1";
  m.forwards = {{41000, 9000}, {41001, 8080}};
  m.console_log = "/state/logs/vm.log";
  m.qmp_socket = "/vm/qmp.sock";
  return m;
}

// The value after `flag` in `argv`, "" if absent.
std::string After(const std::vector<std::string>& argv, const std::string& flag) {
  auto it = std::find(argv.begin(), argv.end(), flag);
  return it == argv.end() || it + 1 == argv.end() ? "" : *(it + 1);
}

TEST(QemuCommandLineTest, ColdX86BootForwardsTheHookFirstAndHasNoIncoming) {
  const std::vector<std::string> argv = QemuCommandLine(Machine());
  EXPECT_EQ(argv.front(), "qemu-system-x86_64");
  EXPECT_EQ(After(argv, "-netdev"),
            "user,id=net0,ipv6=off,hostfwd=tcp:127.0.0.1:41000-127.0.0.1:9000,"
            "hostfwd=tcp:127.0.0.1:41001-127.0.0.1:8080");
  EXPECT_EQ(After(argv, "-cpu"), "max");
  EXPECT_EQ(After(argv, "-m"), "768");
  EXPECT_EQ(After(argv, "-drive"), "if=virtio,format=qcow2,file=/vm/disk.qcow2");
  EXPECT_EQ(After(argv, "-append"), "console=ttyS0 quiet panic=-1");
  EXPECT_EQ(After(argv, "-qmp"), "unix:/vm/qmp.sock,server=on,wait=off");
  EXPECT_EQ(After(argv, "-chardev"), "file,id=console,append=on,path=/state/logs/vm.log");
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "-machine"), 0);
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "-incoming"), 0);
}

TEST(QemuCommandLineTest, Arm64RunsOnTheVirtBoardWithItsConsole) {
  QemuMachine m = Machine();
  m.arm64 = true;
  const std::vector<std::string> argv = QemuCommandLine(m);
  EXPECT_EQ(After(argv, "-machine"), "virt");
  EXPECT_EQ(After(argv, "-cpu"), "max,pauth-impdef=on");
  EXPECT_EQ(After(argv, "-append"), "console=ttyAMA0 quiet panic=-1");
}

TEST(QemuCommandLineTest, KvmUsesTheHostCpuAndARestoreQuotesItsMemoryPath) {
  QemuMachine m = Machine();
  m.accel = "kvm";
  m.incoming_memory = "/state/images/it's/memory";
  const std::vector<std::string> argv = QemuCommandLine(m);
  EXPECT_EQ(After(argv, "-accel"), "kvm");
  EXPECT_EQ(After(argv, "-cpu"), "host");
  EXPECT_EQ(argv[argv.size() - 2], "-incoming");
  EXPECT_EQ(argv.back(), "exec:cat '/state/images/it'\\''s/memory'");
}

}  // namespace
}  // namespace mvr::emulate::microvms
