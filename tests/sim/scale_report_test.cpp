// The scale report's arithmetic and JSON (scale_report.h): per completed job, per 1,000 jobs at
// the published rates, and exactly the issue's shape.
#include "sim/scale_report.h"

#include <gtest/gtest.h>

#include "sim/sim_http.h"

namespace mvr::sim {
namespace {

ScaleTotals Totals() {
  ScaleTotals t;
  t.seeds = 2;
  t.jobs = 200;
  t.completed = 200;
  t.github = 600;
  t.microvms = 500;
  t.sqs = 1'000;
  t.dynamodb.calls = 4'000;
  t.dynamodb.read_units = 2'000;
  t.dynamodb.write_units = 3'000;
  t.lambda["launcher"] = {200, 1'990};  // 200 launches of 9.95 s
  t.lambda["webhook"] = {600, 0};
  for (int i = 1; i <= 100; ++i) t.starts.push_back(i);
  return t;
}

TEST(ScaleReportTest, DividesByCompletedJobsAndPricesPerThousand) {
  ControlPlaneRates rates;
  const ScaleRow r = ScaleRowOf(1000, "both", Totals(), rates);
  EXPECT_DOUBLE_EQ(r.github, 3);
  EXPECT_DOUBLE_EQ(r.microvms, 2.5);
  EXPECT_DOUBLE_EQ(r.dynamodb, 20);
  EXPECT_DOUBLE_EQ(r.sqs, 5);
  EXPECT_NEAR(r.p50, 50.5, 0.6);
  EXPECT_NEAR(r.p95, 95, 1.1);
  // Lambda: launcher (1,990 s + 200 x 0.05 s) x 0.5 GiB, webhook 600 x 0.05 s x 0.25 GiB, and
  // 800 requests; for 200 jobs, so x 5 per 1,000.
  const double gib_s = 2'000 * 0.5 + 30 * 0.25;
  EXPECT_NEAR(r.lambda_usd, 5 * (gib_s * rates.lambda_gib_second + 800 * rates.lambda_request),
              1e-12);
  EXPECT_NEAR(r.dynamodb_usd,
              5 * (2'000 * rates.dynamodb_read_unit + 3'000 * rates.dynamodb_write_unit), 1e-12);
  EXPECT_NEAR(r.sqs_usd, 5 * 1'000 * rates.sqs_request, 1e-12);
  EXPECT_DOUBLE_EQ(r.usd_per_1000(), r.lambda_usd + r.dynamodb_usd + r.sqs_usd);
}

TEST(ScaleReportTest, AFleetWithNoCompletedJobHasNoFigures) {
  ScaleTotals t = Totals();
  t.completed = 0;
  const ScaleRow r = ScaleRowOf(100, "burst", t);
  EXPECT_EQ(r.github, 0);
  EXPECT_EQ(r.usd_per_1000(), 0);
}

TEST(ScaleReportTest, JsonHasExactlyTheIssuesShape) {
  const nlohmann::json j = ScaleJson({ScaleRowOf(100, "both", Totals())});
  ASSERT_EQ(j.size(), 1u);
  ASSERT_TRUE(j.at("fleets").is_array());
  const nlohmann::json& f = j.at("fleets").at(0);
  EXPECT_EQ(f.size(), 4u);
  EXPECT_EQ(f.at("concurrentJobs"), 100);
  EXPECT_EQ(f.at("callsPerJob").size(), 4u);
  for (const char* k : {"github", "microvms", "dynamodb", "sqs"}) {
    EXPECT_TRUE(f.at("callsPerJob").at(k).is_number()) << k;
  }
  EXPECT_EQ(f.at("callsPerJob").at("github"), 3);
  EXPECT_EQ(f.at("queuedToStartedSeconds").size(), 2u);
  EXPECT_TRUE(f.at("queuedToStartedSeconds").at("p95").is_number());
  EXPECT_TRUE(f.at("controlPlaneUsdPer1000Jobs").is_number());
}

TEST(ScaleReportTest, EveryJobOfAFleetRunsAtOnce) {
  for (int n : {100, 1000, 5000}) {
    for (bool burst : {true, false}) {
      const WorldOptions o = ScaleWorld(n, burst, 1);
      EXPECT_EQ(o.max_concurrent_vms, n);
      // The last job is queued by the end of the arrivals and launched within GitHub's limit's
      // ramp (n JIT configs at 166 a minute); the first still runs then.
      const double ramp_ms = n * 60'000.0 / 166.0;
      EXPECT_GT(static_cast<double>(o.guest.job_min.count()),
                std::max(static_cast<double>(o.arrivals.count()), ramp_ms));
    }
  }
}

// The breakdown's names: one for every call of an operation, whatever its ids.
TEST(ScaleReportTest, AnOperationIsNamedWithoutItsIds) {
  http::HttpRequest a;
  a.method = "GET";
  a.url = "http://github.sim/repos/octo/repo-2/actions/jobs/10000005?x=1";
  http::HttpRequest b = a;
  b.url = "http://github.sim/repos/octo/repo-3/actions/jobs/7";
  EXPECT_EQ(OperationOf(a), "GET /repos/octo/{}/actions/jobs/{}");
  EXPECT_EQ(OperationOf(a), OperationOf(b));
  http::HttpRequest list;
  list.method = "GET";
  list.url = "http://microvms.sim/2025-09-09/microvms?imageArn=arn%3Aaws";
  EXPECT_EQ(OperationOf(list), "GET /{}/microvms");
}

}  // namespace
}  // namespace mvr::sim
