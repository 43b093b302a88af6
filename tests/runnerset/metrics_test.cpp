#include "runnerset/metrics/metrics.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace mvr::runnerset {
namespace {

using nlohmann::json;

TEST(MetricsTest, ObservationsFeedTheHistogramAndTheJobsRow) {
  Metrics m;
  m.Observe("o/r#7", Milestone::kClaimed, 1'000, 1'500);
  m.Observe("o/r#7", Milestone::kVmRunning, 1'000, 4'000);
  m.Observe("o/r#8", Milestone::kClaimed, 2'000, 2'250);
  EXPECT_EQ(m.GetMilestone(Milestone::kClaimed).count, 2);
  EXPECT_DOUBLE_EQ(m.GetMilestone(Milestone::kClaimed).sum, 0.75);
  EXPECT_DOUBLE_EQ(m.GetMilestone(Milestone::kVmRunning).sum, 3.0);

  json recent = json::parse(m.RecentJobsJson());
  ASSERT_EQ(recent["jobs"].size(), 2u);
  const json& first = recent["jobs"][0];
  EXPECT_EQ(first["job"], "o/r#7");
  EXPECT_EQ(first["received_ms"], 1'000);
  EXPECT_EQ(first["claimed_ms"], 1'500);
  EXPECT_EQ(first["vm_running_ms"], 4'000);
  EXPECT_FALSE(first.contains("completed_ms"));
  EXPECT_EQ(recent["jobs"][1]["job"], "o/r#8");
}

TEST(MetricsTest, AMilestoneBeforeTheWebhookCountsAsZeroSeconds) {
  Metrics m;
  m.Observe("o/r#1", Milestone::kJobStarted, 5'000, 4'000);
  EXPECT_DOUBLE_EQ(m.GetMilestone(Milestone::kJobStarted).sum, 0.0);
}

TEST(MetricsTest, TheRecentJobsTableKeepsOnlyTheNewest) {
  Metrics m;
  const int total = static_cast<int>(Metrics::kRecentJobs) + 5;
  for (int i = 0; i < total; ++i) {
    m.Observe("o/r#" + std::to_string(i), Milestone::kClaimed, 1, 2);
  }
  json recent = json::parse(m.RecentJobsJson());
  ASSERT_EQ(recent["jobs"].size(), Metrics::kRecentJobs);
  EXPECT_EQ(recent["jobs"][0]["job"], "o/r#5");
  EXPECT_EQ(recent["jobs"].back()["job"], "o/r#" + std::to_string(total - 1));
  // The histogram still counts every observation.
  EXPECT_EQ(m.GetMilestone(Milestone::kClaimed).count, total);
}

}  // namespace
}  // namespace mvr::runnerset
