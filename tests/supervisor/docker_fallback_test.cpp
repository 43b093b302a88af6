// The storage-driver fallback overlay2 → fuse-overlayfs → vfs, the forced choice, and the clean
// stop, with fake daemons (small shell scripts) run as real processes. Runs on every machine.
#include <gtest/gtest.h>

#include "base/clock.h"
#include "base/logger.h"
#include "script_fixture.h"
#include "supervisor/docker_control.h"

namespace mvr::supervisor {
namespace {

using testing::ScriptDir;

struct DockerFixture {
  DockerFixture() : dir("mvr-docker"), logger(sink, clock) {
    testing::WriteFakeDocker(dir);
    config.containerd = {dir.file("containerd")};
    config.dockerd = {dir.file("dockerd")};
    config.info = {dir.file("docker-info")};
    config.driver_timeout = Duration(3'000);
    config.stop_timeout = Duration(5'000);
    config.poll_interval = Duration(20);
    config.log_file = dir.file("docker.log");
  }
  std::unique_ptr<DockerControl> Make() {
    std::map<std::string, std::string> env = {{"PATH", "/usr/bin:/bin"}};
    return std::make_unique<DockerControl>(
        config, env, DockerDeps{processes, Seam{clock, sleeper, random, random, logger}});
  }

  ScriptDir dir;
  DockerConfig config;
  process::PosixProcessRunner processes;
  SystemClock clock;
  RealSleeper sleeper;
  SeededRandom random{1};
  MemorySink sink;
  Logger logger;
};

TEST(DockerFallback, Overlay2WorkingIsUsedFirst) {
  DockerFixture f;
  auto docker = f.Make();
  auto driver = docker->Start();
  ASSERT_TRUE(driver.ok()) << driver.status().ToString();
  EXPECT_EQ(*driver, "overlay2");
  EXPECT_EQ(f.dir.Read("tried"), "overlay2\n");
  EXPECT_TRUE(f.dir.Exists("containerd.up"));
  // Starting again while it runs does not start a second daemon.
  EXPECT_EQ(*docker->Start(), "overlay2");
  EXPECT_EQ(f.dir.Read("tried"), "overlay2\n");
  EXPECT_TRUE(docker->Stop().ok());
}

TEST(DockerFallback, BrokenOverlay2FallsBackToFuseOverlayfs) {
  DockerFixture f;
  f.dir.Write("broken", "overlay2\n");
  auto docker = f.Make();
  auto driver = docker->Start();
  ASSERT_TRUE(driver.ok()) << driver.status().ToString();
  EXPECT_EQ(*driver, "fuse-overlayfs");
  EXPECT_EQ(docker->driver(), "fuse-overlayfs");
  EXPECT_EQ(f.dir.Read("tried"), "overlay2\nfuse-overlayfs\n");
  EXPECT_TRUE(docker->Stop().ok());
}

TEST(DockerFallback, BothCopyOnWriteDriversFailingFallsBackToVfs) {
  DockerFixture f;
  f.dir.Write("broken", "overlay2\n");
  f.dir.Write("hang", "fuse-overlayfs\n");  // starts but never answers: the timeout applies
  f.config.driver_timeout = Duration(600);
  auto docker = f.Make();
  auto driver = docker->Start();
  ASSERT_TRUE(driver.ok()) << driver.status().ToString();
  EXPECT_EQ(*driver, "vfs");
  EXPECT_EQ(f.dir.Read("tried"), "overlay2\nfuse-overlayfs\nvfs\n");
  EXPECT_TRUE(docker->Stop().ok());
}

TEST(DockerFallback, ForcedDriverIsTheOnlyOneTried) {
  DockerFixture f;
  f.config.force_driver = "vfs";
  auto docker = f.Make();
  auto driver = docker->Start();
  ASSERT_TRUE(driver.ok());
  EXPECT_EQ(*driver, "vfs");
  EXPECT_EQ(f.dir.Read("tried"), "vfs\n");
  EXPECT_TRUE(docker->Stop().ok());

  DockerFixture g;
  g.config.force_driver = "fuse-overlayfs";
  g.dir.Write("broken", "fuse-overlayfs\n");
  auto forced = g.Make()->Start();
  ASSERT_FALSE(forced.ok());
  EXPECT_EQ(g.dir.Read("tried"), "fuse-overlayfs\n");
  EXPECT_NE(forced.status().message().find("fuse-overlayfs"), std::string::npos);
}

TEST(DockerFallback, NoWorkingDriverNamesEachFailureAndStopsContainerd) {
  DockerFixture f;
  f.dir.Write("broken", "overlay2\nfuse-overlayfs\nvfs\n");
  auto docker = f.Make();
  auto driver = docker->Start();
  ASSERT_FALSE(driver.ok());
  for (const char* d : {"overlay2", "fuse-overlayfs", "vfs"}) {
    EXPECT_NE(driver.status().message().find(d), std::string::npos) << d;
  }
  EXPECT_FALSE(docker->running());
  EXPECT_EQ(f.dir.Read("stopped"), "containerd\n");
}

TEST(DockerFallback, DaemonReportingAnotherDriverIsRejected) {
  DockerFixture f;
  f.dir.Script("docker-info", "echo devicemapper");
  f.config.drivers = {"overlay2"};
  auto driver = f.Make()->Start();
  ASSERT_FALSE(driver.ok());
  EXPECT_NE(driver.status().message().find("devicemapper"), std::string::npos);
}

TEST(DockerFallback, StopEndsDockerdThenContainerdCleanlyAndKeepsItsData) {
  DockerFixture f;
  std::filesystem::create_directories(f.dir.file("var-lib-docker/image"));
  f.dir.Write("var-lib-docker/image/layer", "cached");
  auto docker = f.Make();
  ASSERT_TRUE(docker->Start().ok());
  EXPECT_TRUE(docker->running());
  Status s = docker->Stop();
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(docker->running());
  EXPECT_EQ(f.dir.Read("stopped"), "dockerd\ncontainerd\n");
  EXPECT_EQ(f.dir.Read("var-lib-docker/image/layer"), "cached");
  // Restart after the stop (the resume path) picks the same driver again.
  auto again = docker->Start();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, "overlay2");
  EXPECT_TRUE(docker->Stop().ok());
}

TEST(DockerFallback, DaemonIgnoringSigtermIsKilledAndReportedAsUnclean) {
  DockerFixture f;
  f.dir.Script("dockerd",
               // The trap first: a Stop right after the daemon says it runs must find it deaf.
               "trap '' TERM\n"
               "echo overlay2 > \"$D/running\"\n"
               "while :; do sleep 0.05; done");
  f.config.stop_timeout = Duration(300);
  auto docker = f.Make();
  ASSERT_TRUE(docker->Start().ok());
  Status s = docker->Stop();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("killed"), std::string::npos);
  EXPECT_FALSE(docker->running());
}

}  // namespace
}  // namespace mvr::supervisor
