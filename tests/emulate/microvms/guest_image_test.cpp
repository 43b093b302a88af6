// The QEMU backend's guest root filesystem: the newc archive (read back by busybox's own cpio, an
// implementation we did not write), the host files a program names (through scripts that name
// others), and the guest's /init (modules in dependency order, the route to the host's listeners,
// the environment and the program quoted for the shell).
#include "emulate/microvms/guest_image.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/files.h"
#include "emulate/microvms/emulator_harness.h"

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

}  // namespace
}  // namespace mvr::emulate::microvms
