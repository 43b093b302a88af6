// The janitor's watch on the runner each class's image carries (janitor_runner_window.cpp): the
// version `mvr image build` recorded in the image version's description, against GitHub's
// minimum and the runner's latest release (the GitHub emulator's policy), on the fixture's clock.
// A week before GitHub stops handing that runner jobs the janitor warns: a log line, the class's
// health (status page) and its metrics.
#include "emulate/github/runner_versions.h"
#include "janitor_fixture.h"

namespace mvr::runnerset::testing {
namespace {

constexpr Duration kDay{24LL * 3600 * 1000};

class JanitorRunnerWindowTest : public JanitorTest {
 protected:
  // The class's image is one `mvr image build` made with RUNNER_VERSION=`runner`.
  void ImageCarries(const std::string& runner) {
    Status s = platform_.microvms->WithModel([&](emulate::microvms::MicrovmModel& model) {
      emulate::microvms::ProgramSpec program;
      program.argv = {"/bin/true"};
      return model.RegisterImage("img-built", program,
                                 "mvr image build config=0123456789abcdef runner=" + runner);
    });
    ASSERT_TRUE(s.ok()) << s.ToString();
    config_.classes[0].image = "img-built";
  }
  // GitHub's latest runner release came out `ago`.
  void LatestRelease(const std::string& version, Duration ago) {
    emulate::github::RunnerVersionPolicy policy;
    policy.latest_release = version;
    policy.released_at = m_.clock.Now() - ago;
    ASSERT_TRUE(platform_.github_model->SetRunnerVersionPolicy(policy).ok());
  }
  std::string Log() const { return m_.sink.Joined(); }
};

TEST_F(JanitorRunnerWindowTest, WarnsAWeekBeforeGitHubStopsAcceptingTheImagesRunner) {
  ASSERT_NO_FATAL_FAILURE(ImageCarries("2.336.0"));
  ASSERT_NO_FATAL_FAILURE(LatestRelease("2.337.0", 22 * kDay));
  UseClassHealth();
  J().Sweep();
  EXPECT_TRUE(health_->Of("mvr-small").healthy) << "8 days to go";
  EXPECT_EQ(Log().find("GitHub stops accepting"), std::string::npos) << Log();

  m_.clock.Advance(kDay + std::chrono::hours(1));  // 7 days less an hour to go: read again
  J().Sweep();
  ClassVerdict v = health_->Of("mvr-small");
  EXPECT_FALSE(v.healthy);
  EXPECT_EQ(v.reason, "runner_update_due");
  EXPECT_EQ(v.runner_version, "2.336.0");
  const std::string log = Log();
  EXPECT_NE(log.find("GitHub stops accepting the runner of a class's image soon"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("2.336.0"), std::string::npos) << log;
  EXPECT_NE(log.find("docs/image.md"), std::string::npos) << log;
  const std::string metrics = health_->Prometheus(config_);
  EXPECT_NE(metrics.find("mvr_runnerset_class_healthy{class=\"mvr-small\",reason=\"runner_update_"
                         "due\"} 0"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("mvr_runnerset_class_runner_deadline_seconds{class=\"mvr-small\","
                         "runner_version=\"2.336.0\"} "),
            std::string::npos)
      << metrics;
  const std::string status = ClassHealthText(ClassHealthJson(v, config_.classes[0]));
  EXPECT_NE(status.find("must be updated: GitHub stops handing it jobs at"), std::string::npos)
      << status;

  m_.clock.Advance(7 * kDay);
  J().Sweep();
  EXPECT_EQ(health_->Of("mvr-small").reason, "runner_update_deadline_passed");
  EXPECT_NE(Log().find("GitHub refuses the runner of a class's image"), std::string::npos);
}

TEST_F(JanitorRunnerWindowTest, ARunnerBelowGitHubsMinimumIsReportedWithoutAnyRelease) {
  ASSERT_NO_FATAL_FAILURE(ImageCarries("2.321.0"));
  UseClassHealth();
  J().Sweep();
  const ClassVerdict v = health_->Of("mvr-small");
  EXPECT_EQ(v.reason, "runner_below_minimum");
  EXPECT_NE(Log().find("GitHub refuses the runner of a class's image"), std::string::npos);
  EXPECT_NE(ClassHealthText(ClassHealthJson(v, config_.classes[0])).find("below 2.329.0"),
            std::string::npos);
}

TEST_F(JanitorRunnerWindowTest, AnImageThatRecordsNoRunnerChangesNothing) {
  ASSERT_NO_FATAL_FAILURE(LatestRelease("2.337.0", 40 * kDay));
  UseClassHealth();
  J().Sweep();  // img-1, registered without a description
  EXPECT_TRUE(health_->Of("mvr-small").healthy);
  EXPECT_EQ(Log().find("runner of a class's image"), std::string::npos) << Log();
}

}  // namespace
}  // namespace mvr::runnerset::testing
