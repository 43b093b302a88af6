#include "supervisor/config_sources.h"

#include <gtest/gtest.h>

#include <fstream>

#include "base/files.h"

namespace mvr::supervisor {
namespace {

using Vars = std::map<std::string, std::string>;

class ConfigSourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created = TemporaryDirectory::Create("mvr-config-sources");
    ASSERT_TRUE(created.ok());
    dir_.emplace(std::move(*created));
    path_ = dir_->path() + "/supervisor.json";
    std::ofstream(path_) << R"({"hookPort": 9100, "controlPort": 8100, "microvmId": "mvm-file"})";
  }
  std::optional<TemporaryDirectory> dir_;
  std::string path_;
};

TEST_F(ConfigSourcesTest, EnvironmentOverridesTheFileAndFlagsOverrideBoth) {
  SupervisorFlags flags;
  flags.config_path = path_;
  MapEnvironment env(Vars{{"MVR_HOOK_PORT", "9200"}, {"MVR_PORT_8080", "8200"}});
  auto from_env = ResolveSupervisorConfig(flags, env);
  ASSERT_TRUE(from_env.ok()) << from_env.status().ToString();
  EXPECT_EQ(from_env->hook_port, 9200);
  EXPECT_EQ(from_env->control_port, 8200);
  EXPECT_EQ(from_env->microvm_id, "mvm-file");

  flags.hook_port = 9300;
  flags.microvm_id = "mvm-flag";
  flags.no_docker = true;
  auto from_flags = ResolveSupervisorConfig(flags, env);
  ASSERT_TRUE(from_flags.ok()) << from_flags.status().ToString();
  EXPECT_EQ(from_flags->hook_port, 9300);
  EXPECT_EQ(from_flags->control_port, 8200);
  EXPECT_EQ(from_flags->microvm_id, "mvm-flag");
  EXPECT_FALSE(from_flags->docker.enabled);
}

// dockerd gets DOCKER_RAMDISK from the supervisor's environment (a QEMU guest's root is an
// initramfs, where runc cannot pivot_root); nothing else of it but PATH.
TEST_F(ConfigSourcesTest, DockerRamdiskReachesTheDaemonsEnvironment) {
  SupervisorFlags flags;
  MapEnvironment env(Vars{{"DOCKER_RAMDISK", "true"}, {"PATH", "/bin"}, {"HOME", "/root"}});
  auto c = ResolveSupervisorConfig(flags, env);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->command_env,
            (std::map<std::string, std::string>{{"DOCKER_RAMDISK", "true"}, {"PATH", "/bin"}}));
  auto without = ResolveSupervisorConfig(flags, MapEnvironment(Vars{{"PATH", "/bin"}}));
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(without->command_env.count("DOCKER_RAMDISK"), 0u);
}

TEST_F(ConfigSourcesTest, TheFileOnlyFillsTheVmIdWhenTheEnvironmentHasOne) {
  SupervisorFlags flags;
  MapEnvironment env(Vars{{"MVR_MICROVM_ID", "mvm-env"}});
  EXPECT_EQ(ResolveSupervisorConfig(flags, env)->microvm_id, "mvm-env");
  flags.config_path = path_;
  EXPECT_EQ(ResolveSupervisorConfig(flags, env)->microvm_id, "mvm-file");
}

TEST_F(ConfigSourcesTest, ErrorsNameTheVariableOrTheFile) {
  SupervisorFlags flags;
  auto bad_port = ResolveSupervisorConfig(flags, MapEnvironment(Vars{{"MVR_PORT_8080", "80a"}}));
  ASSERT_FALSE(bad_port.ok());
  EXPECT_NE(bad_port.status().message().find("MVR_PORT_8080='80a'"), std::string::npos);
  std::ofstream(path_) << "{not json";
  flags.config_path = path_;
  auto bad_file = ResolveSupervisorConfig(flags, MapEnvironment());
  ASSERT_FALSE(bad_file.ok());
  EXPECT_NE(bad_file.status().message().find(path_), std::string::npos)
      << bad_file.status().message();
  flags.config_path = dir_->path() + "/missing.json";
  EXPECT_FALSE(ResolveSupervisorConfig(flags, MapEnvironment()).ok());
}

}  // namespace
}  // namespace mvr::supervisor
