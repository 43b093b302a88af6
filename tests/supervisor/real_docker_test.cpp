// With a real dockerd (root and the binaries present; skipped elsewhere with a message): an image
// imported before a suspend/resume cycle (Stop → Start of DockerControl, as the hooks do) is still
// there after it, and forcing the vfs driver works. dockerd runs with --bridge=none
// --iptables=false on its own data root and socket, so it touches nothing of the machine's.
#include <gtest/gtest.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/logger.h"
#include "script_fixture.h"
#include "supervisor/docker_control.h"

namespace mvr::supervisor {
namespace {

// Where `name` is installed ("" when it is not).
std::string Which(const std::string& name) {
  auto found =
      process::FindProgram(name, {{"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin"}});
  return found.ok() ? *found : "";
}

TEST(RealDocker, ImageSurvivesStopAndStartAndForcedVfsWorks) {
  std::string dockerd = Which("dockerd");
  std::string docker = Which("docker");
  if (::geteuid() != 0 || dockerd.empty() || docker.empty()) {
    GTEST_SKIP() << "needs root and the dockerd and docker binaries (this machine has no Docker "
                    "engine); the fallback logic is covered by DockerFallback.* with fake daemons";
  }
  testing::ScriptDir dir("mvr-real-docker");
  std::string host = "unix://" + dir.file("docker.sock");
  DockerConfig config;
  config.containerd = {};  // dockerd manages its own containerd
  config.dockerd = {dockerd,
                    "--bridge=none",
                    "--iptables=false",
                    "--ip6tables=false",
                    "--data-root",
                    dir.file("data"),
                    "--exec-root",
                    dir.file("exec"),
                    "--pidfile",
                    dir.file("docker.pid"),
                    "-H",
                    host};
  config.info = {docker, "-H", host, "info", "--format", "{{.Driver}}"};
  config.driver_timeout = Duration(60'000);
  config.stop_timeout = Duration(30'000);
  config.log_file = dir.file("dockerd.log");
  process::PosixProcessRunner processes;
  SystemClock clock;
  RealSleeper sleeper;
  SeededRandom random(1);
  MemorySink sink;
  Logger logger(sink, clock);
  std::map<std::string, std::string> env = {
      {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}};
  DockerControl control(config, env,
                        DockerDeps{processes, Seam{clock, sleeper, random, random, logger}});
  auto driver = control.Start();
  ASSERT_TRUE(driver.ok()) << driver.status().ToString() << dir.Read("dockerd.log");
  RecordProperty("storage_driver", *driver);

  // A one-file image imported from a tar: no registry needed.
  std::filesystem::create_directories(dir.file("rootfs"));
  dir.Write("rootfs/hello.txt", "cached layer\n");
  process::ProcessSpec tar;
  tar.argv = {"/bin/sh", "-c",
              "tar -C '" + dir.file("rootfs") + "' -cf '" + dir.file("rootfs.tar") + "' . && " +
                  docker + " -H " + host + " import '" + dir.file("rootfs.tar") +
                  "' mvr-warm-cache-proof:1"};
  tar.env = env;
  auto imported = processes.Run(tar, Duration(120'000));
  ASSERT_TRUE(imported.ok() && imported->exit.ok());

  ASSERT_TRUE(control.Stop().ok());  // the /suspend hook's work
  auto again = control.Start();      // the /resume hook's work
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, *driver);
  process::ProcessSpec inspect;
  inspect.argv = {docker, "-H", host, "image", "inspect", "mvr-warm-cache-proof:1"};
  inspect.env = env;
  auto found = processes.Run(inspect, Duration(60'000));
  ASSERT_TRUE(found.ok());
  EXPECT_TRUE(found->exit.ok()) << "image lost across the stop/start cycle";
  ASSERT_TRUE(control.Stop().ok());

  DockerConfig forced = config;
  forced.force_driver = "vfs";
  forced.dockerd[5] = dir.file("data-vfs");
  DockerControl vfs(forced, env,
                    DockerDeps{processes, Seam{clock, sleeper, random, random, logger}});
  auto v = vfs.Start();
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, "vfs");
  EXPECT_TRUE(vfs.Stop().ok());
}

}  // namespace
}  // namespace mvr::supervisor
