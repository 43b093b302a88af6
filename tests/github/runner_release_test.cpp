// GitHub's rules for runner versions (github/runner_release.h), by table: the minimum, the 30-day
// window after a newer release and the 7-day notice before it closes; and the release's parsing.
#include "github/runner_release.h"

#include <gtest/gtest.h>

#include "base/time_format.h"

namespace mvr::github {
namespace {

constexpr int64_t kDay = 24LL * 3600 * 1000;
using Verdict = RunnerJudgement::Verdict;

TimePoint At(const char* rfc3339) { return ParseRfc3339(rfc3339).value(); }

struct Case {
  const char* version;
  const char* latest;          // "" = no release known
  int64_t days_since_release;  // now - published_at
  Verdict verdict;
  const char* why_has;
};

TEST(RunnerReleaseTest, JudgesTheMinimumAndTheThirtyDayWindow) {
  const TimePoint published = At("2026-11-01T00:00:00Z");
  const Case cases[] = {
      {"2.321.0", "", 0, Verdict::kRefused, "below 2.329.0"},
      {"2.321.0", "2.337.0", 1, Verdict::kRefused, "below 2.329.0"},
      {"2.328.9", "", 0, Verdict::kRefused, "cannot receive messages"},
      {"2.329.0", "", 0, Verdict::kAccepted, ""},
      {"v2.337.0", "2.337.0", 400, Verdict::kAccepted, ""},  // the latest never expires
      {"2.338.0", "2.337.0", 400, Verdict::kAccepted, ""},
      {"2.336.0", "2.337.0", 22, Verdict::kAccepted, ""},
      {"2.336.0", "2.337.0", 23, Verdict::kDueSoon, "stops handing it jobs at 2026-12-01"},
      {"2.336.0", "2.337.0", 29, Verdict::kDueSoon, "older than the latest release 2.337.0"},
      {"2.336.0", "2.337.0", 30, Verdict::kRefused, "stopped handing it jobs"},
      {"two", "2.337.0", 1, Verdict::kRefused, "not a dotted version"},
  };
  for (const Case& c : cases) {
    std::optional<RunnerRelease> latest;
    if (*c.latest) latest = RunnerRelease{c.latest, published};
    const RunnerJudgement j =
        JudgeRunnerVersion(c.version, latest, published + Duration(c.days_since_release * kDay));
    SCOPED_TRACE(std::string(c.version) + " vs " + c.latest + " after " +
                 std::to_string(c.days_since_release) + " days");
    EXPECT_EQ(j.verdict, c.verdict) << j.why;
    EXPECT_NE(j.why.find(c.why_has), std::string::npos) << j.why;
  }
}

TEST(RunnerReleaseTest, TheDeadlineIsThirtyDaysAfterANewerRelease) {
  const TimePoint published = At("2026-11-01T00:00:00Z");
  const RunnerJudgement j =
      JudgeRunnerVersion("2.336.0", RunnerRelease{"2.337.0", published}, published);
  ASSERT_TRUE(j.deadline);
  EXPECT_EQ(FormatRfc3339(*j.deadline), "2026-12-01T00:00:00Z");
  EXPECT_FALSE(
      JudgeRunnerVersion("2.337.0", RunnerRelease{"2.337.0", published}, published).deadline);
}

TEST(RunnerReleaseTest, ParsesGitHubsReleaseAndRefusesOtherBodies) {
  Result<RunnerRelease> r = ParseRunnerRelease(
      R"({"tag_name":"v2.337.0","published_at":"2026-11-20T10:00:00Z","name":"v2.337.0"})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, "2.337.0");
  EXPECT_EQ(FormatRfc3339(r->published_at), "2026-11-20T10:00:00Z");
  EXPECT_FALSE(ParseRunnerRelease(R"({"tag_name":"v2.337.0"})").ok());
  EXPECT_FALSE(
      ParseRunnerRelease(R"({"tag_name":"latest","published_at":"2026-11-20T10:00:00Z"})").ok());
  EXPECT_FALSE(ParseRunnerRelease("not json").ok());
}

TEST(RunnerReleaseTest, ComparesDottedVersions) {
  EXPECT_LT(CompareRunnerVersion("2.329.0", "2.330.0").value(), 0);
  EXPECT_EQ(CompareRunnerVersion("v2.329", "2.329.0").value(), 0);
  EXPECT_GT(CompareRunnerVersion("2.1000.0", "2.999.9").value(), 0);
  EXPECT_FALSE(CompareRunnerVersion("2..0", "2.0.0").ok());
}

}  // namespace
}  // namespace mvr::github
