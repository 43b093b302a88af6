#include "testbed/latency_table.h"

#include <gtest/gtest.h>

#include <sstream>

#include <cstdio>
#include <string>

namespace mvr::testbed {
namespace {

TimePoint At(int seconds) { return TimePoint(std::chrono::seconds(seconds)); }

TEST(LatencyTableTest, PercentileIsTheNearestRankOfTheSortedValues) {
  std::vector<Duration> values;
  for (int i = 20; i >= 1; --i) values.push_back(Duration(i * 1000));
  EXPECT_EQ(Percentile(values, 0.5), Duration(11'000));
  EXPECT_EQ(Percentile(values, 0.95), Duration(19'000));
  EXPECT_EQ(Percentile({}, 0.5), Duration(0));
  EXPECT_EQ(Percentile({Duration(7)}, 0.95), Duration(7));
}

TEST(LatencyTableTest, ARunCountsOnlyForSegmentsWhoseMilestonesItReached) {
  LatencyTable table(
      {{"queued -> running", "queued", "running"}, {"running -> done", "running", "done"}},
      {"small", "large"});
  table.Add("small", {{"queued", At(0)}, {"running", At(5)}, {"done", At(9)}});
  table.Add("small", {{"queued", At(10)}, {"running", At(12)}});  // never finished
  table.Add("large", {{"queued", At(0)}, {"done", At(30)}});      // no VM milestone
  EXPECT_EQ(table.Values("queued -> running", "small"),
            (std::vector<Duration>{Duration(5000), Duration(2000)}));
  EXPECT_EQ(table.Values("running -> done", "small"), (std::vector<Duration>{Duration(4000)}));
  EXPECT_TRUE(table.Values("queued -> running", "large").empty());
}

TEST(LatencyTableTest, PrintShowsADashWhereNoRunReachedBothMilestones) {
  LatencyTable table({{"queued -> running", "queued", "running"}}, {"small", "large"});
  table.Add("small", {{"queued", At(0)}, {"running", At(3)}});
  char buffer[1024] = {};
  std::FILE* out = fmemopen(buffer, sizeof(buffer) - 1, "w");
  ASSERT_NE(out, nullptr);
  table.Print(out);
  std::fclose(out);
  std::string text(buffer);
  EXPECT_NE(text.find("small p50"), std::string::npos) << text;
  EXPECT_NE(text.find("3.0 s"), std::string::npos) << text;
  EXPECT_NE(text.find(" -"), std::string::npos) << text;
}

TEST(LatencyTableTest, PrintAlignsEveryRowWhateverTheNamesLengths) {
  LatencyTable table({{"a", "queued", "running"},
                      {"a much longer segment name than the header", "queued", "done"}},
                     {"mvr-small", "x"});
  table.Add("mvr-small", {{"queued", At(0)}, {"running", At(3)}, {"done", At(125)}});
  char buffer[2048] = {};
  std::FILE* out = fmemopen(buffer, sizeof(buffer) - 1, "w");
  ASSERT_NE(out, nullptr);
  table.Print(out);
  std::fclose(out);
  std::istringstream lines(buffer);
  std::string line;
  size_t width = 0;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    if (width == 0) width = line.size();
    EXPECT_EQ(line.size(), width) << buffer;
  }
  EXPECT_GT(width, 0u);
}

}  // namespace
}  // namespace mvr::testbed
