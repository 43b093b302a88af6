// The scale report (scale_report.h): the latency report's world (RunMicrovm 5/s, GitHub's
// secondary limit), grown to thousands of jobs that all run at once, with the set's calls to each
// service counted and the control plane's bill worked out from them.
#include "sim/scale_report.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "base/json_text.h"
#include "sim/scenarios.h"

namespace mvr::sim {

double FunctionMemoryGib(const std::string& function) {
  return function == "launcher" ? 0.5 : 0.25;
}

void ScaleTotals::Add(uint64_t seed, const WorldReport& r) {
  ++seeds;
  jobs += r.jobs;
  completed += r.jobs_completed;
  if (!r.violations.empty() && violations++ == 0) {
    first_violation = "seed " + std::to_string(seed) + ": " + r.violations.front();
  }
  github += r.github_calls;
  microvms += r.microvms_calls;
  sqs += r.queue_calls;
  dynamodb.calls += r.store_calls.calls;
  dynamodb.read_units += r.store_calls.read_units;
  dynamodb.write_units += r.store_calls.write_units;
  for (const auto& [function, use] : r.lambda) {
    lambda[function].invocations += use.invocations;
    lambda[function].seconds += use.seconds;
  }
  starts.insert(starts.end(), r.start_seconds.begin(), r.start_seconds.end());
  for (const auto& [op, n] : r.github_operations) operations["github " + op] += n;
  for (const auto& [op, n] : r.microvms_operations) operations["microvms " + op] += n;
}

ScaleRow ScaleRowOf(int concurrent_jobs, const std::string& arrivals, const ScaleTotals& t,
                    const ControlPlaneRates& rates) {
  ScaleRow row;
  row.concurrent_jobs = concurrent_jobs;
  row.arrivals = arrivals;
  row.seeds = t.seeds;
  row.jobs = t.jobs;
  row.completed = t.completed;
  row.violations = t.violations;
  row.first_violation = t.first_violation;
  if (t.completed <= 0) return row;
  const double jobs = t.completed;
  row.github = static_cast<double>(t.github) / jobs;
  row.microvms = static_cast<double>(t.microvms) / jobs;
  row.dynamodb = static_cast<double>(t.dynamodb.calls) / jobs;
  row.sqs = static_cast<double>(t.sqs) / jobs;
  row.p50 = Percentile(t.starts, 0.5);
  row.p95 = Percentile(t.starts, 0.95);
  double lambda = 0;
  for (const auto& [function, use] : t.lambda) {
    const double seconds =
        use.seconds + static_cast<double>(use.invocations) * rates.invocation_overhead_seconds;
    lambda += seconds * FunctionMemoryGib(function) * rates.lambda_gib_second +
              static_cast<double>(use.invocations) * rates.lambda_request;
  }
  const double per_1000 = 1000.0 / jobs;
  row.lambda_usd = lambda * per_1000;
  row.dynamodb_usd = (t.dynamodb.read_units * rates.dynamodb_read_unit +
                      t.dynamodb.write_units * rates.dynamodb_write_unit) *
                     per_1000;
  row.sqs_usd = static_cast<double>(t.sqs) * rates.sqs_request * per_1000;
  return row;
}

namespace {

// Rounded for reading (the figures are model outputs, not measurements to the last digit).
double Round(double x, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(x * scale) / scale;
}

// Seconds the model takes to hand `jobs` JIT configs through GitHub's secondary limit (166 a
// minute, the binding one of the two at 5 RunMicrovm a second).
double RampSeconds(int jobs) { return jobs * 60.0 / 166.0; }

}  // namespace

nlohmann::json ScaleJson(const std::vector<ScaleRow>& rows) {
  nlohmann::json fleets = nlohmann::json::array();
  for (const ScaleRow& r : rows) {
    fleets.push_back(
        {{"concurrentJobs", r.concurrent_jobs},
         {"callsPerJob",
          {{"github", Round(r.github, 2)},
           {"microvms", Round(r.microvms, 2)},
           {"dynamodb", Round(r.dynamodb, 2)},
           {"sqs", Round(r.sqs, 2)}}},
         {"queuedToStartedSeconds", {{"p50", Round(r.p50, 1)}, {"p95", Round(r.p95, 1)}}},
         {"controlPlaneUsdPer1000Jobs", Round(r.usd_per_1000(), 4)}});
  }
  return {{"fleets", fleets}};
}

WorldOptions ScaleWorld(int concurrent_jobs, bool burst, uint64_t seed) {
  WorldOptions o;
  o.seed = seed;
  o.knobs = ConfigKnobs{};  // the figures are for the defaults
  o.jobs = concurrent_jobs;
  o.max_concurrent_vms = concurrent_jobs;
  o.launchers = 50;  // the launcher's default concurrency
  o.github_mutations_per_minute = 166;
  const double ramp = RampSeconds(concurrent_jobs);
  // Steady: evenly over the ramp (launches keep pace); a burst: all within a minute.
  o.arrivals = Duration(burst ? 60'000 : static_cast<int64_t>(ramp * 1000));
  // Every job runs past the last one's start, so all of them run at once.
  o.guest.job_min = Duration(static_cast<int64_t>((ramp + 60) * 1000 * 1.2));
  o.guest.job_max = Duration(static_cast<int64_t>((ramp + 60) * 1000 * 1.5));
  o.drain = o.guest.job_max + Duration(static_cast<int64_t>(ramp * 1000)) + Duration(900'000);
  o.trace_tail = 20;
  return o;
}

ScaleTotals ScaleCell(int concurrent_jobs, bool burst, int seeds, int threads) {
  Scenario s{burst ? "scale-burst" : "scale-steady", "",
             [&](uint64_t seed) { return ScaleWorld(concurrent_jobs, burst, seed); }};
  ScaleTotals totals;
  RunSeeds(s, 1, static_cast<uint64_t>(std::max(1, seeds)), threads, nullptr,
           [&](const SeedOutcome& o) { totals.Add(o.seed, o.report); });
  return totals;
}

namespace {

ScaleTotals Sum(const ScaleTotals& a, const ScaleTotals& b) {
  ScaleTotals t = a;
  t.seeds += b.seeds;
  t.jobs += b.jobs;
  t.completed += b.completed;
  if (t.violations == 0) t.first_violation = b.first_violation;
  t.violations += b.violations;
  t.github += b.github;
  t.microvms += b.microvms;
  t.sqs += b.sqs;
  t.dynamodb.calls += b.dynamodb.calls;
  t.dynamodb.read_units += b.dynamodb.read_units;
  t.dynamodb.write_units += b.dynamodb.write_units;
  for (const auto& [function, use] : b.lambda) {
    t.lambda[function].invocations += use.invocations;
    t.lambda[function].seconds += use.seconds;
  }
  t.starts.insert(t.starts.end(), b.starts.begin(), b.starts.end());
  for (const auto& [op, n] : b.operations) t.operations[op] += n;
  return t;
}

// Which calls make up a fleet's GitHub and MicroVMs figures: each operation's calls per completed
// job, most first (the operations under 0.01 a job left out).
void PrintBreakdown(std::FILE* out, int concurrent_jobs, const ScaleTotals& t) {
  if (t.completed <= 0) return;
  std::vector<std::pair<double, std::string>> rows;
  for (const auto& [op, n] : t.operations) {
    const double per_job = static_cast<double>(n) / t.completed;
    if (per_job >= 0.01) rows.emplace_back(per_job, op);
  }
  std::sort(rows.rbegin(), rows.rend());
  std::fprintf(out, "%d jobs at once, calls per completed job by operation:\n", concurrent_jobs);
  for (const auto& [per_job, op] : rows) std::fprintf(out, "  %8.3f  %s\n", per_job, op.c_str());
  std::fflush(out);
}

void PrintRow(const ScaleRow& r, double wall_seconds) {
  std::printf("%7d %-7s %6d %7.2f %8.2f %8.2f %6.2f %7.1f %7.1f %8.4f %8.4f %8.4f %8.4f %6.0f%s\n",
              r.concurrent_jobs, r.arrivals.c_str(), r.completed, r.github, r.microvms, r.dynamodb,
              r.sqs, r.p50, r.p95, r.lambda_usd, r.dynamodb_usd, r.sqs_usd, r.usd_per_1000(),
              wall_seconds,
              r.violations > 0 ? ("  (VIOLATED: " + r.first_violation + ")").c_str() : "");
  std::fflush(stdout);
}

}  // namespace

int PrintScaleReport(bool json, const std::vector<int>& fleets, int seeds, int threads) {
  if (!json) {
    std::printf(
        "N jobs all running at once (a burst: queued within a minute; steady: queued evenly as "
        "fast as GitHub's limit hands out JIT configs), maxConcurrentVms N, RunMicrovm at 5/s, "
        "GitHub's secondary limit at 166 mutating calls/min, %d seed(s) a row; per completed "
        "job: the set's calls to GitHub, MicroVMs, DynamoDB, SQS; queued -> started (s); the "
        "control plane's USD per 1,000 jobs (Lambda, DynamoDB, SQS, total); the row's wall "
        "time (s)\n",
        seeds);
    std::printf("%7s %-7s %6s %7s %8s %8s %6s %7s %7s %8s %8s %8s %8s %6s\n", "jobs", "arrive",
                "done", "GitHub", "MicroVMs", "DynamoDB", "SQS", "p50", "p95", "Lambda", "DynamoDB",
                "SQS", "total", "wall");
  }
  std::vector<ScaleRow> combined;
  int violations = 0;
  for (int n : fleets) {
    ScaleTotals both;
    for (bool burst : {true, false}) {
      const auto began = std::chrono::steady_clock::now();
      const ScaleTotals t = ScaleCell(n, burst, seeds, threads);
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      if (!json) PrintRow(ScaleRowOf(n, burst ? "burst" : "steady", t), wall);
      both = Sum(both, t);
    }
    combined.push_back(ScaleRowOf(n, "both", both));
    violations += both.violations;
    // With --json the breakdown goes to stderr: stdout holds the shape alone.
    PrintBreakdown(json ? stderr : stdout, n, both);
  }
  if (json) {
    std::printf("%s\n", JsonText(ScaleJson(combined), 2).c_str());
  } else {
    for (const ScaleRow& r : combined) PrintRow(r, 0);
  }
  return violations > 0 ? 1 : 0;
}

}  // namespace mvr::sim
