#include "runnerset/doctor/doctor.h"

#include <gtest/gtest.h>

namespace mvr::runnerset {
namespace {

TEST(DoctorReport, ExitCodeIsZeroOnlyWhenEveryCheckPassed) {
  DoctorReport report;
  report.Pass("config", "ok");
  EXPECT_EQ(report.ExitCode(), kDoctorAllPassed);
  report.NotChecked("aws mutating calls", "no simulator");
  EXPECT_EQ(report.ExitCode(), kDoctorUnchecked) << "not checked is not a pass";
  report.Fail("store", "gone", "create it");
  EXPECT_EQ(report.ExitCode(), kDoctorFailed);
}

TEST(DoctorReport, TextHasALinePerCheckAFixUnderEachFailureAndASummary) {
  DoctorReport report;
  report.Pass("config", "f.json");
  report.Fail("store", "sqlite:/x: missing", "create the directory");
  report.NotChecked("dead letters", "the queue could not be read");
  EXPECT_EQ(report.Text(),
            "PASS        config: f.json\n"
            "FAIL        store: sqlite:/x: missing\n"
            "            fix: create the directory\n"
            "NOT CHECKED dead letters: the queue could not be read\n"
            "1 passed, 1 failed, 1 not checked\n");
  const nlohmann::json j = report.Json();
  EXPECT_EQ(j["exitCode"], 1);
  EXPECT_EQ(j["checks"][1]["outcome"], "FAIL");
  EXPECT_EQ(j["checks"][1]["fix"], "create the directory");
  EXPECT_FALSE(j["checks"][0].contains("fix"));
  EXPECT_TRUE(report.Passed("config"));
  EXPECT_FALSE(report.Passed("store"));
}

TEST(DoctorReport, ExpectedWebhookUrlComesFromTheConfigOrTheListenAddress) {
  ServeConfig config;
  config.listen = "127.0.0.1:8080";
  EXPECT_EQ(ExpectedWebhookUrl(config), "http://127.0.0.1:8080/webhook");
  config.listen = "0.0.0.0:9000";
  EXPECT_EQ(ExpectedWebhookUrl(config), "http://:9000/webhook") << "host unknown: port and path";
  config.github.webhook_url = "https://ci.example.com/mvr/webhook";
  EXPECT_EQ(ExpectedWebhookUrl(config), "https://ci.example.com/mvr/webhook");
}

}  // namespace
}  // namespace mvr::runnerset
