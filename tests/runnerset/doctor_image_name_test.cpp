// Issue 53, item 2: an image belongs to one runner set. `mvr doctor` fails a class whose image is
// not named for the set (`<id>_<index>-<8 hex>`, as `mvr image build` names it), with the fix.
#include <gtest/gtest.h>

#include "platform_fixture.h"
#include "runnerset/config/runner_name.h"
#include "runnerset/doctor/doctor.h"

namespace mvr::runnerset::testing {
namespace {

TEST(ImageOfSet, OnlyTheSetsOwnImageNamesAndArnsAreItsOwn) {
  EXPECT_TRUE(IsImageOfSet("ci", "ci_0-0a1b2c3d"));
  EXPECT_TRUE(IsImageOfSet("ci", "ci_12-ffffffff"));
  EXPECT_TRUE(
      IsImageOfSet("ci", "arn:aws:lambda:us-east-1:123456789012:microvm-image:ci_1-0a1b2c3d"));
  EXPECT_FALSE(IsImageOfSet("ci", "ci1_0-0a1b2c3d")) << "another set whose id starts alike";
  EXPECT_FALSE(IsImageOfSet("ci", "ci-gpu_0-0a1b2c3d"));
  EXPECT_FALSE(IsImageOfSet("ci1", "ci_10-0a1b2c3d"));
  EXPECT_FALSE(IsImageOfSet("ci", "mvr-runner")) << "the Action's or a hand-made image";
  EXPECT_FALSE(IsImageOfSet("ci", "ci_0-0a1b2c3"));
  EXPECT_FALSE(IsImageOfSet("ci", "ci_0-0A1B2C3D"));
  EXPECT_FALSE(IsImageOfSet("ci", "ci_-0a1b2c3d"));
  EXPECT_FALSE(IsImageOfSet("ci", "ci_x-0a1b2c3d"));
  EXPECT_FALSE(IsImageOfSet("ci", "arn:aws:lambda:us-east-1:123456789012:microvm-image:other"));
  EXPECT_FALSE(IsImageOfSet("", "_0-0a1b2c3d"));
}

class DoctorImageNameTest : public RunnerSetTest {
 protected:
  DoctorReport Check() {
    DoctorClients clients{.seam = m_.seam, .region = "us-east-1", .microvms = &platform_.vms()};
    DoctorReport report;
    CheckImages(config_, clients, report);
    return report;
  }
};

TEST_F(DoctorImageNameTest, AClassImageNotNamedForTheSetFailsWithTheFix) {
  // The platform's image is named like the Action's (no set's): this set ("demo") must not use it.
  ASSERT_FALSE(IsImageOfSet(config_.runner_set_id, config_.classes[0].image));
  const DoctorReport report = Check();
  ASSERT_EQ(report.checks().size(), 1u);
  const CheckResult& line = report.checks()[0];
  EXPECT_FALSE(report.Passed("image mvr-small"));
  EXPECT_NE(line.detail.find("is not named for runner set demo (demo_<index>-<8 hex>)"),
            std::string::npos)
      << line.detail;
  EXPECT_NE(line.detail.find("an image belongs to one set"), std::string::npos) << line.detail;
  EXPECT_NE(line.fix.find("mvr image build --runner-set-id demo"), std::string::npos) << line.fix;
  EXPECT_EQ(report.ExitCode(), 1);
}

TEST_F(DoctorImageNameTest, AnImageNamedForTheSetIsCheckedFurther) {
  config_.classes[0].image = "demo_0-0a1b2c3d";
  const DoctorReport report = Check();
  ASSERT_EQ(report.checks().size(), 1u);
  // Not on the platform: the next check (the version exists) is what fails.
  EXPECT_EQ(report.checks()[0].detail.find("not named for"), std::string::npos)
      << report.checks()[0].detail;
}

}  // namespace
}  // namespace mvr::runnerset::testing
