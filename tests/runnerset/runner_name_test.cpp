// Runner names and runner-set ids (runnerset/config/runner_name.h, issue 53 item 4): ids that
// prefix one another (ci, ci-gpu, ci1) give names no other set parses as its own, and ids that held
// the separator before are refused with a clear error.
#include "runnerset/config/runner_name.h"

#include <gtest/gtest.h>

#include <cstdint>

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

// Issue 57, item 4: every name the builders write parses back to what it was built from, at the
// edges too (a 19-digit job id, INT64_MAX), and the canary's name is one of the set's forms.
TEST(RunnerName, EveryBuiltNameRoundTrips) {
  const std::string ci = RunnerNamePrefix("ci");
  for (int64_t id : {int64_t{1}, int64_t{29679449}, int64_t{999'999'999'999'999'999},
                     int64_t{1'000'000'000'000'000'000}, INT64_MAX}) {
    const RunnerNameParts job = ParseRunnerName(ci, JobRunnerName(ci, id, "0a1b2c3d"));
    EXPECT_EQ(job.kind, Kind::kJob) << id;
    EXPECT_EQ(job.job_id, id);
  }
  EXPECT_EQ(CanaryRunnerName(ci, "5e6f7a8b"), "mvr-ci_canary-5e6f7a8b");
  EXPECT_EQ(ParseRunnerName(ci, CanaryRunnerName(ci, "5e6f7a8b")).kind, Kind::kCanary);
  EXPECT_EQ(ParseRunnerName("mvr-demo-", HotRunnerName("mvr-demo-", "7f3a")).kind, Kind::kHot);
}

// The names the two old parsers took differently, and what the one parser says now: the runner
// set's ParseRunnerName took up to 18 digits with leading zeros, job 0 and an empty suffix or hot
// tail; the simulation's end check took "hot-" anywhere in a name as a parked hot runner.
TEST(RunnerName, TheOneParserReadsOnlyWhatTheBuildersWrite) {
  const std::string ci = RunnerNamePrefix("ci");
  const struct {
    const char* name;
    Kind kind;
    int64_t job_id;
  } cases[] = {
      {"mvr-ci_1234567890123456789-a", Kind::kJob, 1234567890123456789},  // was kOther (19 digits)
      {"mvr-ci_9223372036854775808-a", Kind::kOther, 0},                  // over INT64_MAX
      {"mvr-ci_99999999999999999999-a", Kind::kOther, 0},                 // 20 digits
      {"mvr-ci_007-0a1b2c3d", Kind::kOther, 0},  // was kJob 7: no builder writes a leading zero
      {"mvr-ci_0-0a1b2c3d", Kind::kOther, 0},    // was kJob 0: no job has id 0
      {"mvr-ci_42-", Kind::kOther, 0},           // was kJob 42: a job's name has a suffix
      {"mvr-ci_+42-a", Kind::kOther, 0},
      {"mvr-ci_-42-a", Kind::kOther, 0},
      {"mvr-ci_42-0a1b2c3d", Kind::kJob, 42},
      {"mvr-ci_hot-", Kind::kOther, 0},  // was kHot: a hot runner's name has its hex
      {"mvr-ci_hot-7f3a", Kind::kHot, 0},
      {"mvr-ci_canary-", Kind::kOther, 0},
      {"mvr-ci_canary-5e6f", Kind::kCanary, 0},  // was kOther: the canary had no parsed form
      {"mvr-ci_42-hot-7f3a", Kind::kJob, 42},    // the simulation's check took it for hot
      {"someone-hot-1", Kind::kForeign, 0},      // and this, not the set's at all
      {"mvr-ci-hot-7f3a", Kind::kForeign, 0},
  };
  for (const auto& c : cases) {
    const RunnerNameParts parts = ParseRunnerName(ci, c.name);
    EXPECT_EQ(parts.kind, c.kind) << c.name;
    EXPECT_EQ(parts.job_id, c.job_id) << c.name;
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
