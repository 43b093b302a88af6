// The QEMU backend's guest root filesystem: the newc archive (read back by busybox's own cpio, an
// implementation we did not write), the host files a program names (through scripts that name
// others), and the guest's /init (modules in dependency order, the route to the host's listeners,
// the environment and the program quoted for the shell).
#include "emulate/microvms/host/guest_image.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/files.h"
#include "emulate/microvms/emulator_harness.h"
#include "process/process_runner.h"

namespace mvr::emulate::microvms {
namespace {

namespace fs = std::filesystem;

void Write(const std::string& path, const std::string& text, fs::perms perms = fs::perms(0644)) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
  fs::permissions(path, perms);
}

TEST(CpioWriter, BusyboxCpioExtractsWhatItWrote) {
  if (!fs::exists("/bin/busybox")) GTEST_SKIP() << "busybox is not installed (busybox-static)";
  ScopedTempDir dir("mvr-cpio");
  Write(dir.path() + "/src/tool", "#!/bin/sh\necho hi\n", fs::perms(0755));
  {
    CpioWriter cpio(dir.path() + "/out.cpio");
    ASSERT_TRUE(cpio.AddText("/etc/motd", "hello\n").ok());
    ASSERT_TRUE(cpio.AddHostFile("/usr/local/bin/tool", dir.path() + "/src/tool").ok());
    ASSERT_TRUE(cpio.AddSymlink("/bin/sh", "busybox").ok());
    ASSERT_TRUE(cpio.AddDirectory("/empty", 0700).ok());
    ASSERT_TRUE(cpio.AddText("/etc/motd", "written twice\n").ok());  // the first one stays
    EXPECT_FALSE(cpio.AddHostFile("/x", dir.path() + "/missing").ok());
    ASSERT_TRUE(cpio.Finish().ok());
  }
  fs::create_directories(dir.path() + "/x");
  const std::string cmd =
      "cd " + dir.path() + "/x && /bin/busybox cpio -i -d < ../out.cpio 2>" + dir.path() + "/err";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << ReadText(dir.path() + "/err");
  EXPECT_EQ(ReadText(dir.path() + "/x/etc/motd"), "hello\n");
  EXPECT_EQ(ReadText(dir.path() + "/x/usr/local/bin/tool"), "#!/bin/sh\necho hi\n");
  EXPECT_EQ(fs::status(dir.path() + "/x/usr/local/bin/tool").permissions(), fs::perms(0755));
  EXPECT_EQ(fs::read_symlink(dir.path() + "/x/bin/sh"), "busybox");
  EXPECT_TRUE(fs::is_directory(dir.path() + "/x/empty"));
}

TEST(HostFilesNamedBy, FollowsScriptsThatNameOtherFilesAndTakesTheWorkingDirectory) {
  ScopedTempDir dir("mvr-named");
  const std::string d = dir.path();
  Write(d + "/data.json", "{}");
  Write(d + "/inner.sh", "#!/bin/sh\ncat '" + d + "/data.json' /no/such/file\n");
  Write(d + "/outer.sh", "#!/bin/sh\nexec /bin/sh \"" + d + "/inner.sh\"\n");
  Write(d + "/context/Dockerfile", "CMD [\"x\"]\n");
  Write(d + "/context/app/main.py", "print(1)\n");
  ProgramSpec program;
  program.argv = {"/bin/sh", "-c", "exec /bin/sh '" + d + "/outer.sh'"};
  program.working_dir = d + "/context";
  std::vector<std::string> files = HostFilesNamedBy(program);
  auto has = [&](const std::string& f) {
    return std::find(files.begin(), files.end(), f) != files.end();
  };
  EXPECT_TRUE(has(d + "/outer.sh"));
  EXPECT_TRUE(has(d + "/inner.sh"));
  EXPECT_TRUE(has(d + "/data.json"));
  EXPECT_TRUE(has(d + "/context/Dockerfile"));
  EXPECT_TRUE(has(d + "/context/app/main.py"));
  EXPECT_FALSE(has("/no/such/file"));
}

TEST(GuestInit, LoadsModulesInOrderRoutesToTheHostAndRunsTheProgramQuoted) {
  ProgramSpec program;
  program.argv = {"/bin/sh", "-c", "echo 'it''s' \"$HOME\""};
  program.working_dir = "/srv/app";
  GuestNetwork network;
  network.host_ports_low = 32768;
  network.host_ports_high = 60999;
  network.extra_host_ports = {8443};
  const std::string init =
      GuestImageBuilder::InitScript(program, {{"GREETING", "a 'quoted' value"}}, network);
  // Every module after the ones it depends on.
  const auto& modules = GuestImageBuilder::Modules();
  auto at = [&](const std::string& m) { return std::find(modules.begin(), modules.end(), m); };
  EXPECT_LT(at("virtio_ring"), at("virtio"));
  EXPECT_LT(at("virtio"), at("virtio_pci"));
  EXPECT_LT(at("net_failover"), at("virtio_net"));
  // The host's listeners are reached at the guest's own 127.0.0.1, and the guest's own
  // connections use ports below them.
  EXPECT_NE(init.find("dport 32768-60999 lookup 200"), std::string::npos) << init;
  EXPECT_NE(init.find("dport 8443 lookup 200"), std::string::npos) << init;
  EXPECT_NE(init.find("echo '1024 32767' > /proc/sys/net/ipv4/ip_local_port_range"),
            std::string::npos);
  EXPECT_NE(init.find("export GREETING='a '\\''quoted'\\'' value'"), std::string::npos) << init;
  EXPECT_NE(init.find("cd '/srv/app'"), std::string::npos);
  // /vm is the VM's disk, mounted after its driver loads and before the program runs.
  const size_t mounted = init.find("mount -t ext4 /dev/vda /vm");
  ASSERT_NE(mounted, std::string::npos) << init;
  EXPECT_LT(init.find("virtio_blk"), mounted);
  EXPECT_LT(mounted, init.find("cd '/srv/app'"));
  EXPECT_NE(init.find("'/bin/sh' '-c' 'echo '\\''it'\\'''\\''s'\\'' \"$HOME\"'"), std::string::npos)
      << init;
  // The guest powers off when its program ends, so the emulator sees the VM stop.
  EXPECT_NE(init.find("poweroff -f"), std::string::npos);
}

// Without additionalOsCapabilities ALL the program runs under setpriv with a container's bounding
// set (no CAP_SYS_ADMIN, CAP_NET_ADMIN or CAP_SYS_TIME); with ALL it runs as init's root.
TEST(GuestInit, AProgramWithoutAllCapabilitiesRunsWithAContainersBoundingSet) {
  ProgramSpec program;
  program.argv = {"/bin/sh", "-c", "exec mvr supervisor"};
  const std::string init = GuestImageBuilder::InitScript(program, {}, GuestNetwork{});
  const size_t run = init.find("'/bin/sh' '-c' 'exec mvr supervisor'");
  ASSERT_NE(run, std::string::npos) << init;
  const size_t line = init.rfind('\n', run) + 1;
  const std::string command = init.substr(line, init.find('\n', run) - line);
  EXPECT_EQ(command.rfind("/usr/bin/setpriv --bounding-set -all,+chown,", 0), 0u) << command;
  EXPECT_NE(command.find("+net_bind_service"), std::string::npos) << command;
  EXPECT_NE(command.find("--inh-caps -all -- '/bin/sh'"), std::string::npos) << command;
  for (const char* cap : {"sys_admin", "net_admin", "sys_time", "sys_module"}) {
    EXPECT_EQ(command.find(cap), std::string::npos) << cap << " in " << command;
  }
  program.all_os_capabilities = true;
  const std::string all = GuestImageBuilder::InitScript(program, {}, GuestNetwork{});
  EXPECT_EQ(all.find("setpriv"), std::string::npos) << all;
}

// An ARM64 guest: its busybox, ip and libraries come from the guest root (symlinks kept), its mvr
// from the guest bundle with a launcher at the host mvr's path, and a program naming a binary of
// this host is refused by name.
TEST(GuestImageBuilder, AForeignGuestCarriesItsOwnUserlandAndMvrAndRefusesHostBinaries) {
  if (!fs::exists("/bin/busybox")) GTEST_SKIP() << "busybox is not installed (busybox-static)";
  ScopedTempDir dir("mvr-foreign");
  const std::string d = dir.path();
  Write(d + "/root/bin/busybox", "arm64 busybox", fs::perms(0755));
  Write(d + "/root/usr/bin/ip", "arm64 ip", fs::perms(0755));
  Write(d + "/root/lib/aarch64-linux-gnu/ld.so", "arm64 loader", fs::perms(0755));
  fs::create_symlink("aarch64-linux-gnu/ld.so", d + "/root/lib/ld-linux-aarch64.so.1");
  Write(d + "/bundle/mvr", "#!/bin/sh\n", fs::perms(0755));
  Write(d + "/bundle/lib/mvr.bin", "arm64 mvr", fs::perms(0755));
  for (const std::string& m : GuestImageBuilder::Modules())
    Write(d + "/kernel/modules/" + m + ".ko", m);
  Write(d + "/host/mvr", "the host's mvr", fs::perms(0755));
  Write(d + "/host/run.sh", "#!/bin/sh\nexec '" + d + "/host/mvr' supervisor\n", fs::perms(0755));
  process::PosixProcessRunner processes;
  GuestImageBuilder::Options options;
  options.kernel_dir = d + "/kernel";
  options.mvr_binary = d + "/host/mvr";
  options.guest_root = d + "/root";
  options.guest_bundle = d + "/bundle";
  GuestImageBuilder builder(processes, options);
  ProgramSpec program;
  program.argv = {"/bin/sh", "-c", "exec /bin/sh '" + d + "/host/run.sh'"};
  // Without additionalOsCapabilities ALL the program runs under setpriv, which this userland
  // lacks: refused by name.
  Status no_setpriv = builder.Write(program, {}, GuestNetwork{}, d + "/out.cpio");
  ASSERT_FALSE(no_setpriv.ok());
  EXPECT_NE(no_setpriv.message().find("/usr/bin/setpriv"), std::string::npos)
      << no_setpriv.message();
  program.all_os_capabilities = true;
  ASSERT_TRUE(builder.Write(program, {}, GuestNetwork{}, d + "/out.cpio").ok());
  fs::create_directories(d + "/x");
  const std::string cmd = "cd " + d + "/x && /bin/busybox cpio -i -d < ../out.cpio 2>" + d + "/err";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << ReadText(d + "/err");
  EXPECT_EQ(ReadText(d + "/x/bin/busybox"), "arm64 busybox");
  EXPECT_EQ(fs::read_symlink(d + "/x/bin/sh"), "busybox");
  EXPECT_EQ(ReadText(d + "/x/usr/bin/ip"), "arm64 ip");
  EXPECT_EQ(fs::read_symlink(d + "/x/lib/ld-linux-aarch64.so.1"), "aarch64-linux-gnu/ld.so");
  EXPECT_EQ(ReadText(d + "/x/opt/mvr/lib/mvr.bin"), "arm64 mvr");
  const std::string launcher = ReadText(d + "/x" + d + "/host/mvr");
  EXPECT_NE(launcher.find("exec /opt/mvr/mvr \"$@\""), std::string::npos) << launcher;
  EXPECT_NE(ReadText(d + "/x" + d + "/host/run.sh").find("supervisor"), std::string::npos);
  EXPECT_EQ(ReadText(d + "/x/lib/modules/virtio_net.ko"), "virtio_net");

  // A host binary (coreutils' env, an x86-64 program here) cannot run in the guest; the paths
  // the guest has its own programs at (/bin/busybox, /bin/sh) are not host binaries to it.
  ASSERT_EQ(ElfMachineOf("/usr/bin/env"), "x86-64");
  ASSERT_EQ(ElfMachineOf(d + "/host/run.sh"), "");
  program.argv = {"/bin/sh", "-c", "exec /usr/bin/env /bin/busybox true"};
  Status refused = builder.Write(program, {}, GuestNetwork{}, d + "/refused.cpio");
  EXPECT_EQ(refused.code(), Code::kInvalidArgument);
  EXPECT_NE(refused.message().find("/usr/bin/env, a program of this host built for x86-64"),
            std::string::npos)
      << refused.message();

  // A guest root without its ip says what to run.
  fs::remove(d + "/root/usr/bin/ip");
  Status missing = builder.Write(program, {}, GuestNetwork{}, d + "/missing.cpio");
  EXPECT_NE(missing.message().find("fetch-vm-kernel.sh --arch arm64"), std::string::npos)
      << missing.message();
}

}  // namespace
}  // namespace mvr::emulate::microvms
