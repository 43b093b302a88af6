// Runner names and runner-set ids (runnerset/config/runner_name.h, issue 53 item 4): ids that
// prefix one another (ci, ci-gpu, ci1) give names no other set parses as its own, and ids that held
// the separator before are refused with a clear error.
#include "runnerset/config/runner_name.h"

#include <gtest/gtest.h>

namespace mvr::runnerset {
namespace {

using Kind = RunnerNameParts::Kind;

TEST(RunnerName, BuiltNamesParseBackAndOnlyForTheirOwnSet) {
  const std::string ci = RunnerNamePrefix("ci");
  EXPECT_EQ(ci, "mvr-ci_");
  EXPECT_EQ(JobRunnerName(ci, 29679449, "0a1b2c3d"), "mvr-ci_29679449-0a1b2c3d");
  EXPECT_EQ(HotRunnerName(ci, "7f3a"), "mvr-ci_hot-7f3a");
  RunnerNameParts job = ParseRunnerName(ci, JobRunnerName(ci, 29679449, "0a1b2c3d"));
  EXPECT_EQ(job.kind, Kind::kJob);
  EXPECT_EQ(job.job_id, 29679449);
  EXPECT_EQ(ParseRunnerName(ci, HotRunnerName(ci, "7f3a")).kind, Kind::kHot);
  EXPECT_EQ(ParseRunnerName(ci, "mvr-ci_x-1").kind, Kind::kOther);
  EXPECT_EQ(ParseRunnerName(ci, "mvr-ci_-1").kind, Kind::kOther);
  EXPECT_EQ(ParseRunnerName(ci, "mvr-ci_1234567890123456789-a").kind, Kind::kOther);
  for (const char* other : {"ci-gpu", "ci1", "ci10", "c"}) {
    const std::string prefix = RunnerNamePrefix(other);
    for (const std::string& name :
         {JobRunnerName(prefix, 1, "aaaaaaaa"), HotRunnerName(prefix, "beef")}) {
      EXPECT_FALSE(IsRunnerOf(ci, name)) << name;
      EXPECT_EQ(ParseRunnerName(ci, name).kind, Kind::kForeign) << name;
      EXPECT_FALSE(IsRunnerOf(prefix, JobRunnerName(ci, 1, "aaaaaaaa"))) << other;
    }
  }
}

TEST(RunnerName, IdsHoldLowercaseLettersDigitsAndDashOnly) {
  for (const char* id : {"ci", "ci-gpu", "ci1", "0", "a-b-c", "x-"}) {
    EXPECT_TRUE(CheckRunnerSetId(id, "runnerSetId").ok()) << id;
  }
  EXPECT_TRUE(CheckRunnerSetId(std::string(31, 'a'), "runnerSetId").ok());
  for (const char* id : {"ci_gpu", "ci.prod", "CI"}) {
    Status st = CheckRunnerSetId(id, "runnerSetId");
    ASSERT_FALSE(st.ok()) << id;
    EXPECT_NE(st.message().find("runnerSetId: \"" + std::string(id) + "\""), std::string::npos)
        << st.message();
    EXPECT_NE(st.message().find("is no longer allowed"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("rename the set"), std::string::npos) << st.message();
  }
  for (const std::string& id : {std::string(), std::string(32, 'a'), std::string("-ci"),
                                std::string("ci/x"), std::string("ci x")}) {
    EXPECT_FALSE(CheckRunnerSetId(id, "runnerSetId").ok()) << id;
  }
}

}  // namespace
}  // namespace mvr::runnerset
