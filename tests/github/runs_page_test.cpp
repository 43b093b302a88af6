// ReadRunsPage: the queued-jobs listing keeps each run's id and start and skips the rest of a
// page (two repository objects and a head commit a run), checking what it keeps as strictly as
// the JSON tree it replaced.
#include "github/runs_page.h"

#include <gtest/gtest.h>

#include "base/time_format.h"

namespace mvr::github {
namespace {

TimePoint RunAt(const char* text) { return ParseRfc3339(text).value(); }

TEST(RunsPageTest, KeepsIdAndStartAndSkipsEverythingElse) {
  Result<std::vector<RunSeen>> runs = ReadRunsPage(R"({
    "total_count": 3,
    "workflow_runs": [
      {"repository": {"id": 1, "owner": {"login": "o", "id": "not an int"}, "topics": []},
       "id": 30, "created_at": "2026-01-01T00:00:00Z", "run_started_at": "2026-01-01T00:05:00Z",
       "head_commit": {"id": "abc", "message": "x \"quoted\" \u00e9"}, "pull_requests": []},
      {"id": 20, "created_at": "2026-01-01T00:01:00Z", "run_started_at": null},
      {"id": 10}
    ]})");
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  ASSERT_EQ(runs->size(), 3u);
  EXPECT_EQ((*runs)[0].id, 30);
  EXPECT_EQ((*runs)[0].started, RunAt("2026-01-01T00:05:00Z"));  // the latest attempt's start
  EXPECT_EQ((*runs)[1].id, 20);
  EXPECT_EQ((*runs)[1].started, RunAt("2026-01-01T00:01:00Z"));  // else the run's creation
  EXPECT_EQ((*runs)[2].id, 10);
  EXPECT_FALSE((*runs)[2].started.has_value());
}

TEST(RunsPageTest, AnEmptyPageHasNoRuns) {
  Result<std::vector<RunSeen>> runs = ReadRunsPage(R"({"total_count":0,"workflow_runs":[]})");
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  EXPECT_TRUE(runs->empty());
}

TEST(RunsPageTest, RefusesWhatTheListingCannotBe) {
  struct Case {
    const char* body;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {"not json", "the answer: "},
           {R"({"workflow_runs": [{"id": 1}, )", "the answer: "},
           {"[1, 2]", "expected a JSON object"},
           {R"({"total_count": 1})", "workflow_runs: missing"},
           {R"({"workflow_runs": {"id": 1}})", "workflow_runs: expected an array"},
           {R"({"workflow_runs": [7]})", "workflow_runs[0]: expected an object"},
           {R"({"workflow_runs": [{"id": 1}, {"created_at": "2026-01-01T00:00:00Z"}]})",
            "workflow_runs[1].id: missing"},
           {R"({"workflow_runs": [{"id": "12"}]})", "workflow_runs[0].id: expected an integer"},
           {R"({"workflow_runs": [{"id": 1, "created_at": "yesterday"}]})",
            "workflow_runs[0].created_at: 'yesterday' is not an RFC 3339 timestamp"},
           {R"({"workflow_runs": [{"id": 1, "run_started_at": 5}]})",
            "workflow_runs[0].run_started_at: expected a string"},
       }) {
    Result<std::vector<RunSeen>> runs = ReadRunsPage(c.body);
    ASSERT_FALSE(runs.ok()) << c.body;
    EXPECT_EQ(runs.status().code(), Code::kInvalidArgument) << c.body;
    EXPECT_NE(runs.status().message().find(c.says), std::string::npos)
        << c.body << " -> " << runs.status().message();
  }
}

}  // namespace
}  // namespace mvr::github
