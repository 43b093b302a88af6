#include "github/labels.h"

#include <gtest/gtest.h>

namespace mvr::github {
namespace {

const std::vector<std::string> kClass = {"linux", "ARM64", "lambda-mvm-small"};

TEST(JobLabelsMatchTest, EveryJobLabelMustBeOnTheRunner) {
  EXPECT_TRUE(JobLabelsMatch({"lambda-mvm-small"}, kClass));
  EXPECT_TRUE(JobLabelsMatch({"linux", "lambda-mvm-small"}, kClass));
  EXPECT_FALSE(JobLabelsMatch({"lambda-mvm-small", "gpu"}, kClass));
  EXPECT_FALSE(JobLabelsMatch({"ubuntu-latest"}, kClass));
}

TEST(JobLabelsMatchTest, ComparisonIgnoresCase) {
  EXPECT_TRUE(JobLabelsMatch({"Linux", "arm64", "LAMBDA-MVM-SMALL"}, kClass));
  EXPECT_FALSE(JobLabelsMatch({"lambda-mvm-smal"}, kClass));
}

TEST(JobLabelsMatchTest, SelfHostedIsImpliedForSelfHostedRunners) {
  EXPECT_TRUE(JobLabelsMatch({"self-hosted", "lambda-mvm-small"}, kClass));
  EXPECT_TRUE(JobLabelsMatch({"Self-Hosted", "linux"}, kClass));
  EXPECT_FALSE(JobLabelsMatch({"self-hosted", "lambda-mvm-small"}, kClass, /*self_hosted=*/false));
}

TEST(JobLabelsMatchTest, AJobWithoutLabelsMatchesNothing) {
  EXPECT_FALSE(JobLabelsMatch({}, kClass));
}

TEST(JobLabelsMatchTest, RunnerLabelsBeyondTheJobsAreFine) {
  EXPECT_TRUE(JobLabelsMatch({"linux"}, kClass));
  EXPECT_FALSE(JobLabelsMatch({"linux"}, {}));
}

}  // namespace
}  // namespace mvr::github
