// ParseSupervisorConfig on numbers a config file can hold but the config cannot: found by
// fuzz/supervisor_config, where a huge or fractional value was converted to an integer or to
// milliseconds without a range check (undefined behaviour) instead of being refused.
#include "supervisor/config.h"

#include <gtest/gtest.h>

#include <string>

namespace mvr::supervisor {
namespace {

std::string Docker(const std::string& key, const std::string& value) {
  return R"({"docker":{")" + key + R"(":)" + value + "}}";
}

TEST(SupervisorConfig, HugeSecondsAreRefusedNotOverflowed) {
  for (const char* key : {"driverTimeoutSeconds", "stopTimeoutSeconds", "validateTimeoutSeconds",
                          "pollIntervalSeconds"}) {
    for (const char* value : {"1e300", "9.3e15", "86401"}) {
      auto c = ParseSupervisorConfig(Docker(key, value));
      ASSERT_FALSE(c.ok()) << key << "=" << value;
      EXPECT_NE(c.status().message().find(key), std::string::npos) << c.status().message();
    }
  }
  EXPECT_FALSE(ParseSupervisorConfig(R"({"commandTimeoutSeconds":1e19})").ok());
  auto day = ParseSupervisorConfig(Docker("stopTimeoutSeconds", "86400"));
  ASSERT_TRUE(day.ok()) << day.status().message();
  EXPECT_EQ(day->docker.stop_timeout, Duration(86'400'000));
  auto fraction = ParseSupervisorConfig(Docker("pollIntervalSeconds", "0.25"));
  ASSERT_TRUE(fraction.ok());
  EXPECT_EQ(fraction->docker.poll_interval, Duration(250));
}

// clock.correctAfterRestore: on by default (a VM's clock continues from its snapshot's).
TEST(SupervisorConfig, ClockCorrectionIsOnUnlessTurnedOff) {
  EXPECT_TRUE(ParseSupervisorConfig("{}")->clock_correct_after_restore);
  auto off = ParseSupervisorConfig(R"({"clock":{"correctAfterRestore":false}})");
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_FALSE(off->clock_correct_after_restore);
  auto typo = ParseSupervisorConfig(R"({"clock":{"correctAfterResume":false}})");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("correctAfterResume"), std::string::npos)
      << typo.status().message();
  EXPECT_FALSE(ParseSupervisorConfig(R"({"clock":{"correctAfterRestore":"yes"}})").ok());
}

TEST(SupervisorConfig, PortsAndSizesMustBeWholeNumbersInRange) {
  for (const char* bad :
       {R"({"hookPort":1e300})", R"({"controlPort":-1e300})", R"({"hookPort":8080.5})",
        R"({"controlPort":65536})", R"({"hookPort":-1})", R"({"maxControlBodyBytes":1e300})",
        R"({"maxControlBodyBytes":-1})", R"({"maxControlBodyBytes":18446744073709551615})"}) {
    auto c = ParseSupervisorConfig(bad);
    EXPECT_FALSE(c.ok()) << bad;
  }
  auto ok =
      ParseSupervisorConfig(R"({"hookPort":9001,"controlPort":0,"maxControlBodyBytes":4096})");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->hook_port, 9001);
  EXPECT_EQ(ok->control_port, 0);
  EXPECT_EQ(ok->max_control_body_bytes, 4096u);
}

TEST(SupervisorConfig, ANulInAPathOrArgumentIsRefusedNotCutShort) {
  auto c = ParseSupervisorConfig(R"({"runner":{"command":["/opt/run.sh","--x\u0000y"]}})");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("runner.command[1]"), std::string::npos)
      << c.status().message();
}

}  // namespace
}  // namespace mvr::supervisor
